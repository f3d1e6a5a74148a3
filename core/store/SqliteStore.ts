import type { Database } from 'better-sqlite3';
import { asExperimentId, type ExperimentId, type RunId } from '../ids.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import {
  callFromRow,
  eventFromRow,
  experimentCallFromRow,
  experimentFromRow,
  runFromRow,
  summaryFromRow,
  taskFromRow,
  toJson,
  type CallDbRow,
  type EventDbRow,
  type ExperimentCallDbRow,
  type ExperimentDbRow,
  type RunDbRow,
  type SummaryDbRow,
  type TaskDbRow,
} from './codec.ts';
import { invalidRecord, isUniqueViolation, StoreError } from './errors.ts';
import { newExperimentId } from './ids.ts';
import { isPidAlive } from './liveness.ts';
import type { MigrationReport } from './migrate.ts';
import { prepareStatements, type Statements } from './statements.ts';
import { RunWriter } from './runWriter.ts';
import { SqliteImproveRepo } from './improve.ts';
import type { ImproveRepo, ReproRepo, RunWithEvents, Store, StudiesRepo, TrainLoopsRepo, WeightsRepo, StoreArea } from './port.ts';
import { SqliteTrainLoopsRepo } from './trainLoops.ts';
import { SqliteWeightsRepo } from './weights.ts';
import { SqliteStudiesRepo } from './studies.ts';
import { SqliteReproRepo } from './repro.ts';
import { SqliteMassRepo, type MassRepo } from './mass.ts';
import { SqliteForksRepo, type ForksRepo } from './forks.ts';
import { SqliteEndpointDecisionsRepo, type EndpointDecisionsRepo } from './endpointDecisions.ts';
import { SqliteAnnotationsRepo, type AnnotationsRepo } from './annotations.ts';
import { SqliteWorkshopRepo, type WorkshopRepo } from './workshops.ts';
import type { ExperimentCall, ExperimentRow, ExperimentStatus, ExperimentSummary, NewExperiment, PlannedTask } from './types.ts';
import { RunSearchIndex, type RunQuery, type RunSearchResult } from './runSearch.ts';
import { roleTrendsOf, type RoleTrendRow } from './roleTrends.ts';

/** Every store this process has open (see {@link openStores}). */
const OPEN = new Set<SqliteStore>();

/**
 * The stores this process has open, oldest first: what a process-level guard marks `interrupted`
 * before the process ends on a fault (`SqliteStore.interruptOwn`).
 */
export function openStores(): SqliteStore[] {
  return [...OPEN];
}

/**
 * The store port (port.ts) over one SQLite connection through better-sqlite3. Create it with
 * `openStore`. All times are epoch ms. Every method throws `StoreError` (code `CLOSED`) after
 * `close()`.
 */
export class SqliteStore implements Store {
  private readonly st: Statements;
  /** Writes runs with their events and calls (runWriter.ts). */
  private readonly runs: RunWriter;
  /** The run search index (schema version 11; absent in a store opened with an older migration list, in tests). */
  private readonly runIndex: RunSearchIndex | undefined;
  /** Experiment ids that `openStore` marked `interrupted` (their process was gone). */
  readonly interruptedOnOpen: ExperimentId[] = [];

  /** @internal use `openStore`. */
  constructor(
    private readonly db: Database,
    /** The database file as given to `openStore` (`:memory:` for tests). */
    readonly file: string,
    /** What opening did to the schema. */
    readonly migration: MigrationReport,
    options: { markInterrupted?: boolean } = {},
  ) {
    this.st = prepareStatements(db);
    this.runIndex = RunSearchIndex.available(db) ? new RunSearchIndex(db) : undefined;
    OPEN.add(this);
    this.runs = new RunWriter(db, this.st, file, this.runIndex);
    if (options.markInterrupted ?? true) {
      this.interruptedOnOpen.push(...this.markInterrupted());
      // (a store opened with an older migration list, in tests, has no train_loops table)
      if (db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'train_loops'`).get()) this.trainLoops.markInterrupted();
    }
  }

  /**
   * Creates an experiment and its planned task list in one transaction; status `running`,
   * pid = this process. Errors: `EXPERIMENT_EXISTS` (id taken), `INVALID_RECORD` (config or a
   * task input not serialisable, duplicate task index); nothing is written on error.
   */
  createExperiment(input: NewExperiment): ExperimentRow {
    this.live();
    const id = asExperimentId(input.id ?? newExperimentId());
    const now = Date.now();
    this.db.transaction(() => {
      try {
        this.st.insertExperiment.run(
          id, now, now, input.kind, input.workflowName, input.workflowYaml, input.workflowHash, input.dataset,
          input.split, input.limit ?? null, input.seed, toJson(input.config ?? null, () => `experiment ${id}: config`),
          'running', process.pid,
        );
      } catch (err) {
        if (isUniqueViolation(err)) throw new StoreError('EXPERIMENT_EXISTS', `${this.file}: experiment ${id} already exists`, id, { cause: err });
        throw invalidRecord(err, `experiment ${id}`);
      }
      for (const t of input.tasks) {
        try {
          const input = toJson(t.input ?? null, () => `experiment ${id} task ${t.taskIndex}: input`);
          if (t.meta === undefined || !this.st.insertTaskMeta) this.st.insertTask.run(id, t.taskIndex, t.taskId, input, t.expected ?? null);
          else this.st.insertTaskMeta.run(id, t.taskIndex, t.taskId, input, t.expected ?? null, toJson(t.meta, () => `experiment ${id} task ${t.taskIndex}: meta`));
        } catch (err) {
          if (isUniqueViolation(err)) throw new StoreError('INVALID_RECORD', `experiment ${id}: task index ${t.taskIndex} is planned twice`, id, { cause: err });
          throw invalidRecord(err, `experiment ${id} task ${t.taskIndex}`);
        }
      }
    })();
    return this.getExperiment(id);
  }

  /**
   * Stores one finished run with all its node events and their model calls in ONE transaction:
   * on any error nothing of the run is written. Event `runId`s must equal `run.runId`.
   * Errors: `RUN_EXISTS` (a run for this experiment and task index, or this run id, is stored);
   * `NOT_FOUND` (no such experiment, or the task index is not planned); `INVALID_RECORD`
   * (a value is not JSON-serialisable, an enum is out of range, duplicate seq or call index).
   */
  saveRun(run: RunRecord, events: readonly NodeEvent[]): void {
    this.saveRuns([{ run, events: events as NodeEvent[] }]);
  }

  /**
   * Stores many runs in ONE transaction (all or nothing): the fast path for imports and benchmarks.
   * Same checks and errors as `saveRun`.
   */
  saveRuns(batch: readonly RunWithEvents[]): void {
    this.live();
    this.runs.save(batch);
  }

  /** The experiment with this id. Errors: `NOT_FOUND`. */
  getExperiment(id: ExperimentId | string): ExperimentRow {
    const row = this.findExperiment(id);
    if (!row) throw this.notFound('experiment', id);
    return row;
  }

  /** The experiment with this id, or undefined. */
  findExperiment(id: ExperimentId | string): ExperimentRow | undefined {
    this.live();
    const row = this.st.experimentById.get(id) as ExperimentDbRow | undefined;
    return row && experimentFromRow(row);
  }

  /** All experiments, newest first, with progress and score counts (see `ExperimentSummary`). */
  listExperiments(): ExperimentSummary[] {
    this.live();
    return (this.st.listExperiments.all() as SummaryDbRow[]).map(summaryFromRow);
  }

  /** The planned task list, in task order. Errors: `NOT_FOUND`. */
  listTasks(experimentId: ExperimentId | string): PlannedTask[] {
    this.mustExist(experimentId);
    return (this.st.tasksOf.all(experimentId) as TaskDbRow[]).map(taskFromRow);
  }

  /** Planned tasks that have no stored run yet, in task order (what `resume` runs). Errors: `NOT_FOUND`. */
  pendingTasks(experimentId: ExperimentId | string): PlannedTask[] {
    this.mustExist(experimentId);
    return (this.st.pendingOf.all(experimentId) as TaskDbRow[]).map(taskFromRow);
  }

  /** Stored runs of an experiment, in task order. Errors: `NOT_FOUND`. */
  listRuns(experimentId: ExperimentId | string): RunRecord[] {
    this.mustExist(experimentId);
    return (this.st.runsOf.all(experimentId) as RunDbRow[]).map(runFromRow);
  }

  /** One run. Errors: `NOT_FOUND`. */
  getRun(runId: RunId | string): RunRecord {
    this.live();
    const row = this.st.runById.get(runId) as RunDbRow | undefined;
    if (!row) throw this.notFound('run', runId);
    return runFromRow(row);
  }

  /** A run's node events ordered by seq, each with its model calls ordered by call index. Errors: `NOT_FOUND`. */
  getRunEvents(runId: RunId | string): NodeEvent[] {
    this.live();
    const rows = this.st.eventsOfRun.all(runId) as EventDbRow[];
    if (rows.length === 0 && !this.st.runById.get(runId)) throw this.notFound('run', runId);
    const callsByEvent = new Map<number, ReturnType<typeof callFromRow>[]>();
    for (const c of this.st.callsOfRun.all(runId) as CallDbRow[]) {
      let list = callsByEvent.get(c.node_event_id);
      if (!list) callsByEvent.set(c.node_event_id, (list = []));
      list.push(callFromRow(c));
    }
    return rows.map((r) => eventFromRow(r, callsByEvent.get(r.id) ?? []));
  }

  /**
   * Every model call of an experiment with where it sat (run, task index, node, attempt), ordered
   * by task index, event seq, call index: the input of the replay provider. Errors: `NOT_FOUND`.
   */
  getExperimentCalls(experimentId: ExperimentId | string): ExperimentCall[] {
    this.mustExist(experimentId);
    return (this.st.callsOfExperiment.all(experimentId) as ExperimentCallDbRow[]).map(experimentCallFromRow);
  }

  /** Sets an experiment's status (pid and finish time unchanged). Errors: `NOT_FOUND`. */
  setExperimentStatus(id: ExperimentId | string, status: ExperimentStatus): void {
    this.live();
    if (this.st.setStatus.run(status, Date.now(), id).changes === 0) throw this.notFound('experiment', id);
  }

  /**
   * Takes an experiment over for this process (resume): status `running`, pid = `process.pid`,
   * finish time cleared. Errors: `NOT_FOUND`; `EXPERIMENT_BUSY` when it is `running` under
   * another live process.
   */
  claimExperiment(id: ExperimentId | string): ExperimentRow {
    this.live();
    return this.db
      .transaction(() => {
        const row = this.getExperiment(id);
        if (row.status === 'running' && row.pid !== process.pid && isPidAlive(row.pid)) {
          throw new StoreError('EXPERIMENT_BUSY', `${this.file}: experiment ${id} is running in process ${row.pid}`, String(id));
        }
        this.st.claim.run(process.pid, Date.now(), id);
        return this.getExperiment(id);
      })
      .immediate();
  }

  /** Ends an experiment: sets its status and finish time. Errors: `NOT_FOUND`. */
  finishExperiment(id: ExperimentId | string, status: Exclude<ExperimentStatus, 'running'>): void {
    this.live();
    const now = Date.now();
    if (this.st.finish.run(status, now, now, id).changes === 0) throw this.notFound('experiment', id);
  }

  /**
   * Marks every `running` experiment whose pid is not a live process on this machine as
   * `interrupted`, and returns their ids. Runs automatically on open. A pid reused by an unrelated
   * process reads as alive; such an experiment stays `running` until `claimExperiment` takes it.
   */
  markInterrupted(): ExperimentId[] {
    this.live();
    return this.db
      .transaction(() => {
        const marked: ExperimentId[] = [];
        const now = Date.now();
        for (const r of this.st.runningExperiments.all() as { id: string; pid: number | null }[]) {
          if (isPidAlive(r.pid)) continue;
          this.st.setStatus.run('interrupted', now, r.id);
          marked.push(asExperimentId(r.id));
        }
        return marked;
      })
      .immediate();
  }

  /**
   * Marks every experiment this process is running (`running`, pid = `process.pid`) as
   * `interrupted` and returns their ids: a process-level guard calls it before the process ends
   * on a fault, so `flowlab resume` can finish them. Returns `[]` once closed (never throws).
   */
  interruptOwn(): ExperimentId[] {
    if (!this.db.open) return [];
    const now = Date.now();
    const marked: ExperimentId[] = [];
    for (const r of this.st.runningExperiments.all() as { id: string; pid: number | null }[]) {
      if (r.pid !== process.pid) continue;
      this.st.setStatus.run('interrupted', now, r.id);
      marked.push(asExperimentId(r.id));
    }
    return marked;
  }

  private improveRepo?: SqliteImproveRepo;
  /** Rollout advantages and the prior library of hint cards (docs/hint-cards.md). */
  get improve(): ImproveRepo {
    this.live();
    return (this.improveRepo ??= new SqliteImproveRepo(this.db, this.file));
  }

  private weightsRepo?: SqliteWeightsRepo;
  /** Weight versions written by training, with their lineage (docs/laptop-rl.md). */
  get weights(): WeightsRepo {
    this.live();
    return (this.weightsRepo ??= new SqliteWeightsRepo(this.db, this.file));
  }

  private studiesRepo?: SqliteStudiesRepo;
  /** Studies (core/studies; docs/studies.md). */
  get studies(): StudiesRepo {
    this.live();
    return (this.studiesRepo ??= new SqliteStudiesRepo(this.db, this.file));
  }

  private reproRepo?: SqliteReproRepo;
  /** Reproducibility records: fingerprints and output digests (core/repro; `flowlab verify`). */
  get repro(): ReproRepo {
    this.live();
    return (this.reproRepo ??= new SqliteReproRepo(this.db, this.file));
  }

  private trainLoopsRepo?: SqliteTrainLoopsRepo;
  /** Train loops: plan, progress and status, for `resume` (core/training/loop.ts). */
  get trainLoops(): TrainLoopsRepo {
    this.live();
    return (this.trainLoopsRepo ??= new SqliteTrainLoopsRepo(this.db, this.file, this.weights as SqliteWeightsRepo));
  }

  private forksRepo?: SqliteForksRepo;
  /** Forks and their links to their parent runs (core/experiments/fork.ts; docs/fork.md). */
  get forks(): ForksRepo {
    this.live();
    return (this.forksRepo ??= new SqliteForksRepo(this.db, this.file, this));
  }

  private endpointDecisionsRepo?: SqliteEndpointDecisionsRepo;
  /** Endpoint decisions taken during each experiment (backpressure, failover; docs/scale.md). */
  get endpointDecisions(): EndpointDecisionsRepo {
    this.live();
    return (this.endpointDecisionsRepo ??= new SqliteEndpointDecisionsRepo(this.db, this.file));
  }

  private annotationsRepo?: SqliteAnnotationsRepo;
  /** A person's scores, tags and notes on runs and nodes (annotations.ts; migration 16). */
  get annotations(): AnnotationsRepo {
    this.live();
    return (this.annotationsRepo ??= new SqliteAnnotationsRepo(this.db, this.file));
  }

  private massRepo?: SqliteMassRepo;
  /** MASS loop records (core/mass). */
  get mass(): MassRepo {
    this.live();
    return (this.massRepo ??= new SqliteMassRepo(this.db, this.file));
  }

  /** See `Store.changeCounter`. */
  changeCounter(): number {
    this.live();
    const version = this.db.pragma('data_version', { simple: true }) as number;
    const own = (this.db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    return version + own;
  }

  /** See `Store.areaSignatures`. Tables a test store lacks sign as empty. */
  areaSignatures(): Record<StoreArea, string> {
    this.live();
    const have = new Set((this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{ name: string }>).map((r) => r.name));
    const sig = (table: string, latest?: string) =>
      have.has(table) ? `(SELECT count(*) || ':' || ${latest ? `coalesce(max(${latest}), 0)` : '0'} FROM ${table})` : `'-'`;
    const q = (parts: string[]) => parts.join(` || '|' || `);
    const row = this.db
      .prepare(
        `SELECT ${q([sig('experiments', 'updated_at'), sig('runs'), sig('annotations', 'created_at')])} AS experiments, ${q([sig('cards', 'created_at'), sig('card_uses')])} AS cards, ` +
          `${q([sig('weight_versions', 'created_at'), sig('train_loops', 'updated_at')])} AS learning, ${sig('studies', 'updated_at')} AS studies, ${sig('mass_records', 'created_at')} AS mass, ` +
          `${q([sig('workshop_sessions', 'updated_at'), sig('workshop_results', 'created_at'), sig('workshop_predictions', 'at')])} AS workshop`,
      )
      .get() as Record<StoreArea, string>;
    return { experiments: row.experiments, cards: row.cards, learning: row.learning, studies: row.studies, mass: row.mass, workshop: row.workshop };
  }

  private workshopsRepo?: SqliteWorkshopRepo;
  /** Workshop sessions, step results and predictions (core/workshop). */
  get workshops(): WorkshopRepo {
    this.live();
    return (this.workshopsRepo ??= new SqliteWorkshopRepo(this.db, this.file));
  }

  /** Whether `close()` has been called. */
  get closed(): boolean {
    return !this.db.open;
  }

  /** Closes the connection (checkpointing the WAL). Idempotent. */
  close(): void {
    OPEN.delete(this);
    if (this.db.open) this.db.close();
  }

  /**
   * Runs matching the filters and search text of `q` (runSearch.ts), one page and the total.
   * Errors: `BAD_QUERY` (a `RunQueryError` naming the field), `INVALID_RECORD` when the database
   * predates the search index (never after `openStore`, which migrates it).
   */
  searchRuns(q: RunQuery): RunSearchResult {
    this.live();
    if (!this.runIndex) throw new StoreError('INVALID_RECORD', `${this.file}: this database has no run search index (schema older than version 11)`, this.file);
    return this.runIndex.search(q);
  }

  /** Per experiment and role: mean ladder reward and blamed runs (roleTrends.ts). */
  roleTrends(): RoleTrendRow[] {
    this.live();
    return roleTrendsOf(this.db);
  }

  private mustExist(id: ExperimentId | string): void {
    this.live();
    if (!this.st.experimentExists.get(id)) throw this.notFound('experiment', id);
  }

  private notFound(what: 'experiment' | 'run', id: string): StoreError {
    return new StoreError('NOT_FOUND', `${this.file}: no ${what} ${id}`, String(id));
  }

  private live(): void {
    if (!this.db.open) throw new StoreError('CLOSED', `${this.file}: the store is closed`, this.file);
  }
}
