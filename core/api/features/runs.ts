/**
 * The runs feature: start an experiment (`run`, `blame-eval` with SIMULATED faults, `rollouts`)
 * in the background, cancel it, resume it as `flowlab resume` does (a train loop's id resumes the
 * loop), and list what runs in this host. Lab methods: asynchronous on every host, answered by
 * the `LabHost`; progress arrives as `LabEvent`s (lab.ts).
 */
import * as z from 'zod';
import { MAX_PARALLEL } from '../../limits.ts';
import type { Store } from '../../store/index.ts';
import { ApiError } from '../errors.ts';
import { defineFeature, labOf, type Awaitable } from '../feature.ts';
import { AbsolutePath, Count, Id, MAX_CARDS, MAX_INJECT, MAX_ROLE_MODELS, MAX_RUN_LIMIT, MAX_WORKFLOW_CHARS, Name, NoPayload } from '../fields.ts';

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

/** The runs methods (lab methods). */
export interface RunsApi {
  /**
   * Validates, creates the experiment and starts it in the background; progress arrives as
   * `LabEvent`s (which may arrive before this call's answer). Errors: `BAD_REQUEST` (invalid
   * workflow: every located issue in the message; unknown dataset, split, role or fault spec;
   * missing or invalid model file, named), `UNAVAILABLE` (dataset files absent), `BUSY` (a chosen
   * model file in use by another running experiment).
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
  activeRuns(payload?: Record<string, never>): Promise<ActiveRun[]>;
}

/** What a lab host implements of them. */
export interface RunsHost {
  startRun(payload: StartRunRequest): Awaitable<{ experimentId: string }>;
  cancelRun(payload: CancelRunPayload): Awaitable<{ cancelled: boolean }>;
  /** Optional: hosts without it answer `resumeRun` with UNAVAILABLE. */
  resumeRun?(payload: ResumeRunPayload): Awaitable<ResumeRunResult>;
  activeRuns(): Awaitable<ActiveRun[]>;
}

export const runsFeature = defineFeature<RunsApi>()({
  name: 'runs',
  payloads: {
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
      parallel: Count(1, MAX_PARALLEL).optional(),
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
  },
  lab: ['startRun', 'cancelRun', 'resumeRun', 'activeRuns'],
  handlers: (deps: { store: Store; lab?: RunsHost | undefined }) => ({
    startRun: async (payload) => labOf(deps, 'startRun').startRun(payload),
    cancelRun: async (payload) => {
      deps.store.getExperiment(payload.experimentId); // NOT_FOUND for an unknown id
      return labOf(deps, 'cancelRun').cancelRun(payload);
    },
    resumeRun: async (payload) => {
      if (!deps.store.trainLoops.find(payload.experimentId)) deps.store.getExperiment(payload.experimentId); // NOT_FOUND for an unknown id (a loop id resumes the loop)
      const host = labOf(deps, 'resumeRun');
      if (!host.resumeRun) throw new ApiError('UNAVAILABLE', 'resumeRun: this host cannot resume experiments', 'resumeRun');
      return host.resumeRun(payload);
    },
    activeRuns: async () => labOf(deps, 'activeRuns').activeRuns(),
  }),
});
