export * from './provider.ts';
export * from './errors.ts';
export { ScriptedProvider, type Script } from './scripted.ts';
