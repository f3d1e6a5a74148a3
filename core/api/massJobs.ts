/**
 * The lab API's MASS jobs (types and the event check only, no zod, so the preload and the
 * renderer can use them): `startEvolve`, `startRank` and `startRsi` take the options of
 * `flowlab evolve`, `flowlab rank` and `flowlab rsi` (cli/commands/evolve.ts, rank.ts, rsi.ts)
 * as data, every one optional with the CLI's default but the dataset and the model; the host
 * maps them onto the same services (core/mass `evolve`, `startRank`, `startRsi`,
 * host/massJobs.ts). A job's progress arrives as `MassJobEvent`s, a part of `LabEvent`; its
 * records are the ones the CLI writes, read back by `getEvolution` / `getOuterLoop`. The payloads'
 * zod schemas are in contract.ts.
 */

/** The three MASS jobs. */
export type MassJobKind = 'evolve' | 'rank' | 'rsi';
export const MASS_JOB_KINDS: readonly MassJobKind[] = ['evolve', 'rank', 'rsi'];

/** `startEvolve`: `flowlab evolve <dataset> --model <file> [options]` as data. */
export interface StartEvolveRequest {
  /** The MASS task family, e.g. `learn-tool`. */
  dataset: string;
  /** `--model`: the absolute GGUF path (solver, judge and optimizer). */
  model: string;
  /** `--split`. Default `train`. */
  split?: string;
  /** `--limit`: tasks, each evolved on its own, 1..100. Default 1. */
  limit?: number;
  /** `--offset`. Default 0. */
  offset?: number;
  /** `--iterations`, 1..100. Default 11. */
  iterations?: number;
  /** `--rule`. Default `baseline`. */
  rule?: 'baseline' | 'direct';
  /** `--seed`. Default 1. */
  seed?: number;
  /** `--id`: the evolution id (an existing one resumes). Default `evo-<dataset>-<seed>-<rule>-<model file name>` (core/mass `defaultEvolutionId`). */
  id?: string;
  /** `--threads`, 1..256. Default 1. */
  threads?: number;
  /** `--context-size`, 256..131072. Default 2048. */
  contextSize?: number;
  /** `--parallel`: tasks evolved at once, 1..1024 (each task's iterations stay in order). Default 1 (a local file); not stored. */
  parallel?: number;
  /** `--optimizer`: `edit` (one edit from the family's menu, under a grammar; the default where the family has one: learn-design) or `free`. */
  optimizer?: 'edit' | 'free';
  /** `--judge`: `self` (the same model), `pair` (the same model reading the family's own pairwise prompt: learn-design, learn-unit) or `verifier` (the family's grader, a control). Default `self`. */
  judge?: 'self' | 'pair' | 'verifier';
  /** `--proposer`: `model`, or `random` (SIMULATED: uniform over the valid new edits). Default `model`. */
  proposer?: 'model' | 'random';
  /** `--select-tasks`, 1..32: training tasks each version runs on before it is compared. Default core/mass `SELECT_TASKS_DEFAULT` (a resumed id keeps its own). */
  selectTasks?: number;
  /** `--audit-swaps`, 0..100: verdicts per task judged again with A and B swapped. Default 6 (a resumed id keeps its own). */
  auditSwaps?: number;
  /** `--heldout`, 1..10000: after the loop, version 0 against each champion on the first n tasks of `heldoutSplit`. Default none. */
  heldout?: number;
  /** `--heldout-split`. Default `heldout`. */
  heldoutSplit?: string;
}

/** `startRank`: `flowlab rank --model <file> [options]` as data (also the outer-loop part of `startRsi`). */
export interface StartRankRequest {
  dataset: string;
  model: string;
  /** `--tasks`: training tasks, 1..1000. Default 4. */
  tasks?: number;
  /** `--runs` per task, 2..200. Default 18. */
  runs?: number;
  /** `--neighbours`, 1..50. Default 3. */
  neighbours?: number;
  /** `--bt-iterations`, 1..100000. Default 500. */
  btIterations?: number;
  /** `--top-k`, 1..200. Default 15. */
  topK?: number;
  /** `--validation`, 0..200. Default 1. */
  validation?: number;
  /** `--verifier-min`, 0..1. Default 1. */
  verifierMin?: number;
  /** `--temperature`, (0, 5]. Default 1. */
  temperature?: number;
  /** `--champions`: each task's champion from this stored evolution. Default: the bare task. */
  champions?: string;
  /** `--simulate-tamperer`. Default off. */
  simulateTamperer?: 'expectation' | 'environment';
  /** `--tamper-share`, (0, 1]. Default 0.5. */
  tamperShare?: number;
  /** `--max-quarantined`, 0..1. Default 0.25. */
  maxQuarantined?: number;
  /** `--min-agreement`, 0..1. Default 0 (off). */
  minAgreement?: number;
  /** `--seed`. Default 0. */
  seed?: number;
  /** `--loop-id` (an existing one resumes). Default `rank-<time>` / `rsi-<time>`. */
  loopId?: string;
  threads?: number;
  /** `--context-size`, 64..131072. Default 1024. */
  contextSize?: number;
  /** `--parallel`: runs and judge calls in flight, 1..1024. Default 1 (a local file); not stored: the records do not depend on it. */
  parallel?: number;
}

/** `startRsi`: `flowlab rsi --model <file> [options]` as data. */
export interface StartRsiRequest extends StartRankRequest {
  /** `--cycles`, 1..100. Default 2. */
  cycles?: number;
  /** `--heldout`, 1..10000. Default 48. */
  heldout?: number;
  /** `--heldout-samples`, 1..64. Default 1. */
  heldoutSamples?: number;
  /** `--heldout-temperature`, 0..5. Default 0 (greedy). */
  heldoutTemperature?: number;
  /** `--sft-passes`, 1..100. Default 4. */
  sftPasses?: number;
  /** `--sft-lr`, (0, 1). Default 1e-3. */
  sftLr?: number;
  /** `--sft-batch`, 1..4096. Default 32. */
  sftBatch?: number;
  /** `--arms`. Default both. */
  arms?: Array<'self' | 'verifier'>;
}

/** `cancelMass`'s payload: the job's id (the evolution or loop id). */
export interface CancelMassPayload {
  jobId: string;
}

/**
 * A MASS job's progress, ordered per job. `massJob` opens (`running`) and closes (`completed`,
 * `cancelled`, `failed` with `message`) each job; `massProgress` is one line of what the CLI
 * prints on stderr as it goes, with the step's count (`done` of `total`) where it has one.
 */
export type MassJobEvent =
  | { type: 'massJob'; jobId: string; job: MassJobKind; status: 'running' | 'completed' | 'cancelled' | 'failed'; message?: string }
  | { type: 'massProgress'; jobId: string; job: MassJobKind; line: string; done?: number; total?: number };

/** The MASS methods of `FlowlabApi` (answered by the host: they load models). */
export interface MassJobApiAdditions {
  /** Starts an inner loop in the background; resolves with its evolution id once it runs. */
  startEvolve(payload: StartEvolveRequest): Promise<{ jobId: string }>;
  /** Starts an outer loop (no training) in the background; resolves with its loop id. */
  startRank(payload: StartRankRequest): Promise<{ jobId: string }>;
  /** Starts whole cycles in the background; resolves with its loop id. */
  startRsi(payload: StartRsiRequest): Promise<{ jobId: string }>;
  /** Stops a job at its next step (what is stored stays; starting it again resumes). */
  cancelMass(payload: CancelMassPayload): Promise<{ cancelled: boolean }>;
}

/** What a host implements of them (optional: hosts without them answer UNAVAILABLE). */
export interface MassJobHost {
  startEvolve?(payload: StartEvolveRequest): Awaitable<{ jobId: string }>;
  startRank?(payload: StartRankRequest): Awaitable<{ jobId: string }>;
  startRsi?(payload: StartRsiRequest): Awaitable<{ jobId: string }>;
  cancelMass?(payload: CancelMassPayload): Awaitable<{ cancelled: boolean }>;
}
type Awaitable<T> = T | Promise<T>;

const STATUSES: readonly string[] = ['running', 'completed', 'cancelled', 'failed'];

/** Whether `value` is a well-formed `MassJobEvent` (field by field, without zod). */
export function isMassJobEvent(value: unknown): value is MassJobEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const str = (v: unknown, max = 400) => typeof v === 'string' && v.length > 0 && v.length <= max;
  const optCount = (v: unknown) => v === undefined || (Number.isInteger(v) && (v as number) >= 0);
  if (!str(e['jobId']) || !(MASS_JOB_KINDS as readonly unknown[]).includes(e['job'])) return false;
  if (e['type'] === 'massJob') return STATUSES.includes(e['status'] as string) && (e['message'] === undefined || typeof e['message'] === 'string');
  if (e['type'] === 'massProgress') return str(e['line'], 2000) && optCount(e['done']) && optCount(e['total']);
  return false;
}
