/**
 * The lab's API for examples, datasets, models, runs and train loops: the contract the host side (core/api handlers, host/,
 * `flowlab serve`, Electron main + utility process) and the renderer both code against.
 * Plain, structured-clone-safe data. The methods are in the allowlist (`LAB_METHODS` in
 * channels.ts), their zod payload schemas in contract.ts (`payloadSchemas`), and `createHandlers`
 * delegates them to a `LabHost` after validating. Imports only types, so the preload and the
 * renderer can use `isLabEvent`.
 */
import type { FailureClass, NodeStatus } from '../trace/index.ts';
import { isTrainLoopEvent, type CancelTrainLoopPayload, type StartTrainLoopRequest, type TrainLoopEvent } from './trainLoop.ts';
import { isStoredEvent, type StoredEvent } from './storeEvents.ts';
import type { ReadWorkflowFilePayload, SaveWorkflowFilePayload, WorkflowFileInfo, WorkflowFileList, WorkflowFileText } from './workflowFiles.ts';
import { isMassJobEvent, type MassJobEvent, type MassJobHost } from './massJobs.ts';
import { isDownloadEvent, type DownloadEvent, type DownloadHost } from './downloads.ts';
import type { ForkHost } from './fork.ts';
import { isStudyJobEvent, type StudyJobEvent, type StudyJobHost } from './studyJobs.ts';
import type { DistillCardRequest } from './loop.ts';
import type { LibraryCard } from './improve.ts';

export { isStoredEvent, STORED_AREAS, type StoredArea, type StoredEvent } from './storeEvents.ts';
export { isTrainLoopEvent, type CancelTrainLoopPayload, type StartTrainLoopRequest, type TrainLoopEvent, type TrainRoleMetrics } from './trainLoop.ts';

/** A workflow shipped in examples/ (read-only; the editor opens a copy). */
export interface ExampleWorkflow {
  /** e.g. `examples/gsm8k-team.yaml` */
  file: string;
  name: string;
  text: string;
}

export interface DatasetInfo {
  name: string;
  splits: string[];
  describe: string;
  /** False when its files are not found (the message says where it looked). */
  available: boolean;
  message?: string;
  /** When not available and fetchable: how a user gets it (core/tasks/downloads.ts). */
  get?: DatasetGet;
}

/** How to get a dataset's files: the command, the data folder they go to, bytes, licence and source. */
export interface DatasetGet {
  command: string;
  folder: string;
  bytes: number;
  licence: string;
  source: string;
}

/** The GGUF header fields the model catalogue shows (a subset of `GgufInfo` from models/llama). */
export interface ModelHeader {
  architecture: string;
  name?: string;
  parameters?: number;
  fileType: string;
  contextLength?: number;
  hasChatTemplate: boolean;
}

/** A GGUF file known to the lab: in the model folder, or added by path. */
export interface ModelEntry {
  /** Absolute path of the file. */
  path: string;
  /** Its base name, e.g. `stories260K.gguf`. */
  fileName: string;
  /** File size in bytes (0 when the file is gone). */
  sizeBytes: number;
  /** Where it came from. */
  source: 'folder' | 'added';
  /** Header metadata (read without loading the model); absent with `error` when unreadable. */
  info?: ModelHeader;
  error?: string;
  /** Set when local models cannot run on this machine (the llama.cpp binary is missing or does not load): why, where it was looked for, and the fix. */
  unavailable?: string;
}

/** What the user picked in the Run view. Models: `default` and/or per-role GGUF paths. */
export interface StartRunRequest {
  /** The workflow document (YAML) as edited; validated before anything starts. */
  workflowText: string;
  dataset: string;
  split: string;
  /** Tasks to run, 1..10000 (fewer when the split is shorter). */
  limit: number;
  /** Tasks to skip from the start of the split. Default 0. */
  offset?: number;
  /** Experiment seed, 0..2^31-1; each run's seed derives from it and the task index. */
  seed: number;
  /** Absolute GGUF paths: `default` for roles on the `default` reference, `roles[name]` per role. */
  models: { default?: string; roles?: Record<string, string> };
  /** SIMULATED faults, `role=kind@rate` as in `flowlab blame-eval`; the experiment is marked simulated. */
  inject?: string[];
  /** CPU threads per model, 1..256. Default: 1 for files under 64 MB, else half the cores. */
  threads?: number;
  /** Context tokens per model, 256..131072 (`--context-size`). Default: the provider's (1024). */
  contextSize?: number;
  /** LoRA adapters (absolute GGUF paths, scale default 1) on top of a role's model (`--role-lora`); the role gets its own context. */
  roleLora?: Record<string, Array<{ path: string; scale?: number }>>;
  /** A trained weight version as a role's model file (`--role-version`): role -> version id. */
  roleVersions?: Record<string, string>;
  /** Hint cards injected into their roles' prompts (`--cards`): `all`, `none` (default) or card ids. */
  cards?: 'all' | 'none' | string[];
  /** Hint tokens per role and prompt (`--card-budget`), default 256. */
  cardBudget?: number;
  /** Online meta-distillation after every k tasks (`--distill-every`); absent: off. */
  distillEvery?: number;
  /** Exemplars per online card (`--distill-shots`), default 5. */
  distillShots?: number;
  /** Roles given online cards (`--distill-roles`), default every role running an agent node. */
  distillRoles?: string[];
  /** Let online cards learn from failed runs too (`--distill-with-failures`). */
  distillWithFailures?: boolean;
  /**
   * `run` (default; `blame-eval` when `inject` is given) or `rollouts` (`flowlab rollouts`): G
   * on-policy rollouts per task with `group`, `temperature` (default 0.8), `mode` (default
   * multi-agent) and `recordTokens`.
   */
  kind?: 'run' | 'rollouts';
  group?: number;
  temperature?: number;
  mode?: string;
  recordTokens?: boolean;
  /** Injected runs of a blame evaluation (`--runs`; tasks are cycled). Default: `limit`. */
  runs?: number;
  /** Tasks in flight (`--parallel`, 1..1024; core/schedule). Default: the models' (the sum of the endpoints' concurrency, 1 for a local file). */
  parallel?: number;
}

export interface ActiveRun {
  experimentId: string;
  /** Runs stored so far. */
  done: number;
  /** Planned tasks. */
  total: number;
  /** When this host started it, epoch ms. */
  startedAt: number;
}

export interface TestGeneration {
  /** The completion (greedy, seed 0). */
  text: string;
  /** Tokens, counted by the model's own tokenizer. */
  promptTokens: number;
  completionTokens: number;
  /** Generation wall time in milliseconds (loading the model not included). */
  ms: number;
}

/**
 * Pushed from the host while experiments run (Electron: the `flowlab:event` IPC channel; browser
 * host: Server-Sent Events on `/api/events`). Ordered per experiment; a train loop's events
 * (`TrainLoopEvent`, trainLoop.ts) carry its `loopId` instead and are ordered per loop; `stored`
 * (`StoredEvent`, storeEvents.ts) says which areas of the store changed, whoever wrote them.
 */
export type LabEvent =
  | { type: 'experiment'; experimentId: string; status: 'running' | 'completed' | 'cancelled' | 'failed'; done: number; total: number; message?: string }
  | { type: 'node'; experimentId: string; runId: string; nodeId: string; attempt: number; phase: 'started' | 'finished'; status?: NodeStatus; failureClass?: FailureClass; simulated?: boolean }
  | { type: 'run'; experimentId: string; runId: string; taskIndex: number; done: number; total: number; status: 'completed' | 'failed' | 'cancelled'; correct: boolean }
  | TrainLoopEvent
  | StoredEvent
  | MassJobEvent
  | DownloadEvent
  | StudyJobEvent;

/** The events of experiments (those with an `experimentId` subject): every LabEvent but a train loop's, the store's, a MASS job's, a download's and a study job's. */
export type ExperimentLabEvent = Exclude<LabEvent, TrainLoopEvent | StoredEvent | MassJobEvent | DownloadEvent | StudyJobEvent>;

/** Whether `e` is an experiment's event (not a train loop's). */
export function isExperimentLabEvent(e: LabEvent): e is ExperimentLabEvent {
  return e.type === 'experiment' || e.type === 'node' || e.type === 'run';
}

/** `addModel`'s payload: an absolute path to a `.gguf` file. */
export interface AddModelPayload {
  path: string;
}

/** `testModel`'s payload. `maxTokens`: completion tokens, 1..256, default 24. `prompt`: 1..4000 characters. */
export interface TestModelPayload {
  path: string;
  prompt: string;
  maxTokens?: number;
}

/**
 * `resumeRun`'s payload (`flowlab resume`): the experiment, moved model files given again
 * (absolute paths; they must be the same files), and `force` to take over an experiment marked
 * running by a live pid. A train loop's id, or the id of one of its experiments, resumes the
 * train loop (the result's `loopId`; `pending` counts its iterations left).
 */
export interface ResumeRunPayload {
  experimentId: string;
  models?: { default?: string; roles?: Record<string, string> };
  force?: boolean;
}

/**
 * `resumeRun`'s result: the id resumed and its tasks left (0: nothing to do, nothing started);
 * for a train loop, `loopId` and its iterations left, its progress as `TrainLoopEvent`s.
 */
export interface ResumeRunResult {
  experimentId: string;
  pending: number;
  loopId?: string;
}

/** `cancelRun`'s payload. */
export interface CancelRunPayload {
  experimentId: string;
}

/** Payload of the methods that take none: nothing, or an empty object. */
export type NoPayload = Record<string, never> | undefined;

/**
 * The new API methods (payload -> result). Errors as in FlowlabApi (ApiError codes), plus
 * `BUSY` from `startRun` when a chosen model file is in use by another running experiment.
 *
 * Changed from the first draft: every method returns a Promise (in Electron they all cross to
 * the utility process; over HTTP every call is asynchronous anyway). The renderer's
 * `FlowlabClient` is unchanged by this: it always returned Promises.
 */
export interface LabApiAdditions {
  /** The workflows of `examples/*.yaml`, sorted by file name. */
  listExamples(payload?: NoPayload): Promise<ExampleWorkflow[]>;
  /** Every dataset the registry knows, with whether its files are present. */
  listDatasets(payload?: NoPayload): Promise<DatasetInfo[]>;
  /** GGUF files of the model folder, then those added by path (header metadata, or `error`). */
  listModels(payload?: NoPayload): Promise<ModelEntry[]>;
  /**
   * Adds a GGUF by absolute path (checked: exists, GGUF header readable) and remembers it.
   * Errors: `BAD_REQUEST` naming the file when it is missing or not a valid GGUF.
   */
  addModel(payload: AddModelPayload): Promise<ModelEntry>;
  /** One short greedy generation with a model (maxTokens default 24, at most 256). Errors: `BAD_REQUEST` (bad file). */
  testModel(payload: TestModelPayload): Promise<TestGeneration>;
  /**
   * Validates, creates the experiment and starts it in the background; progress arrives as
   * `LabEvent`s (which may arrive before this call's answer). Errors: `BAD_REQUEST` (invalid
   * workflow: every located issue in the message; unknown dataset, split, role or fault spec;
   * missing or invalid model file, named), `UNAVAILABLE` (dataset files absent), `BUSY`.
   */
  startRun(payload: StartRunRequest): Promise<{ experimentId: string }>;
  /**
   * Cancels a running experiment: the run in flight is dropped, the experiment is marked
   * `cancelled` and can be resumed (`flowlab resume <id>`). `cancelled: false` when it is not
   * running in this host. Errors: `NOT_FOUND` (no such experiment).
   */
  cancelRun(payload: CancelRunPayload): Promise<{ cancelled: boolean }>;
  /**
   * Finishes an interrupted, cancelled or halted experiment in the background, as `flowlab
   * resume` does: only its pending tasks, with the same workflow, models (checked against their
   * fingerprints), seeds, faults and hint cards. Progress arrives as `LabEvent`s; `pending` is
   * the number of tasks left (0: nothing to do, nothing started). Errors: `NOT_FOUND`,
   * `BAD_REQUEST` (a model file missing or changed, a card gone, a running experiment without
   * `force`), `BUSY`.
   */
  resumeRun(payload: ResumeRunPayload): Promise<ResumeRunResult>;
  /** Experiments running in this host now, oldest first. */
  activeRuns(payload?: NoPayload): Promise<ActiveRun[]>;
  /**
   * Starts `flowlab train-loop` in the background with the same options (StartTrainLoopRequest,
   * trainLoop.ts) through the same service; resolves with the loop's id once its models are
   * checked. Progress arrives as `TrainLoopEvent`s (`trainLoop` running ... completed). Errors:
   * `BAD_REQUEST` naming the field (invalid workflow, unknown dataset, split, role or weight
   * version, a role without a model, a missing or invalid model file), `UNAVAILABLE` (dataset
   * files absent, no trainer), `BUSY` (a model file in use).
   */
  startTrainLoop(payload: StartTrainLoopRequest): Promise<{ loopId: string }>;
  /**
   * Stops a train loop after the iteration in flight (the versions written so far stay
   * recorded); resolves once it has stopped. `cancelled: false` when it is not running here.
   */
  cancelTrainLoop(payload: CancelTrainLoopPayload): Promise<{ cancelled: boolean }>;
}

/** A value or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

/**
 * What a host provides for the lab methods (implemented in host/ by `createLabHost`, and in
 * Electron main by the relay to the utility process). Payloads arrive validated by
 * `createHandlers`. Implementations throw `ApiError` (with method and field) for what the user
 * can fix; anything else is mapped by `toApiError`.
 */
export interface LabHost extends MassJobHost, DownloadHost, StudyJobHost, ForkHost {
  listExamples(): Awaitable<ExampleWorkflow[]>;
  listDatasets(): Awaitable<DatasetInfo[]>;
  listModels(): Awaitable<ModelEntry[]>;
  addModel(payload: AddModelPayload): Awaitable<ModelEntry>;
  testModel(payload: TestModelPayload): Awaitable<TestGeneration>;
  startRun(payload: StartRunRequest): Awaitable<{ experimentId: string }>;
  cancelRun(payload: CancelRunPayload): Awaitable<{ cancelled: boolean }>;
  /** Optional: hosts without it answer `resumeRun` with UNAVAILABLE. */
  resumeRun?(payload: ResumeRunPayload): Awaitable<ResumeRunResult>;
  activeRuns(): Awaitable<ActiveRun[]>;
  /** Optional: hosts without it answer `startTrainLoop` / `cancelTrainLoop` with UNAVAILABLE. */
  startTrainLoop?(payload: StartTrainLoopRequest): Awaitable<{ loopId: string }>;
  cancelTrainLoop?(payload: CancelTrainLoopPayload): Awaitable<{ cancelled: boolean }>;
  /** Optional: hosts without them answer the workflow-file methods (workflowFiles.ts) with UNAVAILABLE. */
  listWorkflowFiles?(): Awaitable<WorkflowFileList>;
  readWorkflowFile?(payload: ReadWorkflowFilePayload): Awaitable<WorkflowFileText>;
  saveWorkflowFile?(payload: SaveWorkflowFilePayload): Awaitable<WorkflowFileInfo>;
  /** Optional: hosts without it answer `distillCard` with UNAVAILABLE (loop.ts). */
  distillCard?(payload: DistillCardRequest): Awaitable<LibraryCard>;
}

/** Client-side subscription to pushed events; returns an unsubscribe function. */
export type Subscribe = (listener: (event: LabEvent) => void) => () => void;

const NODE_STATUSES: readonly string[] = ['ok', 'failed', 'cascade', 'skipped'];
const FAILURE_CLASSES: readonly string[] = ['wiring', 'execution', 'cascade', 'infrastructure'];

/**
 * Whether `value` is a well-formed `LabEvent` (checked field by field, without zod, so the
 * sandboxed preload and the renderer can use it on what arrives over IPC or SSE).
 */
export function isLabEvent(value: unknown): value is LabEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  if (typeof e['type'] === 'string' && e['type'].startsWith('train')) return isTrainLoopEvent(value);
  if (e['type'] === 'stored') return isStoredEvent(value);
  if (typeof e['type'] === 'string' && e['type'].startsWith('mass')) return isMassJobEvent(value);
  if (typeof e['type'] === 'string' && e['type'].startsWith('download')) return isDownloadEvent(value);
  if (e['type'] === 'studyJob' || e['type'] === 'studyProgress') return isStudyJobEvent(value);
  const str = (k: string) => typeof e[k] === 'string' && (e[k] as string).length <= 400;
  const count = (k: string) => Number.isInteger(e[k]) && (e[k] as number) >= 0;
  const optional = (k: string, ok: (v: unknown) => boolean) => e[k] === undefined || ok(e[k]);
  if (!str('experimentId')) return false;
  switch (e['type']) {
    case 'experiment':
      return (
        ['running', 'completed', 'cancelled', 'failed'].includes(e['status'] as string) &&
        count('done') && count('total') && optional('message', (v) => typeof v === 'string')
      );
    case 'node':
      return (
        str('runId') && str('nodeId') && count('attempt') && (e['phase'] === 'started' || e['phase'] === 'finished') &&
        optional('status', (v) => NODE_STATUSES.includes(v as string)) &&
        optional('failureClass', (v) => FAILURE_CLASSES.includes(v as string)) &&
        optional('simulated', (v) => typeof v === 'boolean')
      );
    case 'run':
      return (
        str('runId') && count('taskIndex') && count('done') && count('total') &&
        ['completed', 'failed', 'cancelled'].includes(e['status'] as string) && typeof e['correct'] === 'boolean'
      );
    default:
      return false;
  }
}
