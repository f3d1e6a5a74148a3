export * from './types.ts';
export { computeCredit } from './computeCredit.ts';
export { creditGraphOf } from './fromGraph.ts';
