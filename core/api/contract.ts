/**
 * The ONE typed API that both hosts expose: the Electron preload and, later, the
 * browser host of `flowlab serve`. Each method has a zod schema for its payload (validated by
 * `createHandlers` before use, since payloads arrive from an untrusted renderer) and a result
 * type. Results are plain, structured-clone-safe data.
 */
import * as z from 'zod';
import type { ExperimentSummary as StoreExperimentSummary } from '../store/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import type { EdgeType, NodeKind, SpecIssue } from '../workflow/index.ts';
import type { ApiMethod } from './channels.ts';
import type { ImproveApiAdditions } from './improve.ts';
import type { LabApiAdditions, Subscribe } from './lab.ts';
import type { LearningApiAdditions } from './learning.ts';

/** Longest id accepted in a payload. */
export const MAX_ID_LENGTH = 200;
/** Largest workflow document `validateWorkflow` accepts, in characters (1 MiB). */
export const MAX_WORKFLOW_CHARS = 1 << 20;

const Id = z.string().min(1, 'must not be empty').max(MAX_ID_LENGTH, `must be at most ${MAX_ID_LENGTH} characters`);
/** Methods without a payload accept `undefined` or `{}` (nothing else). */
const NoPayload = z.strictObject({}).optional();

/** Longest file path accepted in a payload, in characters. */
export const MAX_PATH_LENGTH = 4096;
/** Longest `testModel` prompt, in characters. */
export const MAX_PROMPT_CHARS = 4000;
/** Most tasks one `startRun` may plan. */
export const MAX_RUN_LIMIT = 10_000;
/** Most `inject` fault specs in one `startRun`. */
export const MAX_INJECT = 32;
/** Most hint cards one `startRun` may name. */
export const MAX_CARDS = 1000;
/** Most per-role model choices in one `startRun`. */
export const MAX_ROLE_MODELS = 64;

/**
 * An absolute file path: POSIX (`/x`), Windows drive (`C:\x`, `C:/x`) or UNC (`\\server\x`); no
 * NUL byte. Relative paths are refused: the host's working directory means nothing to a user.
 */
const AbsolutePath = z
  .string()
  .min(1, 'must not be empty')
  .max(MAX_PATH_LENGTH, `must be at most ${MAX_PATH_LENGTH} characters`)
  .refine((p) => !p.includes('\0'), 'must not contain a NUL character')
  .refine((p) => /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p), 'must be an absolute path');
/** A short name: a dataset, split or role. */
const Name = z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const Count = (min: number, max: number) =>
  z.int(`must be an integer from ${min} to ${max}`).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`);

/** Payload schemas, one per API method. */
export const payloadSchemas = {
  listExperiments: NoPayload,
  getExperiment: z.strictObject({ id: Id }),
  listRuns: z.strictObject({ experimentId: Id }),
  getRunTrace: z.strictObject({ runId: Id }),
  validateWorkflow: z.strictObject({
    /** The workflow document, YAML or JSON. */
    text: z.string().max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
    /** A file name used only in issue locations (nothing is read from disk). */
    file: z.string().min(1).max(4096).optional(),
  }),
  appInfo: NoPayload,
  listExamples: NoPayload,
  listDatasets: NoPayload,
  listModels: NoPayload,
  addModel: z.strictObject({ path: AbsolutePath }),
  testModel: z.strictObject({
    path: AbsolutePath,
    prompt: z.string().min(1, 'must not be empty').max(MAX_PROMPT_CHARS, `must be at most ${MAX_PROMPT_CHARS} characters`),
    /** Completion tokens; default 24. */
    maxTokens: Count(1, 256).optional(),
  }),
  startRun: z.strictObject({
    workflowText: z.string().min(1, 'must not be empty').max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
    dataset: Name,
    split: Name,
    limit: Count(1, MAX_RUN_LIMIT),
    offset: Count(0, 10_000_000).optional(),
    seed: Count(0, 0x7fffffff),
    models: z.strictObject({
      default: AbsolutePath.optional(),
      roles: z
        .record(Name, AbsolutePath)
        .refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`)
        .optional(),
    }),
    /** SIMULATED faults, `role=kind@rate` (parsed by the host). */
    inject: z.array(z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters')).max(MAX_INJECT, `must have at most ${MAX_INJECT} entries`).optional(),
    threads: Count(1, 256).optional(),
    contextSize: Count(256, 131_072).optional(),
    roleLora: z
      .record(Name, z.array(z.strictObject({ path: AbsolutePath, scale: z.number().min(-100).max(100).optional() })).min(1, 'must name at least one adapter').max(8, 'must have at most 8 adapters'))
      .refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`)
      .optional(),
    roleVersions: z.record(Name, Id).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    cards: z.union([z.literal('all'), z.literal('none'), z.array(Id).min(1, 'must name at least one card').max(MAX_CARDS, `must have at most ${MAX_CARDS} entries`)]).optional(),
    cardBudget: Count(1, 100_000).optional(),
    distillEvery: Count(1, MAX_RUN_LIMIT).optional(),
    distillShots: Count(1, 100).optional(),
    distillRoles: z.array(Name).min(1, 'must name at least one role').max(MAX_ROLE_MODELS, `must have at most ${MAX_ROLE_MODELS} entries`).optional(),
    distillWithFailures: z.boolean().optional(),
    kind: z.enum(['run', 'rollouts']).optional(),
    group: Count(1, 64).optional(),
    temperature: z.number().min(0, 'must be at least 0').max(5, 'must be at most 5').optional(),
    mode: Name.optional(),
    recordTokens: z.boolean().optional(),
    runs: Count(1, MAX_RUN_LIMIT).optional(),
  }),
  cancelRun: z.strictObject({ experimentId: Id }),
  resumeRun: z.strictObject({
    experimentId: Id,
    /** Moved model files given again (they must be the same files). */
    models: z
      .strictObject({
        default: AbsolutePath.optional(),
        roles: z.record(Name, AbsolutePath).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
      })
      .optional(),
    force: z.boolean().optional(),
  }),
  activeRuns: NoPayload,
  /** `flowlab train-loop`'s options (StartTrainLoopRequest in trainLoop.ts; the CLI's bounds). */
  startTrainLoop: z.strictObject({
    workflowText: z.string().min(1, 'must not be empty').max(MAX_WORKFLOW_CHARS, `must be at most ${MAX_WORKFLOW_CHARS} characters`),
    dataset: Name,
    split: Name.optional(),
    heldoutSplit: Name.optional(),
    roles: z.array(Name).min(1, 'must name at least one role').max(MAX_ROLE_MODELS, `must have at most ${MAX_ROLE_MODELS} entries`).optional(),
    group: Count(1, 64).optional(),
    iterations: Count(1, MAX_RUN_LIMIT).optional(),
    limit: Count(1, MAX_RUN_LIMIT).optional(),
    lr: z.number().gt(0, 'must be greater than 0').lt(1, 'must be less than 1').optional(),
    kl: z.number().min(0, 'must be at least 0').max(100, 'must be at most 100').optional(),
    temperature: z.number().gt(0, 'must be greater than 0 (on-policy training samples)').max(5, 'must be at most 5').optional(),
    maxGradNorm: z.number().min(0, 'must be at least 0').max(1e6, 'must be at most 1000000').optional(),
    heldout: Count(0, MAX_RUN_LIMIT).optional(),
    heldoutSamples: Count(1, 64).optional(),
    heldoutTemperature: z.number().min(0, 'must be at least 0').max(5, 'must be at most 5').optional(),
    seed: Count(0, 0x7fffffff).optional(),
    warmStart: Count(0, MAX_RUN_LIMIT).optional(),
    sftMix: z.boolean().optional(),
    sftSteps: Count(1, 100).optional(),
    sftLr: z.number().gt(0, 'must be greater than 0').lt(1, 'must be less than 1').optional(),
    sftMinScore: z
      .union([
        z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1'),
        z.record(Name, z.number().gt(0, 'must be greater than 0').max(1, 'must be at most 1')).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`),
      ])
      .optional(),
    sftRoles: z.array(Name).min(1, 'must name at least one role').max(MAX_ROLE_MODELS, `must have at most ${MAX_ROLE_MODELS} entries`).optional(),
    models: z.strictObject({
      default: AbsolutePath.optional(),
      roles: z.record(Name, AbsolutePath).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    }),
    roleVersions: z.record(Name, Id).refine((r) => Object.keys(r).length <= MAX_ROLE_MODELS, `must name at most ${MAX_ROLE_MODELS} roles`).optional(),
    threads: Count(1, 256).optional(),
    contextSize: Count(64, 131_072).optional(),
  }),
  cancelTrainLoop: z.strictObject({ loopId: Id }),
  getRollouts: z.strictObject({ experimentId: Id }),
  listCards: z.strictObject({ role: Name.optional() }).optional(),
  getCardEffect: z.strictObject({ cardId: Id }),
  listWeightVersions: z.strictObject({ role: Name.optional() }).optional(),
  getLearningCurves: z.strictObject({ role: Name.optional() }).optional(),
} as const satisfies Record<ApiMethod, z.ZodType>;

/** The validated payload type of a method. */
export type ApiPayload<M extends ApiMethod> = z.output<(typeof payloadSchemas)[M]>;

export type GetExperimentPayload = ApiPayload<'getExperiment'>;
export type ListRunsPayload = ApiPayload<'listRuns'>;
export type GetRunTracePayload = ApiPayload<'getRunTrace'>;
export type ValidateWorkflowPayload = ApiPayload<'validateWorkflow'>;

/**
 * One row of the experiments list: the stored experiment with its progress and scores, without
 * the workflow text and run configuration (`getExperiment` has those).
 */
export type ExperimentSummary = Omit<StoreExperimentSummary, 'workflowYaml' | 'config'>;

/** One experiment in full: the stored row (workflow text, config) plus its progress and scores. */
export type ExperimentDetail = StoreExperimentSummary;

/** A run with all its node events (ordered by seq, each with its model calls). */
export interface RunTrace {
  run: RunRecord;
  events: NodeEvent[];
}

/** The shape of a valid workflow, enough to draw it. */
export interface WorkflowSummary {
  name: string;
  notation: 'graph' | 'steps' | 'agents';
  nodes: { id: string; kind: NodeKind; role?: string }[];
  edges: { from: string; to: string; type: EdgeType }[];
}

/** `validateWorkflow`'s answer: the graph's outline, or every located issue. Never throws for a bad document. */
export type ValidateWorkflowResult = { ok: true; summary: WorkflowSummary } | { ok: false; issues: SpecIssue[] };

/** What the running app is. */
export interface AppInfo {
  /** The app's version (package.json `version`). */
  version: string;
  /** The SQLite database file in use (`:memory:` in tests). */
  dbFile: string;
}

/**
 * The lab's API as the host implements it (see `createHandlers`). Payload-less methods take an
 * optional `{}`. Every method throws `ApiError` only: `BAD_REQUEST` for an invalid payload,
 * `NOT_FOUND` for an unknown id, `UNAVAILABLE` when the store is closed, `INTERNAL` otherwise.
 * The store methods (and the rollouts and hint-card reads, `ImproveApiAdditions` in improve.ts) answer
 * synchronously; the lab methods (`LabApiAdditions`, lab.ts) return
 * Promises and reject with the same ApiErrors (a bad payload included).
 */
export interface FlowlabApi extends LabApiAdditions, ImproveApiAdditions, LearningApiAdditions {
  /** All experiments, newest first, with progress and scores. */
  listExperiments(payload?: ApiPayload<'listExperiments'>): ExperimentSummary[];
  /** One experiment with its workflow text and config. Errors: `NOT_FOUND`. */
  getExperiment(payload: GetExperimentPayload): ExperimentDetail;
  /** The stored runs of an experiment, in task order. Errors: `NOT_FOUND` (no such experiment). */
  listRuns(payload: ListRunsPayload): RunRecord[];
  /** A run and its node events. Errors: `NOT_FOUND`. */
  getRunTrace(payload: GetRunTracePayload): RunTrace;
  /** Parses and validates a workflow document with the built-in tools; reports issues as data. */
  validateWorkflow(payload: ValidateWorkflowPayload): ValidateWorkflowResult;
  /** The app version and database file. */
  appInfo(payload?: ApiPayload<'appInfo'>): AppInfo;
}

/** The result type of a method. */
export type ApiResult<M extends ApiMethod> = Awaited<ReturnType<FlowlabApi[M]>>;

/**
 * The API as a client sees it across a process boundary: the same methods, each returning a
 * Promise. The preload's `window.flowlab` and the renderer's client have this type.
 */
export type FlowlabClient = {
  [M in ApiMethod]: (...args: Parameters<FlowlabApi[M]>) => Promise<ApiResult<M>>;
};

/**
 * What the Electron preload exposes as `window.flowlab`: the promise client plus `onEvent`, a
 * subscription to pushed `LabEvent`s (checked with `isLabEvent` before delivery).
 */
export type FlowlabDesktopApi = FlowlabClient & { onEvent: Subscribe };

// Compile-time guard: the allowlist and the interface name exactly the same methods.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const allowlistMatchesInterface: Same<ApiMethod, keyof FlowlabApi> = true;
void allowlistMatchesInterface;
