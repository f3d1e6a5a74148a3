/**
 * The lab API's study jobs (types and the event check only, no zod, so the preload and the
 * renderer can use them): `startStudy` takes the options of `flowlab study <plan.yaml>`
 * (cli/commands/study.ts) as data, the plan as one of the shipped plans (`planName`, a file of
 * `examples/studies/`, listed by `listStudyPlans`) or as pasted text (`planText`, its relative
 * paths resolved against `examples/studies/`); the host maps it onto the same study service the
 * CLI runs (core/studies `runStudy`, `calibrateStudy`, host/studyJobs.ts) with the CLI's defaults.
 * A job's progress arrives as `StudyJobEvent`s, a part of `LabEvent`; its cells are the
 * experiments the CLI writes, read back by `getStudy`. The payloads' zod schemas are in contract.ts.
 */

/** `startStudy`: `flowlab study <plan> [options]` as data. Exactly one of `planName` and `planText`. */
export interface StartStudyRequest {
  /** A shipped plan's file name in `examples/studies/`, e.g. `laptop.yaml`. */
  planName?: string;
  /** A plan's YAML text (docs/studies.md); relative paths resolve against `examples/studies/`. */
  planText?: string;
  /** `--dry-run`: calibrate and estimate; run nothing. Default false. */
  dryRun?: boolean;
  /** `--model`: every plan model's file replaced by this absolute GGUF path. */
  model?: string;
  /** `--threads`, 1..256: every plan model's threads. */
  threads?: number;
  /** `--budget-tokens`, >= 1: stop cleanly once this many tokens were spent (resumable). */
  budgetTokens?: number;
  /** `--budget-minutes`, > 0: stop cleanly after this many minutes (resumable). */
  budgetMinutes?: number;
  /** `--calibration-tasks`, 1..64: tasks per workflow and model in the dry run. Default 6. */
  calibrationTasks?: number;
}

/** `cancelStudy`'s payload: the study's id. */
export interface CancelStudyPayload {
  studyId: string;
}

/** A shipped plan (`listStudyPlans`). */
export interface StudyPlanFile {
  /** Its file name in `examples/studies/`. */
  name: string;
  text: string;
}

/** A dry run's estimate of what is left (core/studies `StudyEstimate.total`); seconds are wall seconds. */
export interface StudyJobEstimate {
  cells: number;
  units: number;
  runs: number;
  calls: number;
  tokens: number;
  seconds: number;
}

/** How a study job ended or stands: `stopped` = a budget ran out (resumable). */
export type StudyJobStatus = 'running' | 'completed' | 'stopped' | 'cancelled' | 'failed';
const STATUSES: readonly string[] = ['running', 'completed', 'stopped', 'cancelled', 'failed'];

/**
 * A study job's progress, ordered per study. `studyJob` opens (`running`) and closes each job
 * (with `estimate` when a dry run completed, `message` when it failed or stopped);
 * `studyProgress` is one line of what the CLI prints on stderr (and one per stored run), with the
 * study's cells finished (`done`) of its cells (`total`) where it has them.
 */
export type StudyJobEvent =
  | { type: 'studyJob'; studyId: string; dryRun: boolean; status: StudyJobStatus; message?: string; estimate?: StudyJobEstimate }
  | { type: 'studyProgress'; studyId: string; line: string; done?: number; total?: number };

/** The study-job methods of `FlowlabApi` (answered by the host: they load models). */
export interface StudyJobApiAdditions {
  /** The shipped plans, by file name. */
  listStudyPlans(payload?: Record<string, never>): Promise<StudyPlanFile[]>;
  /** Starts the study (or its dry run) in the background; resolves with its id once it runs. */
  startStudy(payload: StartStudyRequest): Promise<{ studyId: string }>;
  /** Stops a study at its next step (what is stored stays; starting it again resumes). */
  cancelStudy(payload: CancelStudyPayload): Promise<{ cancelled: boolean }>;
}

/** What a host implements of them (optional: hosts without them answer UNAVAILABLE). */
export interface StudyJobHost {
  listStudyPlans?(): Awaitable<StudyPlanFile[]>;
  startStudy?(payload: StartStudyRequest): Awaitable<{ studyId: string }>;
  cancelStudy?(payload: CancelStudyPayload): Awaitable<{ cancelled: boolean }>;
}
type Awaitable<T> = T | Promise<T>;

const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** Whether `value` is a well-formed `StudyJobEvent` (field by field, without zod). */
export function isStudyJobEvent(value: unknown): value is StudyJobEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const str = (v: unknown, max = 400) => typeof v === 'string' && v.length > 0 && v.length <= max;
  const optCount = (v: unknown) => v === undefined || (Number.isInteger(v) && (v as number) >= 0);
  if (!str(e['studyId'])) return false;
  if (e['type'] === 'studyJob') {
    const est = e['estimate'] as Record<string, unknown> | undefined;
    const estOk = est === undefined || (est !== null && typeof est === 'object' && ['cells', 'units', 'runs', 'calls', 'tokens', 'seconds'].every((k) => num(est[k])));
    return typeof e['dryRun'] === 'boolean' && STATUSES.includes(e['status'] as string) && (e['message'] === undefined || typeof e['message'] === 'string') && estOk;
  }
  if (e['type'] === 'studyProgress') return str(e['line'], 2000) && optCount(e['done']) && optCount(e['total']);
  return false;
}
