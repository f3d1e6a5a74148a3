import type { Database, Statement } from 'better-sqlite3';
import { StoreError } from './errors.ts';

/**
 * One record of a MASS loop (core/mass): the evolution's own settings, a design version, a
 * workspace summary, a verdict, an optimizer proposal, a champion change. Write-once: a record's
 * (evolution, kind, key) names it, so a resumed loop that writes the same record again changes
 * nothing (nothing is duplicated), and one that would write a different value is refused.
 */
export interface MassRecord {
  evolutionId: string;
  kind: string;
  /** Unique within (evolution, kind), e.g. `t0/v3`. */
  key: string;
  taskIndex?: number;
  value: unknown;
  /** Order of writing within the evolution (set by the store). */
  seq?: number;
  /** Epoch ms (set by the store). */
  createdAt?: number;
}

/** The MASS records of the store (port.ts `Store.mass`). */
export interface MassRepo {
  /**
   * Writes a record once. Returns `inserted`, or `exists` when the same (evolution, kind, key)
   * already holds the same value (canonical JSON). Errors: `RUN_EXISTS` when it holds another
   * value (a resumed loop diverged), `INVALID_RECORD` (value not serialisable).
   */
  put(rec: MassRecord): 'inserted' | 'exists';
  get(evolutionId: string, kind: string, key: string): MassRecord | undefined;
  /** An evolution's records in writing order, optionally of one kind. */
  list(evolutionId: string, kind?: string): MassRecord[];
  /** Ids of the evolutions with records, oldest first. */
  evolutions(): string[];
}

/** The port's `MassRepo` over the store's connection (migration 6, `mass_records`). */
export class SqliteMassRepo implements MassRepo {
  private readonly st: Record<'insert' | 'get' | 'all' | 'byKind' | 'next' | 'evolutions', Statement>;

  constructor(private readonly db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p('INSERT INTO mass_records (evolution_id, kind, key, task_index, seq, json, created_at) VALUES (?,?,?,?,?,?,?)'),
      get: p('SELECT * FROM mass_records WHERE evolution_id = ? AND kind = ? AND key = ?'),
      all: p('SELECT * FROM mass_records WHERE evolution_id = ? ORDER BY seq'),
      byKind: p('SELECT * FROM mass_records WHERE evolution_id = ? AND kind = ? ORDER BY seq'),
      next: p('SELECT COALESCE(MAX(seq), -1) + 1 FROM mass_records WHERE evolution_id = ?').pluck(),
      evolutions: p('SELECT evolution_id FROM mass_records GROUP BY evolution_id ORDER BY MIN(created_at), evolution_id').pluck(),
    };
  }

  put(rec: MassRecord): 'inserted' | 'exists' {
    let json: string;
    try {
      json = canonicalJson(rec.value);
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `MASS record ${rec.evolutionId} ${rec.kind} ${rec.key}: value is not JSON-serialisable`, rec.evolutionId, { cause: err });
    }
    return this.db.transaction((): 'inserted' | 'exists' => {
      const old = this.st.get.get(rec.evolutionId, rec.kind, rec.key) as Row | undefined;
      if (old) {
        if (old.json === json) return 'exists';
        throw new StoreError('RUN_EXISTS', `${this.file}: MASS record ${rec.evolutionId} ${rec.kind} ${rec.key} is stored with another value; a record is written once`, rec.evolutionId);
      }
      const seq = this.st.next.get(rec.evolutionId) as number;
      this.st.insert.run(rec.evolutionId, rec.kind, rec.key, rec.taskIndex ?? null, seq, json, Date.now());
      return 'inserted';
    }).immediate();
  }

  get(evolutionId: string, kind: string, key: string): MassRecord | undefined {
    const row = this.st.get.get(evolutionId, kind, key) as Row | undefined;
    return row && fromRow(row);
  }

  list(evolutionId: string, kind?: string): MassRecord[] {
    const rows = (kind === undefined ? this.st.all.all(evolutionId) : this.st.byKind.all(evolutionId, kind)) as Row[];
    return rows.map(fromRow);
  }

  evolutions(): string[] {
    return this.st.evolutions.all() as string[];
  }
}

interface Row {
  evolution_id: string;
  kind: string;
  key: string;
  task_index: number | null;
  seq: number;
  json: string;
  created_at: number;
}

function fromRow(r: Row): MassRecord {
  const rec: MassRecord = { evolutionId: r.evolution_id, kind: r.kind, key: r.key, value: JSON.parse(r.json) as unknown, seq: r.seq, createdAt: r.created_at };
  if (r.task_index != null) rec.taskIndex = r.task_index;
  return rec;
}

/** JSON with object keys sorted (so the same value always stores the same text). */
export function canonicalJson(v: unknown): string {
  const s = JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
  if (s === undefined) throw new TypeError('undefined is not JSON');
  return s;
}
