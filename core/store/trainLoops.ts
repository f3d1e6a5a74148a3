import type { Database, Statement } from 'better-sqlite3';
import { asExperimentId, type ExperimentId } from '../ids.ts';
import { StoreError } from './errors.ts';
import { isPidAlive } from './liveness.ts';
import type { ExperimentStatus } from './types.ts';
import type { NewWeightVersion, SqliteWeightsRepo, WeightVersion } from './weights.ts';

/** A train loop's status: as an experiment's (`interrupted`: its process died while it ran). */
export type TrainLoopStatus = ExperimentStatus;

/**
 * One train loop (core/training/loop.ts) as stored: what it plans and how far it got, so
 * `flowlab resume <loop-id>` can continue it from its last complete iteration.
 */
export interface TrainLoopRow {
  /** `tl-<yyyymmdd>-<hhmmss>-<4 base-36>` (core/training/loop.ts newLoopId). */
  id: string;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
  status: TrainLoopStatus;
  /** The process that runs it; absent once it is no longer running (finished or marked interrupted). */
  pid?: number;
  /** Iterations planned. */
  iterations: number;
  /** Iterations complete: 1..done have their versions recorded (`commitIteration`). */
  done: number;
  /** Its files are under `<versionsDir>/<id>/`. */
  versionsDir: string;
  /** What the experiment service rebuilds the loop from (core/experiments/trainLoop.ts `TrainLoopPlan`). */
  plan: Record<string, unknown>;
  /** The loop's progress as of iteration `done` (core/training/types.ts `TrainLoopState`). */
  state: Record<string, unknown>;
}

export type NewTrainLoop = Pick<TrainLoopRow, 'id' | 'iterations' | 'versionsDir' | 'plan' | 'state'>;

/** An experiment of a train loop, by its stored `config.trainLoop` (`iteration` for rollouts, `phase` for held-out). */
export interface TrainLoopExperiment {
  id: ExperimentId;
  status: ExperimentStatus;
  iteration?: number;
  phase?: string;
}

/** The port's `TrainLoopsRepo` (port.ts) over the store's connection: the train_loops table's SQL. */
export class SqliteTrainLoopsRepo {
  private readonly st: Record<'insert' | 'byId' | 'all' | 'running' | 'claim' | 'state' | 'commit' | 'finish' | 'experiments', Statement>;
  private readonly commitTx: (id: string, k: number, versions: readonly NewWeightVersion[], state: string) => WeightVersion[];

  constructor(private readonly db: Database, private readonly file: string, weights: SqliteWeightsRepo) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p(`INSERT INTO train_loops (id, created_at, updated_at, status, pid, iterations, done, versions_dir, plan_json, state_json)
        VALUES (?, ?, ?, 'running', ?, ?, 0, ?, ?, ?)`),
      byId: p('SELECT * FROM train_loops WHERE id = ?'),
      all: p('SELECT * FROM train_loops ORDER BY created_at DESC, rowid DESC'),
      running: p(`SELECT id, pid FROM train_loops WHERE status = 'running'`),
      claim: p(`UPDATE train_loops SET status = 'running', pid = ?, updated_at = ? WHERE id = ?`),
      state: p('UPDATE train_loops SET state_json = ?, updated_at = ? WHERE id = ?'),
      commit: p('UPDATE train_loops SET done = ?, state_json = ?, updated_at = ? WHERE id = ? AND done = ?'),
      finish: p('UPDATE train_loops SET status = ?, pid = NULL, updated_at = ? WHERE id = ?'), // a pid is kept only while running: no stale pid outlives its process
      experiments: p(`SELECT id, status, json_extract(config_json, '$.trainLoop.iteration') AS iteration, json_extract(config_json, '$.trainLoop.phase') AS phase
        FROM experiments WHERE json_extract(config_json, '$.trainLoop.loopId') = ? ORDER BY created_at, rowid`),
    };
    this.commitTx = db.transaction((id: string, k: number, versions: readonly NewWeightVersion[], state: string) => {
      const row = this.get(id);
      if (row.done >= k) throw new StoreError('RUN_EXISTS', `${this.file}: iteration ${k} of train loop ${id} is recorded already (${row.done} done)`, id);
      if (row.done !== k - 1) throw new StoreError('INVALID_RECORD', `${this.file}: train loop ${id} has ${row.done} iterations done; iteration ${k} cannot be recorded next`, id);
      const saved = versions.map((v) => weights.save(v));
      this.st.commit.run(k, state, Date.now(), id, k - 1);
      return saved;
    });
  }

  /** Stores a new loop (status `running`, this process, 0 iterations done). Errors: `EXPERIMENT_EXISTS` (the id is taken), `INVALID_RECORD`. */
  create(l: NewTrainLoop): TrainLoopRow {
    const now = Date.now();
    try {
      this.st.insert.run(l.id, now, now, process.pid, l.iterations, l.versionsDir, json(l.plan, l.id, 'plan'), json(l.state, l.id, 'state'));
    } catch (err) {
      if (/UNIQUE|PRIMARY KEY/.test((err as Error).message)) throw new StoreError('EXPERIMENT_EXISTS', `${this.file}: train loop ${l.id} already exists`, l.id, { cause: err });
      throw err;
    }
    return this.get(l.id);
  }

  /** Errors: `NOT_FOUND`. */
  get(id: string): TrainLoopRow {
    const l = this.find(id);
    if (!l) throw new StoreError('NOT_FOUND', `${this.file}: no train loop ${id}`, id);
    return l;
  }

  find(id: string): TrainLoopRow | undefined {
    const row = this.st.byId.get(id) as Row | undefined;
    return row && fromRow(row);
  }

  /** Every loop, newest first. */
  list(): TrainLoopRow[] {
    return (this.st.all.all() as Row[]).map(fromRow);
  }

  /** Whether the loop runs now in a live process (this one included). */
  isLive(id: string): boolean {
    const l = this.find(id);
    return Boolean(l && l.status === 'running' && (l.pid === process.pid || isPidAlive(l.pid)));
  }

  /**
   * Takes a loop over for this process (resume): status `running`, pid = this process.
   * Errors: `NOT_FOUND`; `EXPERIMENT_BUSY` when it is running in another live process (or in
   * this one: a loop is resumed once at a time).
   */
  claim(id: string): TrainLoopRow {
    return this.db
      .transaction(() => {
        const l = this.get(id);
        if (l.status === 'running' && (l.pid === process.pid || isPidAlive(l.pid))) {
          throw new StoreError('EXPERIMENT_BUSY', `${this.file}: train loop ${id} is running in process ${l.pid}`, id);
        }
        this.st.claim.run(process.pid, Date.now(), id);
        return this.get(id);
      })
      .immediate();
  }

  /** Replaces the loop's state (e.g. the held-out result before its first iteration). Errors: `NOT_FOUND`, `INVALID_RECORD`. */
  saveState(id: string, state: Record<string, unknown>): void {
    if (this.st.state.run(json(state, id, 'state'), Date.now(), id).changes === 0) throw new StoreError('NOT_FOUND', `${this.file}: no train loop ${id}`, id);
  }

  /**
   * Records iteration `k` of a loop in one transaction: every role's new version (in order, each
   * checked as `WeightsRepo.save` checks it), `done = k` and the new state — all or nothing.
   * Errors: `NOT_FOUND`; `RUN_EXISTS` (iteration k is recorded already); `INVALID_RECORD`
   * (k is not `done + 1`, or a record cannot be stored); the errors of `WeightsRepo.save`.
   */
  commitIteration(id: string, k: number, versions: readonly NewWeightVersion[], state: Record<string, unknown>): WeightVersion[] {
    return this.commitTx(id, k, versions, json(state, id, 'state'));
  }

  /** Sets the loop's final status. Errors: `NOT_FOUND`. */
  finish(id: string, status: Exclude<TrainLoopStatus, 'running'>): void {
    if (this.st.finish.run(status, Date.now(), id).changes === 0) throw new StoreError('NOT_FOUND', `${this.file}: no train loop ${id}`, id);
  }

  /** Marks `running` loops whose process is gone as `interrupted`; returns their ids. */
  markInterrupted(): string[] {
    return this.db
      .transaction(() => {
        const marked: string[] = [];
        for (const r of this.st.running.all() as { id: string; pid: number | null }[]) {
          if (isPidAlive(r.pid)) continue;
          this.st.finish.run('interrupted', Date.now(), r.id);
          marked.push(r.id);
        }
        return marked;
      })
      .immediate();
  }

  /** The loop's experiments (`config.trainLoop.loopId` = id), oldest first. */
  experimentsOf(id: string): TrainLoopExperiment[] {
    return (this.st.experiments.all(id) as Array<{ id: string; status: ExperimentStatus; iteration: number | null; phase: string | null }>).map((r) => ({
      id: asExperimentId(r.id),
      status: r.status,
      ...(r.iteration != null && { iteration: r.iteration }),
      ...(r.phase != null && { phase: r.phase }),
    }));
  }
}

interface Row {
  id: string;
  created_at: number;
  updated_at: number;
  status: TrainLoopStatus;
  pid: number | null;
  iterations: number;
  done: number;
  versions_dir: string;
  plan_json: string;
  state_json: string;
}

function fromRow(r: Row): TrainLoopRow {
  return {
    id: r.id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    status: r.status,
    ...(r.pid != null && { pid: r.pid }),
    iterations: r.iterations,
    done: r.done,
    versionsDir: r.versions_dir,
    plan: JSON.parse(r.plan_json) as Record<string, unknown>,
    state: JSON.parse(r.state_json) as Record<string, unknown>,
  };
}

function json(v: unknown, id: string, what: string): string {
  try {
    return JSON.stringify(v ?? {});
  } catch (err) {
    throw new StoreError('INVALID_RECORD', `train loop ${id}: its ${what} is not JSON-serialisable`, id, { cause: err });
  }
}
