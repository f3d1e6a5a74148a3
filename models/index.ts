export * from './llama/index.ts';
