/**
 * The lab API for working the improvement loop from the window (types only, so the renderer can
 * use them): where an experiment sits (a train loop's iteration, a study's cell) and which model
 * files it ran, two experiments compared as `flowlab compare` does, hint cards' trust marks, and
 * deleting and exporting cards as `flowlab cards rm` / `cards export` do. Store reads and writes,
 * answered in-process by `createHandlers` (loopHandlers.ts); no LabHost needed.
 */
import type { CompareReport } from '../experiments/compare.ts';
import type { CardsDocument } from '../distill/exchange.ts';

export type { CompareReport, PairedDelta } from '../experiments/compare.ts';
export type { CardsDocument } from '../distill/exchange.ts';

/**
 * What an experiment belongs to: a train loop (`config.trainLoop.loopId`; `iteration` for a
 * training iteration's rollouts, `phase` `heldout-before` / `heldout-after` for its held-out
 * evaluations) or a study (`config.source` `study <id>`, or an id derived from the study's:
 * `<study-id>.<cell>` for cells, `<study-id>.<unit>.tl<n>` for its train loops).
 */
export interface ExperimentGroupRef {
  kind: 'train-loop' | 'study';
  /** The train loop's or the study's id. */
  id: string;
  /** A study's experiment that is also a train loop's: the loop's id. */
  loopId?: string;
  iteration?: number;
  phase?: string;
}

/** The fields `listExperiments` adds to each stored row (ExperimentSummary). */
export interface ExperimentMeta {
  /** Absent for a standalone experiment. */
  group?: ExperimentGroupRef;
  /** Base names of the model files its roles ran (`config.models.models`), sorted, distinct; empty when none is recorded. */
  models: string[];
}

/** `compareExperiments`'s payload: baseline `a`, compared `b`, the bootstrap's seed (default 0). */
export interface CompareExperimentsPayload {
  a: string;
  b: string;
  seed?: number;
}

/** `compareExperiments`'s answer: the paired report and the CLI command that prints the same table. */
export interface CompareView extends CompareReport {
  /** Workflow name, dataset and split of each side. */
  sides: { a: CompareSide; b: CompareSide };
}

export interface CompareSide {
  workflowName: string;
  dataset: string;
  split: string;
  runs: number;
}

/**
 * Why a hint card is not to be trusted blindly, shown where it is offered: it was distilled from
 * SIMULATED trajectories (injected faults, a scripted model) or by a simulated teacher, or some
 * or all of the runs it was distilled from were graded wrong.
 */
export interface CardTrust {
  /** Source runs recorded, and how many of them are still stored. */
  sources: number;
  found: number;
  /** Stored source runs graded wrong (not `correct`). */
  failedSources: number;
  simulated: boolean;
  /** True when `simulated` or any source run failed. */
  flagged: boolean;
  /** The reasons in users' words, e.g. `distilled from 3 failed runs (all of its sources)`. */
  reasons: string[];
}

/** `deleteCard`'s payload. */
export interface DeleteCardPayload {
  cardId: string;
}

/** `exportCards`'s payload: these cards (every card when absent). */
export interface ExportCardsPayload {
  ids?: string[];
}

/** The loop methods (store reads and card writes, synchronous on the host, like `listRuns`). */
export interface LoopApiAdditions {
  /**
   * Two experiments paired by dataset task id, as `flowlab compare a b --seed S --json` prints
   * them (`pairs` 0 when they share no task). Errors: `NOT_FOUND` (either experiment).
   */
  compareExperiments(payload: CompareExperimentsPayload): CompareView;
  /** Removes a card (its use records go with it), as `flowlab cards rm`. Errors: `NOT_FOUND`. */
  deleteCard(payload: DeleteCardPayload): { deleted: true };
  /** The versioned exchange document `flowlab cards export` writes. Errors: `NOT_FOUND` naming the missing ids. */
  exportCards(payload?: ExportCardsPayload): CardsDocument;
}
