import type { Database, Statement } from 'better-sqlite3';
import { StoreError } from './errors.ts';

/**
 * Workshop sessions (core/workshop): step results recorded once (by a rehearsal, or live in a
 * session) and kept as the exact JSON text they were written with, so a room replays them byte
 * for byte; the sessions' step state; the room's predictions, one per attendee and step.
 */
export interface WorkshopSessionRow {
  id: string;
  scenarioId: string;
  scenarioHash: string;
  mode: 'room' | 'live';
  /** core/workshop WorkshopState. */
  state: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** One stored step result: `source` is `rehearsal:<scenario hash>` or `session:<session id>`. */
export interface WorkshopResultRow {
  source: string;
  stepId: string;
  stepIndex: number;
  /** The result as written (JSON text, never re-serialised). */
  json: string;
  createdAt: number;
}

export interface WorkshopPredictionRow {
  attendee: string;
  choice: string;
  at: number;
}

/** The store's workshop tables (port.ts `Store.workshops`). */
export interface WorkshopRepo {
  /** Records a step result (replacing an earlier one of the same source and step). */
  putResult(source: string, stepId: string, stepIndex: number, json: string): void;
  getResult(source: string, stepId: string): WorkshopResultRow | undefined;
  listResults(source: string): WorkshopResultRow[];
  /** Errors: `EXPERIMENT_EXISTS` (the id is taken), `INVALID_RECORD` (state not serialisable). */
  createSession(row: Omit<WorkshopSessionRow, 'createdAt' | 'updatedAt'>): WorkshopSessionRow;
  /** Errors: `NOT_FOUND`. */
  getSession(id: string): WorkshopSessionRow;
  /** Errors: `NOT_FOUND`. */
  saveState(id: string, state: Record<string, unknown>): void;
  /** Sets (or replaces) an attendee's prediction for a step. */
  putPrediction(sessionId: string, stepId: string, attendee: string, choice: string): void;
  /** A step's predictions, oldest first. */
  listPredictions(sessionId: string, stepId: string): WorkshopPredictionRow[];
  /** Deletes every prediction of one attendee in a session (the presenter removed them); returns how many. */
  deleteAttendee(sessionId: string, attendee: string): number;
  /** Deletes every prediction of the session and saves `state`, in one transaction. Errors: `NOT_FOUND`. */
  resetSession(id: string, state: Record<string, unknown>): void;
}

interface SessionRow { id: string; scenario_id: string; scenario_hash: string; mode: 'room' | 'live'; state_json: string; created_at: number; updated_at: number }
interface ResultRow { source: string; step_id: string; step_index: number; result_json: string; created_at: number }

const sessionOf = (r: SessionRow): WorkshopSessionRow => ({
  id: r.id, scenarioId: r.scenario_id, scenarioHash: r.scenario_hash, mode: r.mode, state: JSON.parse(r.state_json) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at,
});
const resultOf = (r: ResultRow): WorkshopResultRow => ({ source: r.source, stepId: r.step_id, stepIndex: r.step_index, json: r.result_json, createdAt: r.created_at });

/** The port's `WorkshopRepo` over the store's connection (migration 9). */
export class SqliteWorkshopRepo implements WorkshopRepo {
  private readonly st: Record<'putResult' | 'getResult' | 'listResults' | 'insert' | 'byId' | 'save' | 'predict' | 'predictions' | 'clear' | 'dropAttendee', Statement>;

  constructor(private readonly db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      putResult: p('INSERT OR REPLACE INTO workshop_results (source, step_id, step_index, result_json, created_at) VALUES (?,?,?,?,?)'),
      getResult: p('SELECT * FROM workshop_results WHERE source = ? AND step_id = ?'),
      listResults: p('SELECT * FROM workshop_results WHERE source = ? ORDER BY step_index'),
      insert: p('INSERT INTO workshop_sessions (id, scenario_id, scenario_hash, mode, state_json, created_at, updated_at) VALUES (?,?,?,?,?,?,?)'),
      byId: p('SELECT * FROM workshop_sessions WHERE id = ?'),
      save: p('UPDATE workshop_sessions SET state_json = ?, updated_at = ? WHERE id = ?'),
      predict: p('INSERT OR REPLACE INTO workshop_predictions (session_id, step_id, attendee, choice, at) VALUES (?,?,?,?,?)'),
      predictions: p('SELECT attendee, choice, at FROM workshop_predictions WHERE session_id = ? AND step_id = ? ORDER BY at, attendee'),
      clear: p('DELETE FROM workshop_predictions WHERE session_id = ?'),
      dropAttendee: p('DELETE FROM workshop_predictions WHERE session_id = ? AND attendee = ?'),
    };
  }

  putResult(source: string, stepId: string, stepIndex: number, json: string): void {
    this.st.putResult.run(source, stepId, stepIndex, json, Date.now());
  }

  getResult(source: string, stepId: string): WorkshopResultRow | undefined {
    const r = this.st.getResult.get(source, stepId) as ResultRow | undefined;
    return r && resultOf(r);
  }

  listResults(source: string): WorkshopResultRow[] {
    return (this.st.listResults.all(source) as ResultRow[]).map(resultOf);
  }

  createSession(row: Omit<WorkshopSessionRow, 'createdAt' | 'updatedAt'>): WorkshopSessionRow {
    const now = Date.now();
    const state = this.json(row.state, row.id);
    if (this.st.byId.get(row.id)) throw new StoreError('EXPERIMENT_EXISTS', `${this.file}: workshop session ${row.id} exists`, row.id);
    this.st.insert.run(row.id, row.scenarioId, row.scenarioHash, row.mode, state, now, now);
    return { ...row, createdAt: now, updatedAt: now };
  }

  getSession(id: string): WorkshopSessionRow {
    const r = this.st.byId.get(id) as SessionRow | undefined;
    if (!r) throw new StoreError('NOT_FOUND', `${this.file}: no workshop session ${id}`, id);
    return sessionOf(r);
  }

  saveState(id: string, state: Record<string, unknown>): void {
    const res = this.st.save.run(this.json(state, id), Date.now(), id);
    if (res.changes === 0) throw new StoreError('NOT_FOUND', `${this.file}: no workshop session ${id}`, id);
  }

  putPrediction(sessionId: string, stepId: string, attendee: string, choice: string): void {
    this.st.predict.run(sessionId, stepId, attendee, choice, Date.now());
  }

  listPredictions(sessionId: string, stepId: string): WorkshopPredictionRow[] {
    return this.st.predictions.all(sessionId, stepId) as WorkshopPredictionRow[];
  }

  deleteAttendee(sessionId: string, attendee: string): number {
    return this.st.dropAttendee.run(sessionId, attendee).changes;
  }

  resetSession(id: string, state: Record<string, unknown>): void {
    this.db.transaction(() => {
      this.getSession(id);
      this.st.clear.run(id);
      this.saveState(id, state);
    }).immediate();
  }

  private json(v: unknown, id: string): string {
    try {
      return JSON.stringify(v);
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `workshop session ${id}: state is not JSON-serialisable`, id, { cause: err });
    }
  }
}
