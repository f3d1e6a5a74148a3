import type { Database, Statement } from 'better-sqlite3';
import { StoreError } from './errors.ts';

/** Lifecycle of a study. `planned`: a dry run recorded its estimate; nothing ran yet. */
export type StudyStatus = 'planned' | 'running' | 'completed' | 'stopped' | 'interrupted' | 'failed';

/**
 * A study (core/studies): a plan of conditions × zones × seeds × models whose cells are `run`
 * experiments with ids derived from the study id (core/studies/cells.ts). The row keeps the
 * validated plan and the study's own state (finished train loops, measured speeds, the dry
 * run's estimate, wall seconds) as JSON.
 */
export interface StudyRow {
  /** `st-<name>-<8 hex>` (core/studies/cells.ts studyIdOf). */
  id: string;
  name: string;
  /** The validated plan (defaults filled), with its workflow and model paths resolved. */
  plan: unknown;
  /** The plan file it was read from, when known. */
  planFile?: string;
  /** The process that runs (or last ran) it. */
  pid?: number;
  status: StudyStatus;
  /** core/studies StudyState. */
  state: Record<string, unknown>;
  /** Epoch ms. */
  createdAt: number;
  updatedAt: number;
}

interface Row { id: string; name: string; plan_json: string; plan_file: string | null; pid: number | null; status: StudyStatus; state_json: string; created_at: number; updated_at: number }

const fromRow = (r: Row): StudyRow => ({
  id: r.id, name: r.name, plan: JSON.parse(r.plan_json), ...(r.plan_file !== null && { planFile: r.plan_file }), ...(r.pid !== null && { pid: r.pid }),
  status: r.status, state: JSON.parse(r.state_json) as Record<string, unknown>, createdAt: r.created_at, updatedAt: r.updated_at,
});

/** The port's `StudiesRepo` (port.ts) over the store's connection. */
export class SqliteStudiesRepo {
  private readonly st: Record<'insert' | 'byId' | 'all' | 'update', Statement>;

  constructor(db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p('INSERT INTO studies (id, name, plan_json, plan_file, pid, status, state_json, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)'),
      byId: p('SELECT * FROM studies WHERE id = ?'),
      all: p('SELECT * FROM studies ORDER BY created_at DESC, rowid DESC'),
      update: p('UPDATE studies SET status = ?, state_json = ?, pid = ?, updated_at = ? WHERE id = ?'),
    };
  }

  /** Creates a study (status `planned` unless given). Errors: `EXPERIMENT_EXISTS` (the id is taken), `INVALID_RECORD` (plan or state not serialisable). */
  create(input: { id: string; name: string; plan: unknown; planFile?: string; status?: StudyStatus; state?: Record<string, unknown> }): StudyRow {
    const now = Date.now();
    let plan: string;
    let state: string;
    try {
      plan = JSON.stringify(input.plan);
      state = JSON.stringify(input.state ?? {});
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `study ${input.id}: plan or state is not JSON-serialisable`, input.id, { cause: err });
    }
    try {
      this.st.insert.run(input.id, input.name, plan, input.planFile ?? null, process.pid, input.status ?? 'planned', state, now, now);
    } catch (err) {
      if (/UNIQUE|PRIMARY KEY/.test((err as Error).message)) throw new StoreError('EXPERIMENT_EXISTS', `${this.file}: study ${input.id} already exists`, input.id, { cause: err });
      throw err;
    }
    return this.get(input.id);
  }

  find(id: string): StudyRow | undefined {
    const row = this.st.byId.get(id) as Row | undefined;
    return row && fromRow(row);
  }

  /** Errors: `NOT_FOUND`. */
  get(id: string): StudyRow {
    const s = this.find(id);
    if (!s) throw new StoreError('NOT_FOUND', `${this.file}: no study ${id}`, id);
    return s;
  }

  /** Every study, newest first. */
  list(): StudyRow[] {
    return (this.st.all.all() as Row[]).map(fromRow);
  }

  /** Sets the status and/or merges `state` into the stored state (top-level keys replaced); records this process. Errors: `NOT_FOUND`, `INVALID_RECORD`. */
  update(id: string, change: { status?: StudyStatus; state?: Record<string, unknown> }): StudyRow {
    const cur = this.get(id);
    let state: string;
    try {
      state = JSON.stringify({ ...cur.state, ...change.state });
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `study ${id}: state is not JSON-serialisable`, id, { cause: err });
    }
    this.st.update.run(change.status ?? cur.status, state, process.pid, Date.now(), id);
    return this.get(id);
  }
}
