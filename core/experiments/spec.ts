/**
 * The experiment service's vocabulary: what to start (`ExperimentSpec`), the ports it needs
 * (`ServiceDeps`), the progress events it emits, the outcome it resolves with, and its typed
 * errors. Both faces (cli/, host/) build specs from their input and listen to the events.
 */
import { FlowlabError } from '../errors.ts';
import type { CardsConfig } from '../distill/session.ts';
import type { ToolSource } from '../engine/index.ts';
import type { BlameReport } from '../blame/eval/scoreBlame.ts';
import type { ModelConfig, ModelPort } from '../model/config.ts';
import type { RolloutSummary } from '../rollouts/groups.ts';
import type { RolloutsConfig } from '../rollouts/store.ts';
import type { Store } from '../store/index.ts';
import type { ExperimentKind } from '../store/types.ts';
import type { ExperimentConfig } from '../store/config.ts';
import type { Dataset } from '../tasks/types.ts';
import type { FailureClass, NodeStatus } from '../trace/events.ts';
import type { Graph } from '../workflow/graph.ts';
import type { ExperimentReport } from './summary.ts';

/** A parsed workflow and the text it came from (stored with the experiment, hashed). */
export interface WorkflowSource {
  graph: Graph;
  text: string;
  /** Absolute path of the file, when it came from one (stored as `config.workflowFile`). */
  file?: string;
}

/** What every new experiment names: workflow, tasks, seed and models. */
export interface NewExperimentSpec {
  workflow: WorkflowSource;
  dataset: string;
  split: string;
  /** Tasks to take from the split (fewer when it is shorter; a `note` event says so). */
  limit: number;
  /** Tasks skipped from the start of the split. Default 0. */
  offset?: number;
  /** Experiment seed; run seeds derive from it and the task index. */
  seed: number;
  /** The data folder the dataset is read from, stored as `config.dataDir` (resume reads the same). */
  dataDir?: string;
  /** The resolved models (models/resolve.ts resolveModels); fingerprinted by the model port when stored. */
  models: ModelConfig;
  /** Who started it, stored as `config.source` (the lab writes `lab`; the CLI none; a study `study <id>`). */
  source?: string;
  /** The experiment's id (default: a fresh one); a study's cells use ids derived from the study's (core/studies/cells.ts). */
  experimentId?: string;
  /** The `retrieve` tool's corpus folder (`--corpus`), stored as `config.corpus`; resume and replay open it again. */
  corpus?: CorpusRecord;
  /** Tasks in flight (`--parallel`; core/schedule). Default: from the models (defaultParallel). Not stored: results do not depend on it. */
  parallel?: number;
}

/** A corpus folder as an experiment records it: the folder, its file signature (models/corpus) and its size. */
export interface CorpusRecord {
  dir: string;
  signature: string;
  passages: number;
}

/**
 * What to start. `run`: every task once, with optional hint cards. `blame-eval`: SIMULATED faults
 * (`role=kind@rate` specs as core/faults parseFaultSpec reads them) over `runs` runs cycling the
 * tasks. `rollouts`: G on-policy rollouts per task, decoded together, then group-relative
 * advantages. `resume`: the pending tasks of a stored experiment, exactly as it was started.
 */
export type ExperimentSpec =
  | (NewExperimentSpec & { kind: 'run'; cards?: CardsConfig; roleVersions?: Record<string, string> })
  | (NewExperimentSpec & { kind: 'blame-eval'; inject: readonly string[]; runs?: number })
  | (NewExperimentSpec & { kind: 'rollouts'; group: number; temperature: number; mode: string; recordTokens?: boolean })
  | ResumeSpec;

export interface ResumeSpec {
  kind: 'resume';
  experimentId: string;
  /** Model files given again (a moved file): the `default` reference and per-role files. Must be the same files. */
  models?: { default?: string; roles?: Record<string, string> };
  /** Take over an experiment marked running by a live pid (a reused pid after a crash). */
  force?: boolean;
  /** Tasks in flight (`--parallel`). Default: from the recorded models, as for a new experiment. */
  parallel?: number;
}

/** The ports the service uses. */
export interface ServiceDeps {
  store: Store;
  /** Builds providers; fingerprints and verifies model files (models/factory.ts fileModelPort). */
  models: ModelPort;
  /** Tool source of tool nodes. Default: core/tools defaultTools(). */
  tools?: ToolSource;
  /** A dataset by name, read from `dataDir` when given. Default: core/tasks getDataset. */
  datasets?: (name: string, dataDir?: string) => Dataset;
}

/** Options of one start. */
export interface StartOptions {
  /** Receives every event, including those emitted before `startExperiment` resolves. Must not throw (a throw is ignored). */
  onEvent?: (event: ExperimentEvent) => void;
  /** Cancels the experiment when aborted, as `cancel()` does (the caller's own controller). */
  signal?: AbortSignal;
}

export type ExperimentStatusEnd = 'completed' | 'cancelled' | 'failed';

/** Progress of an experiment, in order. */
export type ExperimentEvent =
  /** Something the user should know that is not an error (fewer tasks than asked, distillation progress). */
  | { type: 'note'; experimentId?: string; message: string }
  /** Created (or claimed, for a resume) and about to run its pending tasks; `done` runs are stored already. */
  | { type: 'started'; experimentId: string; kind: ExperimentKind; resumed: boolean; done: number; total: number; config: ExperimentConfig | null }
  | { type: 'node'; experimentId: string; runId: string; nodeId: string; attempt: number; phase: 'started' | 'finished'; status?: NodeStatus; failureClass?: FailureClass; simulated?: boolean }
  /**
   * A run stored (`status` completed | failed; `correctRuns` counts every correct stored run of the
   * experiment), or the run in flight dropped by a cancel (`status` cancelled, not stored).
   */
  | { type: 'run'; experimentId: string; runId: string; taskIndex: number; done: number; total: number; status: 'completed' | 'failed' | 'cancelled'; correct: boolean; correctRuns: number }
  /** A model could not be found or loaded mid-run: the experiment stops, its tasks stay pending. */
  | { type: 'halted'; experimentId: string; message: string }
  | { type: 'finished'; experimentId: string; status: ExperimentStatusEnd; done: number; total: number; message?: string };

/** What an experiment ended with. */
export interface ExperimentOutcome {
  experimentId: string;
  kind: ExperimentKind;
  status: ExperimentStatusEnd;
  /** Every stored run (summarizeRuns); `wallSeconds` of this execution. */
  report: ExperimentReport;
  /** Why it halted (model load failure mid-run), or the error that ended it. */
  message?: string;
  /** Halted: tasks stay pending, `resume` finishes them. */
  halted?: boolean;
  /** The error that ended execution (not a cancel or halt), when one did. */
  error?: unknown;
  /** A resume with nothing pending: nothing ran. */
  nothingPending?: boolean;
  /** blame-eval: the fault specs and the blame scored against them. */
  blame?: { inject: string[]; report: BlameReport };
  /** rollouts: the config and the advantages' summary. */
  rollouts?: { config: RolloutsConfig; summary: RolloutSummary };
}

/** A started experiment. */
export interface ExperimentHandle {
  experimentId: string;
  /** Subscribes to later events; returns the unsubscribe function. */
  on(listener: (event: ExperimentEvent) => void): () => void;
  /** Cancels: the run in flight is dropped (not stored); the experiment ends `cancelled`, resumable. */
  cancel(): void;
  /** Resolves once the experiment has ended and its provider is disposed. Never rejects. */
  done: Promise<ExperimentOutcome>;
}

export type ExperimentSpecErrorCode =
  /** The offset is past the end of the split. */
  | 'NO_TASKS'
  /** A fault spec that does not parse. */
  | 'BAD_FAULT'
  /** A fault spec or model override naming a role the workflow (or experiment) lacks. */
  | 'UNKNOWN_ROLE'
  /** A fault spec naming a node the workflow lacks. */
  | 'UNKNOWN_NODE'
  /** A fault kind a tool node cannot take. */
  | 'TOOL_FAULT_KIND'
  /** A design (wiring) fault kind for a role that is not the workflow's design role. */
  | 'DESIGN_FAULT_ROLE'
  /** A rollouts mode that does not parse or names unknown roles. */
  | 'BAD_MODE'
  /** Resume: the experiment is marked running by a live process. */
  | 'RUNNING'
  /** Resume: a `default` model given for an experiment without that reference. */
  | 'NO_DEFAULT_REF'
  /** A model failed to load before the experiment was created (nothing recorded); `cause` is the provider's error. */
  | 'MODEL_LOAD'
  /** Train loop: the workflow has no agent node, so no role to train. */
  | 'NO_ROLE'
  /** Train loop: a role that runs no agent node. */
  | 'NOT_TRAINABLE'
  /** A field the spec's kind does not use (core/jobs/experimentSpec.ts): `field` names it. */
  | 'UNUSED_FIELD'
  /** A spec field of the wrong form, or an unknown kind (core/jobs/experimentSpec.ts). */
  | 'BAD_SPEC';

/**
 * A spec that cannot start. `field` locates it in the spec (`offset`, `inject.<i>`, `mode`,
 * `models.default`, `models.roles.<role>`, `models`); `detail` carries what a face needs to word
 * it its own way.
 */
export class ExperimentSpecError extends FlowlabError<ExperimentSpecErrorCode> {
  override readonly name = 'ExperimentSpecError';
  constructor(
    code: ExperimentSpecErrorCode,
    readonly field: string,
    message: string,
    readonly detail: { text?: string; role?: string; node?: string; kind?: string; roles?: string[]; pid?: number | null } = {},
    options?: { cause?: unknown },
  ) {
    super(code, message, { field }, options);
  }
}
