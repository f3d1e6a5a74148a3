import type { ExperimentId, NodeId, RunId } from '../ids.ts';
import type { ModelCallRecord } from '../trace/index.ts';
import type { ExperimentConfig } from './config.ts';

/** Lifecycle of an experiment. `interrupted`: its process died while it was `running`. */
export type ExperimentStatus = 'running' | 'completed' | 'interrupted' | 'cancelled' | 'failed';

/**
 * What an experiment is: `run` (tasks through one workflow), `blame-eval` (with SIMULATED faults),
 * `rollouts` (groups and advantages), `import` (traces read from a file, core/otel: nothing was run;
 * `config.import` holds each run's graph), `mass` (one step of a MASS loop, core/mass: a workspace
 * run, a judge call or an optimizer call; `config.mass` says which), `fork` (one run re-run from a node of
 * another with one intervention, core/experiments/fork.ts; `config.fork` and the `run_forks` row link it). The column is plain text, so a new kind needs no migration.
 */
export type ExperimentKind = 'run' | 'blame-eval' | 'rollouts' | 'import' | 'mass' | 'fork';

/** One planned task of an experiment, written when the experiment is created. */
export interface PlannedTask {
  /** 0-based position in the experiment's task list; the unit of resume and replay. */
  taskIndex: number;
  /** The dataset's own id for the task. */
  taskId: string;
  /** The task's input as given to the workflow (any JSON-serialisable value). */
  input: unknown;
  expected?: string;
  /**
   * The task's `meta` (core/tasks `Task.meta`: DataWright's parts, a code task's tests...), kept so
   * the grader sees the task as the dataset made it, on run, resume and replay alike. Absent for
   * tasks planned before schema version 11.
   */
  meta?: Record<string, unknown>;
}

/** What an experiment runs: the workflow, the data and the configuration (shared by input and row). */
export interface ExperimentSpec {
  workflowName: string;
  /** The workflow's source text, stored verbatim so the experiment can be re-run as it was. */
  workflowYaml: string;
  /** sha256 hex of `workflowYaml` (see `computeWorkflowHash`). */
  workflowHash: string;
  dataset: string;
  split: string;
  /** Task limit the user asked for, if any. */
  limit?: number;
  seed: number;
}

/** Input of `Store.createExperiment`. */
export interface NewExperiment extends ExperimentSpec {
  /** Run configuration (models, params, limits...): any JSON-serialisable value; read back decoded (core/store/config.ts). */
  config: unknown;
  /** Defaults to a fresh `exp-<yyyymmdd>-<hhmmss>-<4 base36>` id. */
  id?: ExperimentId | string;
  kind: ExperimentKind;
  tasks: PlannedTask[];
}

/** An experiment as stored. Times are epoch ms. */
export interface ExperimentRow extends ExperimentSpec {
  id: ExperimentId;
  /** The run configuration, decoded by its codec (core/store/config.ts `decodeExperimentConfig`); null when none was given. */
  config: ExperimentConfig | null;
  kind: ExperimentKind;
  createdAt: number;
  updatedAt: number;
  finishedAt?: number;
  status: ExperimentStatus;
  /** The process that runs (or last ran) it. */
  pid?: number;
}

/** An experiment with its progress and scores, as `listExperiments` returns it. */
export interface ExperimentSummary extends ExperimentRow {
  /** Planned tasks. */
  tasksPlanned: number;
  /** Runs stored (any status). */
  runsDone: number;
  /** Runs with status `completed` (reached an answer). */
  runsCompleted: number;
  /** Runs graded correct. */
  runsCorrect: number;
  /** runsCorrect / runsDone, 0..1; null with no runs. */
  accuracy: number | null;
  /** Mean grader score over stored runs, 0..1; null with no runs. */
  meanScore: number | null;
  /** runsCompleted / runsDone, 0..1; null with no runs. */
  completionRate: number | null;
}

/** A model call with where it sat in the experiment: the replay provider's input. */
export type ExperimentCall = ModelCallRecord & {
  runId: RunId;
  taskIndex: number;
  nodeId: NodeId;
  attempt: number;
};
