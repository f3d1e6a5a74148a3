/**
 * The SQLite store's run writer: finished runs with their node events and model calls, each batch
 * in ONE transaction (all or nothing). Multi-row inserts on the fast path (`insertBatch`; with the
 * foreign-key checks done here for large batches, `saveBulk`), and run by run (`writeRun`) when
 * that fails, which stops at the first error with its code and message. `SqliteStore.saveRun` and
 * `saveRuns` call it.
 */
import type { Database } from 'better-sqlite3';
import type { NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { callParams, callSettingsParams, eventParams, pushCallParams, pushEventParams, pushRunParams, runParams } from './codec.ts';
import { invalidRecord, sqliteCode, StoreError } from './errors.ts';
import type { RunWithEvents } from './port.ts';
import type { RunSearchIndex } from './runSearch.ts';
import { MANY_ROWS, type Statements } from './statements.ts';

/** Writes runs into one connection's tables (see the file's header). */
export class RunWriter {
  private readonly writeRuns: (batch: readonly RunWithEvents[]) => void;

  constructor(
    private readonly db: Database,
    private readonly st: Statements,
    /** The database file, named in error messages. */
    private readonly file: string,
    /** The run search index kept with the runs (absent in a store opened with an older migration list). */
    private readonly runIndex: RunSearchIndex | undefined,
  ) {
    this.writeRuns = db.transaction((batch: readonly RunWithEvents[]) => {
      for (const { run, events } of batch) this.writeRun(run, events);
    });
  }

  /**
   * Stores many runs in ONE transaction (all or nothing): the fast path for imports and benchmarks.
   * Same checks and errors as `SqliteStore.saveRun`.
   */
  save(batch: readonly RunWithEvents[]): void {
    if (batch.length >= BULK_RUNS && !this.db.inTransaction) {
      // The bulk path failed on this batch; the savepoint path would fail the same way, so go
      // straight to run by run, which reports the first error.
      if (!this.saveBulk(batch)) this.db.transaction(() => this.writeRuns(batch))();
      return;
    }
    // Fast path: multi-row inserts inside a savepoint. On any error the savepoint is rolled back
    // and the batch is written again run by run, which stops at the same first error, with the
    // same code and message, as it always has. Both write the same rows with the same ids.
    this.db.transaction(() => {
      try {
        this.db.transaction(() => this.insertBatch(batch))();
      } catch {
        this.writeRuns(batch);
      }
    })();
  }

  /**
   * `saveRuns`' path for large batches: `insertBatch` in one transaction with SQLite's foreign-key
   * checks off, as every foreign key of the rows it writes is checked here instead: each run's
   * planned task (and so its experiment) must exist, its events carry its id and are inserted after
   * it, and each call points at the event just numbered. True when the batch is stored; false when
   * anything failed, with nothing written (the caller writes it the checked way, which reports the
   * error). The pragma is per connection and cannot change inside a transaction, hence the size gate.
   */
  private saveBulk(batch: readonly RunWithEvents[]): boolean {
    this.db.pragma('foreign_keys = OFF');
    try {
      this.db.transaction(() => this.insertBatch(batch, true))();
      return true;
    } catch {
      return false;
    } finally {
      this.db.pragma('foreign_keys = ON');
    }
  }

  /**
   * `saveRuns`' fast path: runs, node events and model calls in multi-row INSERTs of up to
   * `MANY_ROWS` rows, `RUNS_PER_GROUP` runs at a time (runs, then their events, then their calls,
   * so every foreign key's parent is in first). Node event ids are numbered here as SQLite numbers
   * them one insert at a time (max(id) + 1 onwards, read after the first run insert took the write
   * lock), so the rows and ids equal `writeRun`'s. `checkParents`: look each run's planned task up
   * (for `saveBulk`, where SQLite's foreign-key checks are off). Throws on any problem; the caller
   * falls back.
   */
  private insertBatch(batch: readonly RunWithEvents[], checkParents = false): void {
    const st = this.st;
    let nextEventId = 0;
    for (let g = 0; g < batch.length; g += RUNS_PER_GROUP) {
      const group = batch.slice(g, g + RUNS_PER_GROUP);
      const runs = new RowBuffer(st, 'runs');
      for (const { run } of group) {
        if (checkParents && !st.taskExists.get(run.experimentId, run.taskIndex)) throw new Error('no such planned task');
        pushRunParams(runs.row(), run);
      }
      runs.flush();
      if (g === 0) {
        const max = (st.maxEventId.get() as number | null) ?? 0;
        if (!Number.isSafeInteger(max) || max > Number.MAX_SAFE_INTEGER / 2) throw new StoreError('INVALID_RECORD', 'event ids near the limit: numbered by SQLite');
        nextEventId = max + 1;
      }
      const events = new RowBuffer(st, 'node_events');
      const calls = new RowBuffer(st, 'model_calls', events); // a call's event goes in before it
      const settings: unknown[][] = [];
      for (const { run, events: evs } of group) {
        for (const e of evs) {
          if (e.runId !== run.runId) throw new StoreError('INVALID_RECORD', 'event of another run');
          const id = nextEventId++;
          const row = events.row();
          row.push(id);
          pushEventParams(row, run.runId, e);
          for (const c of e.calls ?? []) {
            pushCallParams(calls.row(), run.runId, id, e, c);
            const extra = st.insertCallSettings && callSettingsParams(run.runId, id, e, c, st.callSettingsRepair);
            if (extra) settings.push(extra);
          }
        }
      }
      events.flush();
      calls.flush();
      for (const row of settings) st.insertCallSettings!.run(row);
      if (this.runIndex) for (const { run, events: evs } of group) this.runIndex.index(run, evs);
    }
  }

  private writeRun(run: RunRecord, events: readonly NodeEvent[]): void {
    const st = this.st;
    try {
      st.insertRun.run(runParams(run));
    } catch (err) {
      if (err instanceof StoreError) throw err;
      const code = sqliteCode(err);
      if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
        const what = /runs\.id/.test((err as Error).message)
          ? `run id ${run.runId}`
          : `a run for task ${run.taskIndex} of experiment ${run.experimentId}`;
        throw new StoreError('RUN_EXISTS', `${this.file}: ${what} is already stored`, String(run.runId), { cause: err });
      }
      if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
        const what = st.experimentExists.get(run.experimentId)
          ? `experiment ${run.experimentId} has no planned task ${run.taskIndex}`
          : `no experiment ${run.experimentId}`;
        throw new StoreError('NOT_FOUND', `${this.file}: cannot store run ${run.runId}: ${what}`, String(run.runId), { cause: err });
      }
      throw invalidRecord(err, `run ${run.runId}`);
    }
    for (const e of events) {
      if (e.runId !== run.runId) {
        throw new StoreError('INVALID_RECORD', `run ${run.runId}: event for node ${e.nodeId} (seq ${e.seq}) belongs to run ${e.runId}`, String(run.runId));
      }
      let eventId: number;
      try {
        eventId = Number(st.insertEvent.run(eventParams(run.runId, e)).lastInsertRowid);
      } catch (err) {
        throw invalidRecord(err, `run ${run.runId} node ${e.nodeId} attempt ${e.attempt} (seq ${e.seq})`);
      }
      for (const c of e.calls ?? []) {
        try {
          st.insertCall.run(callParams(run.runId, eventId, e, c));
          const extra = st.insertCallSettings && callSettingsParams(run.runId, eventId, e, c, st.callSettingsRepair);
          if (extra) st.insertCallSettings!.run(extra);
        } catch (err) {
          throw invalidRecord(err, `run ${run.runId} node ${e.nodeId} attempt ${e.attempt} call ${c.callIndex}`);
        }
      }
    }
    this.runIndex?.index(run, events);
  }
}

/** Batches of at least this many runs take `saveBulk` (two pragma changes, each re-preparing the statements, per batch). */
const BULK_RUNS = 64;

/** Runs per group of `insertBatch`: a group's runs, events and calls are inserted before the next group's. */
const RUNS_PER_GROUP = 256;

/**
 * Rows for one table's multi-row INSERTs: `row()` starts a row; a full statement's worth
 * (`MANY_ROWS`) is inserted at once, after the parent buffer's rows.
 */
class RowBuffer {
  private values: unknown[] = [];
  private rows = 0;
  constructor(
    private readonly st: Statements,
    private readonly table: 'runs' | 'node_events' | 'model_calls',
    /** Flushed before this buffer: the table its foreign key points at. */
    private readonly parent?: RowBuffer,
  ) {}

  /** The array to push the next row's values onto. */
  row(): unknown[] {
    if (this.rows === MANY_ROWS) this.flush();
    this.rows++;
    return this.values;
  }

  /** Inserts the buffered rows (if any). */
  flush(): void {
    if (this.rows === 0) return;
    this.parent?.flush();
    this.st.insertMany(this.table, this.rows).run(this.values);
    this.values.length = 0; // reused: better-sqlite3 has bound and copied every value
    this.rows = 0;
  }
}
