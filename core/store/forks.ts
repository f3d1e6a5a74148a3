import type { Database, Statement } from 'better-sqlite3';
import type { RunRecord } from '../results/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import { StoreError } from './errors.ts';
import type { ExperimentRow, NewExperiment } from './types.ts';

/**
 * The link of a fork (core/experiments/fork.ts) to the run it was forked from: the parent run,
 * the node run it was forked at (node id and attempt) and the intervention made there (plain
 * JSON: `{kind: 'output' | 'prompt' | 'role-model' | 'seed' | 'unfault', ...}`).
 */
export interface ForkLink {
  /** The fork's own run id. */
  runId: string;
  /** The fork's experiment (kind `fork`, one planned task). */
  experimentId: string;
  parentRunId: string;
  parentExperimentId: string;
  nodeId: string;
  /** The attempt of the node run forked at (attempts start at 1). */
  attempt: number;
  intervention: Record<string, unknown>;
  /** Epoch ms (set by the store). */
  createdAt?: number;
}

/** The forks of the store (port.ts `Store.forks`, migration 11 `run_forks`). */
export interface ForksRepo {
  /**
   * Stores a fork whole, in ONE transaction: its experiment (status `completed`), its run with
   * events and calls, and its link to the parent. Nothing is written on error.
   * Errors: `NOT_FOUND` (no parent run), `EXPERIMENT_EXISTS`, `RUN_EXISTS`, `INVALID_RECORD`.
   */
  commit(fork: { experiment: NewExperiment; run: RunRecord; events: readonly NodeEvent[]; link: Omit<ForkLink, 'createdAt' | 'experimentId' | 'runId'> }): ForkLink;
  /** The link of a fork run, or undefined when the run is not a fork. */
  linkOf(runId: string): ForkLink | undefined;
  /** The forks of a run, oldest first. */
  forksOf(parentRunId: string): ForkLink[];
}

/** What the repo needs of the store it sits in: the experiment and run writers (each its own transaction, nested here as savepoints). */
export interface ForkWriters {
  createExperiment(input: NewExperiment): ExperimentRow;
  saveRun(run: RunRecord, events: readonly NodeEvent[]): void;
  finishExperiment(id: string, status: 'completed'): void;
  getRun(runId: string): RunRecord;
}

interface Row { run_id: string; experiment_id: string; parent_run_id: string; parent_experiment_id: string; node_id: string; attempt: number; intervention_json: string; created_at: number }

const fromRow = (r: Row): ForkLink => ({
  runId: r.run_id, experimentId: r.experiment_id, parentRunId: r.parent_run_id, parentExperimentId: r.parent_experiment_id,
  nodeId: r.node_id, attempt: r.attempt, intervention: JSON.parse(r.intervention_json) as Record<string, unknown>, createdAt: r.created_at,
});

/** The port's `ForksRepo` over the store's connection. */
export class SqliteForksRepo implements ForksRepo {
  private readonly st: Record<'insert' | 'byRun' | 'byParent', Statement>;

  constructor(private readonly db: Database, private readonly file: string, private readonly writers: ForkWriters) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p('INSERT INTO run_forks (run_id, experiment_id, parent_run_id, parent_experiment_id, node_id, attempt, intervention_json, created_at) VALUES (?,?,?,?,?,?,?,?)'),
      byRun: p('SELECT * FROM run_forks WHERE run_id = ?'),
      byParent: p('SELECT * FROM run_forks WHERE parent_run_id = ? ORDER BY created_at, rowid'),
    };
  }

  commit(fork: Parameters<ForksRepo['commit']>[0]): ForkLink {
    const { link } = fork;
    let intervention: string;
    try {
      intervention = JSON.stringify(link.intervention);
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `${this.file}: fork of ${link.parentRunId}: the intervention is not JSON-serialisable`, link.parentRunId, { cause: err });
    }
    this.writers.getRun(link.parentRunId); // NOT_FOUND before anything is written
    const now = Date.now();
    this.db.transaction(() => {
      const exp = this.writers.createExperiment(fork.experiment);
      this.writers.saveRun(fork.run, fork.events);
      this.writers.finishExperiment(exp.id, 'completed');
      this.st.insert.run(fork.run.runId, exp.id, link.parentRunId, link.parentExperimentId, link.nodeId, link.attempt, intervention, now);
    })();
    return this.linkOf(fork.run.runId)!;
  }

  linkOf(runId: string): ForkLink | undefined {
    const r = this.st.byRun.get(runId) as Row | undefined;
    return r && fromRow(r);
  }

  forksOf(parentRunId: string): ForkLink[] {
    return (this.st.byParent.all(parentRunId) as Row[]).map(fromRow);
  }
}
