/**
 * The lab API for working the improvement loop from the window (types only, so the renderer can
 * use them): where an experiment sits (a train loop's iteration, a study's cell) and which model
 * files it ran, two experiments compared as `flowlab compare` does, hint cards' trust marks, and
 * deleting and exporting cards as `flowlab cards rm` / `cards export` do. Store reads and writes,
 * answered in-process by `createHandlers` (loopHandlers.ts); no LabHost needed.
 */
import type { CompareReport } from '../experiments/compare.ts';
import type { CardsDocument } from '../distill/exchange.ts';
import type { LibraryCard } from './improve.ts';

export type { CardTrust } from './improve.ts';

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

/** `deleteCard`'s payload. */
export interface DeleteCardPayload {
  cardId: string;
}

/** `exportCards`'s payload: these cards (every card when absent). */
export interface ExportCardsPayload {
  ids?: string[];
}

/**
 * `distillCard`'s payload: `flowlab distill --experiment <id> --role <role>` as data, each field
 * with the CLI's default. `teacher`: an absolute GGUF path (default: the role's own model in the
 * experiment).
 */
export interface DistillCardRequest {
  experimentId: string;
  role: string;
  /** Exemplars, 1..20. Default 5. */
  shots?: number;
  /** Only runs graded correct. Default false (successes and failures). */
  onlySuccesses?: boolean;
  teacher?: string;
  /** Teacher seed. Default 0. */
  seed?: number;
  /** Teacher prompt budget in tokens (estimated as ceil(chars/4)), 64..100000. Default 512. */
  budget?: number;
  /** Most tokens the teacher writes, 16..32768. Default 600. */
  maxTokens?: number;
  /** CPU threads, 1..256. Default: the experiment's. */
  threads?: number;
  /** Teacher context tokens, 256..131072. Default 2048. */
  contextSize?: number;
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
  /**
   * A lab method (it loads the teacher model): distils one hint card for a role from a stored
   * experiment's best trajectories, as `flowlab distill` does, and stores it in the prior
   * library; resolves with the card and its trust marks. Errors: `NOT_FOUND` (experiment),
   * `BAD_REQUEST` (unknown role, no model recorded for it and no `teacher`, no exemplar, the
   * teacher's reply not a card, a missing or invalid model file), `BUSY` (the model file in use),
   * `UNAVAILABLE` (a host without models).
   */
  distillCard(payload: DistillCardRequest): Promise<LibraryCard>;
}
