import type { Database } from 'better-sqlite3';
import { StoreError } from './errors.ts';
import type { Migration } from './schema.ts';

/** What `migrate` did: the versions it applied now (empty when the schema was current). */
export interface MigrationReport {
  from: number;
  to: number;
  applied: number[];
}

/**
 * Brings `db` to the newest version in `migrations`, each migration in its own IMMEDIATE
 * transaction (so two processes opening one file never both apply it): the migration's SQL and its
 * `schema_migrations(version, name, applied_at)` row commit together or not at all.
 * Errors: `SCHEMA_TOO_NEW` when the file holds a version this code does not know;
 * `MIGRATION_FAILED` (rolled back) when a step throws.
 */
export function migrate(db: Database, migrations: readonly Migration[], where: string): MigrationReport {
  checkOrder(migrations);
  // Refuse another application's SQLite file instead of adding our tables to it.
  const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`).pluck().all() as string[];
  if (tables.length && !tables.includes('schema_migrations')) {
    throw new StoreError('NOT_A_DATABASE', `${where} is an SQLite database, but not a Flowlab one (it has tables ${tables.slice(0, 5).join(', ')}${tables.length > 5 ? ', …' : ''}); use another --db file`, where);
  }
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const current = () => (db.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number | null }).v ?? 0;
  const known = migrations[migrations.length - 1]?.version ?? 0;
  const from = current();
  if (from > known) {
    throw new StoreError(
      'SCHEMA_TOO_NEW',
      `${where}: database schema is version ${from}, but this Flowlab knows only up to version ${known}; upgrade Flowlab to open it`,
      where,
    );
  }
  const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  const applied: number[] = [];
  for (const m of migrations) {
    const step = db.transaction(() => {
      if (current() >= m.version) return false; // another process got there first
      if (typeof m.up === 'string') db.exec(m.up);
      else m.up(db);
      record.run(m.version, m.name, Date.now());
      return true;
    });
    try {
      if (step.immediate()) applied.push(m.version);
    } catch (err) {
      throw new StoreError('MIGRATION_FAILED', `${where}: migration ${m.version} (${m.name}) failed and was rolled back: ${(err as Error).message}`, where, {
        cause: err,
      });
    }
  }
  return { from, to: current(), applied };
}

function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new StoreError('MIGRATION_FAILED', `migrations must be numbered 1, 2, 3...: found version ${m.version} at position ${i}`);
  });
}
