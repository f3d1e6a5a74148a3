import { randomBytes } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { StoreError } from './errors.ts';

/**
 * One weight version of a role (docs/laptop-rl.md): a GGUF written by a training step, with its lineage.
 * Versions are immutable once saved; a later run can give the role this file
 * (`flowlab run --role-version role=<id>`).
 */
export interface WeightVersion {
  /** `wv-<yyyymmdd>-<hhmmss>-<6 base36>` unless given. */
  id: string;
  role: string;
  /** The GGUF the lineage started from (the untrained model). */
  basePath: string;
  /** This version's GGUF (absolute path). */
  path: string;
  /** The version this one was trained from; absent for the first version of a lineage. */
  parentId?: string;
  /** The experiment whose rollouts (or stored runs) it was trained on. */
  experimentId?: string;
  /** Train-loop iteration, 1-based; absent for offline steps (`flowlab train`). */
  iteration?: number;
  /** Hyper-parameters of the step(s) (lr, kl, temperature, group, mode, ...). */
  hyper: Record<string, unknown>;
  /** What was measured (loss, kl, reward, ...). */
  metrics: Record<string, unknown>;
  /** Epoch ms. */
  createdAt: number;
}

export type NewWeightVersion = Omit<WeightVersion, 'id' | 'createdAt'> & { id?: string; createdAt?: number };

/** A fresh weight-version id, sortable by time. */
export function newWeightVersionId(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  const rand = [...randomBytes(6)].map((b) => (b % 36).toString(36)).join('');
  return `wv-${stamp}-${rand}`;
}

/** The port's `WeightsRepo` (port.ts) over the store's connection, the only place its SQL lives (`SqliteStore.weights` checks it against the port). */
export class SqliteWeightsRepo {
  private readonly st: Record<'insert' | 'byId' | 'byRole' | 'all' | 'byPath', Statement>;

  constructor(db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p(`INSERT INTO weight_versions (id, role, base_path, path, parent_id, experiment_id, iteration, hyper_json, metrics_json, created_at)
        VALUES (?,?,?,?,?,?,?,?,?,?)`),
      byId: p('SELECT * FROM weight_versions WHERE id = ?'),
      byRole: p('SELECT * FROM weight_versions WHERE role = ? ORDER BY created_at, rowid'),
      all: p('SELECT * FROM weight_versions ORDER BY created_at, rowid'),
      byPath: p('SELECT * FROM weight_versions WHERE path = ? ORDER BY created_at DESC, rowid DESC LIMIT 1'),
    };
  }

  /**
   * Stores a version and returns it as stored. Errors: `RUN_EXISTS` (the id is taken),
   * `NOT_FOUND` (the parent is not stored), `INVALID_RECORD` (hyper/metrics not serialisable).
   */
  save(v: NewWeightVersion): WeightVersion {
    const version: WeightVersion = { ...v, id: v.id ?? newWeightVersionId(), createdAt: v.createdAt ?? Date.now() };
    if (version.parentId && !this.find(version.parentId)) {
      throw new StoreError('NOT_FOUND', `${this.file}: weight version ${version.id} names parent ${version.parentId}, which is not stored`, version.id);
    }
    let hyper: string;
    let metrics: string;
    try {
      hyper = JSON.stringify(version.hyper ?? {});
      metrics = JSON.stringify(version.metrics ?? {});
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `weight version ${version.id}: hyper-parameters or metrics are not JSON-serialisable`, version.id, { cause: err });
    }
    try {
      this.st.insert.run(version.id, version.role, version.basePath, version.path, version.parentId ?? null, version.experimentId ?? null,
        version.iteration ?? null, hyper, metrics, version.createdAt);
    } catch (err) {
      if (/UNIQUE|PRIMARY KEY/.test((err as Error).message)) throw new StoreError('RUN_EXISTS', `${this.file}: weight version ${version.id} already exists`, version.id, { cause: err });
      throw err;
    }
    return this.get(version.id);
  }

  /** The version with this id. Errors: `NOT_FOUND`. */
  get(id: string): WeightVersion {
    const v = this.find(id);
    if (!v) throw new StoreError('NOT_FOUND', `${this.file}: no weight version ${id}`, id);
    return v;
  }

  find(id: string): WeightVersion | undefined {
    const row = this.st.byId.get(id) as Row | undefined;
    return row && fromRow(row);
  }

  /** Every version of a role (or of every role), oldest first. */
  list(filter: { role?: string } = {}): WeightVersion[] {
    const rows = (filter.role === undefined ? this.st.all.all() : this.st.byRole.all(filter.role)) as Row[];
    return rows.map(fromRow);
  }

  /** The newest version written at this path, if any (links an offline step to the version it started from). */
  findByPath(file: string): WeightVersion | undefined {
    const row = this.st.byPath.get(file) as Row | undefined;
    return row && fromRow(row);
  }

  /** The lineage of a version: itself first, then its parent, up to the first version. Errors: `NOT_FOUND`. */
  lineage(id: string): WeightVersion[] {
    const chain: WeightVersion[] = [];
    const seen = new Set<string>();
    let next: string | undefined = id;
    while (next && !seen.has(next)) {
      seen.add(next);
      const v: WeightVersion | undefined = chain.length === 0 ? this.get(next) : this.find(next);
      if (!v) break;
      chain.push(v);
      next = v.parentId;
    }
    return chain;
  }
}

interface Row {
  id: string;
  role: string;
  base_path: string;
  path: string;
  parent_id: string | null;
  experiment_id: string | null;
  iteration: number | null;
  hyper_json: string;
  metrics_json: string;
  created_at: number;
}

function fromRow(r: Row): WeightVersion {
  const v: WeightVersion = {
    id: r.id,
    role: r.role,
    basePath: r.base_path,
    path: r.path,
    hyper: JSON.parse(r.hyper_json) as Record<string, unknown>,
    metrics: JSON.parse(r.metrics_json) as Record<string, unknown>,
    createdAt: r.created_at,
  };
  if (r.parent_id != null) v.parentId = r.parent_id;
  if (r.experiment_id != null) v.experimentId = r.experiment_id;
  if (r.iteration != null) v.iteration = r.iteration;
  return v;
}
