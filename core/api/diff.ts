/**
 * The lab's API for run diff (types only): two stored runs aligned node run by node run, with the
 * first divergence named (core/trace/diff.ts `diffRuns`; what is compared and what "first" means
 * are documented there). A store read, answered in-process by `createHandlers` (diffHandlers.ts).
 * Plain, JSON-safe data. Imports only types, so the renderer can use it.
 */
import type { RunRecord } from '../results/index.ts';
import type { RunDiff } from '../trace/index.ts';

/** `diffRuns`' payload: the two run ids, A then B. */
export interface DiffRunsPayload {
  a: string;
  b: string;
}

/** One side of a run diff: the run and the workflow it ran. */
export interface RunDiffSide {
  runId: string;
  experimentId: string;
  workflowName: string;
  /** sha256 of the workflow text the experiment ran. */
  workflowHash: string;
  taskIndex: number;
  taskId: string;
  seed: number;
  status: RunRecord['status'];
  answer?: string;
  correct: boolean;
}

/** `diffRuns`' answer. */
export interface RunDiffView {
  a: RunDiffSide;
  b: RunDiffSide;
  /** Both experiments ran the same workflow text. */
  sameWorkflow: boolean;
  /** Both workflows have the same name (different texts of one workflow are compared as usual). */
  sameWorkflowName: boolean;
  /** What the reader should know: different workflow texts or names, a workflow that does not compile here. */
  notes: string[];
  /** Every call of both runs decoded with temperature 0 (greedy: the seed changes nothing). */
  greedy: boolean;
  diff: RunDiff;
}

/** The run-diff method of `FlowlabApi`. */
export interface DiffApiAdditions {
  /**
   * Two stored runs aligned node by node with their first divergence. Runs of differently named
   * workflows are diffed too, with a note. Errors: `NOT_FOUND` (either run), `BAD_REQUEST`.
   */
  diffRuns(payload: DiffRunsPayload): RunDiffView;
}
