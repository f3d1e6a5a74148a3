/**
 * The store port: what the engine's callers (core/experiments), the improvement loops
 * (core/rollouts, core/distill, core/training), the API handlers (core/api) and the hosts read
 * and write. `SqliteStore` (SqliteStore.ts, opened with `openStore`) is the one adapter; tests
 * and tools depend on these interfaces, not on the class.
 *
 * All times are epoch ms. Every method fails with `StoreError` (errors.ts); the codes each one
 * can raise are listed beside it. After `close()` every method fails with `CLOSED`.
 */
import type { ExperimentId, RunId } from '../ids.ts';
import type { RunRecord } from '../results/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { AdvantageRow, Card } from './improve.ts';
import type { ExperimentCall, ExperimentRow, ExperimentStatus, ExperimentSummary, NewExperiment, PlannedTask } from './types.ts';
import type { NewTrainLoop, TrainLoopExperiment, TrainLoopRow, TrainLoopStatus } from './trainLoops.ts';
import type { NewWeightVersion, WeightVersion } from './weights.ts';
import type { StudyRow, StudyStatus } from './studies.ts';
import type { MassRepo } from './mass.ts';
import type { WorkshopRepo } from './workshops.ts';
import type { ReproKind, ReproRecord } from './repro.ts';
import type { ForksRepo } from './forks.ts';
import type { EndpointDecisionsRepo } from './endpointDecisions.ts';
import type { AnnotationsRepo } from './annotations.ts';
import type { RunQuery, RunSearchResult } from './runSearch.ts';
import type { RoleTrendRow } from './roleTrends.ts';

/** One run with all its node events (each with its model calls), as `saveRuns` takes them. */
export interface RunWithEvents {
  run: RunRecord;
  events: NodeEvent[];
}

/** Rollout advantages (core/rollouts) and the prior library of hint cards (core/distill). */
export interface ImproveRepo {
  /** Writes advantages, all or nothing; a row for the same (run, role, mode) replaces the old one. */
  saveAdvantages(rows: readonly AdvantageRow[]): void;
  /** An experiment's advantages in task order, then role, then mode. */
  advantagesOf(experimentId: string): AdvantageRow[];
  /** Adds a card. Errors: `RUN_EXISTS` (the card id is taken). */
  saveCard(card: Card): void;
  /** One card with the number of runs that carried it. Errors: `NOT_FOUND`. */
  getCard(id: string): Card & { uses: number };
  /** The library, oldest first, optionally one role's cards only. */
  listCards(filter?: { role?: string }): Array<Card & { uses: number }>;
  /** Removes a card; false when there was none. */
  deleteCard(id: string): boolean;
  /** Records that a run's prompts carried these cards (idempotent). */
  recordUses(runId: string, cardIds: readonly string[]): void;
  /** Ids of the runs whose prompts carried a card, sorted. */
  usesOf(cardId: string): string[];
}

/** Weight versions written by training (core/training), with their lineage. */
/** Reproducibility records (core/store/repro.ts): fingerprints and output digests, for `flowlab verify`. */
export interface ReproRepo {
  /** Records (or, on a resume, replaces) a fingerprint; an output digest already stored is kept. Errors: `INVALID_RECORD`. */
  record(input: { id: string; kind: ReproKind; fingerprint: Record<string, unknown>; fingerprintDigest: string; repeatability: string }): void;
  /** Stores the output digest of a finished record. Errors: `NOT_FOUND`. */
  finish(id: string, outputDigest: string): void;
  find(id: string): ReproRecord | undefined;
}

/** Studies: the plan and state of each (core/store/studies.ts has the row's fields). */
export interface StudiesRepo {
  /** Errors: `EXPERIMENT_EXISTS` (id taken), `INVALID_RECORD`. */
  create(input: { id: string; name: string; plan: unknown; planFile?: string; status?: StudyStatus; state?: Record<string, unknown> }): StudyRow;
  find(id: string): StudyRow | undefined;
  /** Errors: `NOT_FOUND`. */
  get(id: string): StudyRow;
  /** Newest first. */
  list(): StudyRow[];
  /** Sets the status and/or merges top-level `state` keys. Errors: `NOT_FOUND`, `INVALID_RECORD`. */
  update(id: string, change: { status?: StudyStatus; state?: Record<string, unknown> }): StudyRow;
}

export interface WeightsRepo {
  /** Stores a version and returns it as stored. Errors: `RUN_EXISTS` (id taken), `NOT_FOUND` (no parent), `INVALID_RECORD`. */
  save(v: NewWeightVersion): WeightVersion;
  /** Errors: `NOT_FOUND`. */
  get(id: string): WeightVersion;
  find(id: string): WeightVersion | undefined;
  /** Every version of a role (or of all roles), oldest first. */
  list(filter?: { role?: string }): WeightVersion[];
  /** The newest version stored at this GGUF path. */
  findByPath(file: string): WeightVersion | undefined;
  /** The version, then its parent, and so on to the first of its lineage. Errors: `NOT_FOUND`. */
  lineage(id: string): WeightVersion[];
}

/** Train loops (core/training/loop.ts): their plan, progress and status, for `resume`. */
export interface TrainLoopsRepo {
  /** Stores a new loop (running, this process, 0 done). Errors: `EXPERIMENT_EXISTS` (id taken), `INVALID_RECORD`. */
  create(l: NewTrainLoop): TrainLoopRow;
  /** Errors: `NOT_FOUND`. */
  get(id: string): TrainLoopRow;
  find(id: string): TrainLoopRow | undefined;
  /** Every loop, newest first. */
  list(): TrainLoopRow[];
  /** Whether it runs now in a live process (this one included). */
  isLive(id: string): boolean;
  /** Takes a loop over for this process. Errors: `NOT_FOUND`, `EXPERIMENT_BUSY` (running in a live process). */
  claim(id: string): TrainLoopRow;
  /** Errors: `NOT_FOUND`, `INVALID_RECORD`. */
  saveState(id: string, state: Record<string, unknown>): void;
  /** Iteration k's versions, `done = k` and the state, all or nothing. Errors: `NOT_FOUND`, `RUN_EXISTS` (k recorded), `INVALID_RECORD` (k is not done + 1), `WeightsRepo.save`'s. */
  commitIteration(id: string, k: number, versions: readonly NewWeightVersion[], state: Record<string, unknown>): WeightVersion[];
  /** Errors: `NOT_FOUND`. */
  finish(id: string, status: Exclude<TrainLoopStatus, 'running'>): void;
  /** Marks running loops of dead processes `interrupted`; returns their ids. */
  markInterrupted(): string[];
  /** The loop's experiments (by `config.trainLoop.loopId`), oldest first. */
  experimentsOf(id: string): TrainLoopExperiment[];
}

/** Experiments with their planned tasks, runs, node events and model calls. */
export interface Store {
  /** Where the store lives (a file path, or `:memory:`); error messages name it. */
  readonly file: string;
  /** Creates an experiment (status `running`, this process) and its task list, all or nothing. Errors: `EXPERIMENT_EXISTS`, `INVALID_RECORD`. */
  createExperiment(input: NewExperiment): ExperimentRow;
  /** Stores a finished run with its events and calls, all or nothing. Errors: `RUN_EXISTS`, `NOT_FOUND`, `INVALID_RECORD`. */
  saveRun(run: RunRecord, events: readonly NodeEvent[]): void;
  /** Stores many runs, all or nothing; the same checks as `saveRun`. */
  saveRuns(batch: readonly RunWithEvents[]): void;
  /** Errors: `NOT_FOUND`. */
  getExperiment(id: ExperimentId | string): ExperimentRow;
  findExperiment(id: ExperimentId | string): ExperimentRow | undefined;
  /** All experiments, newest first, with progress and score counts. */
  listExperiments(): ExperimentSummary[];
  /** The planned tasks in task order. Errors: `NOT_FOUND`. */
  listTasks(experimentId: ExperimentId | string): PlannedTask[];
  /** Planned tasks without a stored run, in task order (what a resume runs). Errors: `NOT_FOUND`. */
  pendingTasks(experimentId: ExperimentId | string): PlannedTask[];
  /** Stored runs in task order. Errors: `NOT_FOUND`. */
  listRuns(experimentId: ExperimentId | string): RunRecord[];
  /** Errors: `NOT_FOUND`. */
  getRun(runId: RunId | string): RunRecord;
  /** Runs matching filters and full-text search (runSearch.ts), a page and the total. Errors: `BAD_QUERY` (`RunQueryError`). */
  searchRuns(q: RunQuery): RunSearchResult;
  /** Per experiment and role: mean ladder reward and runs blamed on the role (roleTrends.ts), oldest experiment first. */
  roleTrends(): RoleTrendRow[];
  /** A run's events by seq, each with its calls by call index. Errors: `NOT_FOUND`. */
  getRunEvents(runId: RunId | string): NodeEvent[];
  /** Every model call of an experiment with its place (run, task, node, attempt): the replay provider's input. Errors: `NOT_FOUND`. */
  getExperimentCalls(experimentId: ExperimentId | string): ExperimentCall[];
  /** Errors: `NOT_FOUND`. */
  setExperimentStatus(id: ExperimentId | string, status: ExperimentStatus): void;
  /** Takes an experiment over for this process (resume). Errors: `NOT_FOUND`, `EXPERIMENT_BUSY` (running in another live process). */
  claimExperiment(id: ExperimentId | string): ExperimentRow;
  /** Sets the final status and finish time. Errors: `NOT_FOUND`. */
  finishExperiment(id: ExperimentId | string, status: Exclude<ExperimentStatus, 'running'>): void;
  /** Marks `running` experiments whose process is gone as `interrupted`; returns their ids. */
  markInterrupted(): ExperimentId[];
  /** Advantages and hint cards. */
  readonly improve: ImproveRepo;
  /** Weight versions. */
  readonly weights: WeightsRepo;
  /** Studies (core/studies). */
  readonly studies: StudiesRepo;
  /** Reproducibility records (core/repro). */
  readonly repro: ReproRepo;
  /** Train loops. */
  readonly trainLoops: TrainLoopsRepo;
  /** MASS loop records (core/mass): designs, verdicts, champions, write-once. */
  readonly mass: MassRepo;
  /** Workshop sessions, step results and predictions (core/workshop). */
  readonly workshops: WorkshopRepo;
  /** Forks linked to their parent runs (core/experiments/fork.ts). */
  readonly forks: ForksRepo;
  /** Endpoint decisions (backpressure, failover) taken during each experiment (models/openai pool.ts). */
  readonly endpointDecisions: EndpointDecisionsRepo;
  /** A person's scores, tags and notes on runs and nodes (core/store/annotations.ts). */
  readonly annotations: AnnotationsRepo;
  /** Whether `close()` has been called. */
  readonly closed: boolean;
  /** Releases the store; idempotent. */
  close(): void;
  /**
   * A number that changes whenever a write commits to the database, from this connection or
   * another (another process's included): SQLite's `PRAGMA data_version`, which moves on every
   * other connection's commit, plus `total_changes()`, this connection's rows written
   * (sqlite.org/pragma.html#pragma_data_version). One cheap read; hosts poll it.
   */
  changeCounter(): number;
  /**
   * One short signature per area of the store (counts and latest times of its tables), so a
   * poller that saw `changeCounter` move can tell which areas changed. Areas: `experiments`
   * (experiments and their runs), `cards`, `learning` (weight versions, train loops), `studies`, `mass`,
   * `workshop` (workshop sessions' state, step results, the room's predictions).
   */
  areaSignatures(): Record<StoreArea, string>;
}

/** The parts of the store `areaSignatures` tells apart. */
export type StoreArea = 'experiments' | 'cards' | 'learning' | 'studies' | 'mass' | 'workshop';
