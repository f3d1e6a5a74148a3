/** Every corpus entry, by area (see types.ts for how an entry is run and judged). */
import { API } from './api.ts';
import { CLI_ENTRIES } from './cli.ts';
import { GGUFS } from './gguf.ts';
import { API_30, GGUFS_30, LOGS_30, MODEL_30, OTLP_30, WORKFLOWS_30 } from './hardening30.ts';
import type { CorpusEntry } from './types.ts';
import { WORKFLOWS } from './workflows.ts';

export const CORPUS: CorpusEntry[] = [...WORKFLOWS, ...CLI_ENTRIES, ...GGUFS, ...API, ...WORKFLOWS_30, ...OTLP_30, ...LOGS_30, ...GGUFS_30, ...API_30, ...MODEL_30];
export { LIMIT_MS, runEntry, seedDatabase, snapshot, spawnEntry, type Outcome, type Served } from './runner.ts';
export type { CorpusEntry } from './types.ts';
