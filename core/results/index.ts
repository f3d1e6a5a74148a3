/** Scored results of runs (record.ts: `RunRecord`). */
export type { RunRecord } from './record.ts';
