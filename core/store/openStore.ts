import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { sqliteCode, StoreError } from './errors.ts';
import { migrate } from './migrate.ts';
import { nameDatabaseErrors } from './namedErrors.ts';
import { MIGRATIONS, type Migration } from './schema.ts';
import { SqliteStore } from './SqliteStore.ts';

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** How long a statement waits for another connection's write lock, in ms. Default 5000. */
  busyTimeoutMs?: number;
  /** Mark `running` experiments of dead processes `interrupted` on open. Default true. */
  markInterrupted?: boolean;
  /** Refuse to create a new file: `NOT_FOUND` when `file` does not exist (for commands that only read or resume). */
  mustExist?: boolean;
  /**
   * better-sqlite3's addon file to load instead of the one next to the package (the Electron build
   * of electron/native.ts under `npm start`; the CLI never sets it).
   */
  nativeBinding?: string;
  /**
   * The caller writes (records experiments, runs, cards, versions): an existing file, or its
   * folder, that is not writable is refused at open with `READ_ONLY` naming it, instead of the
   * first write failing with SQLite's bare "attempt to write a readonly database".
   * Default: true unless `mustExist` (the commands that only read open with `mustExist`).
   */
  write?: boolean;
  /** @internal tests only: SQLite's `max_page_count`, so a write past it fails as on a full disk (`SQLITE_FULL`). */
  maxPageCount?: number;
  /** @internal tests only: the migration list to apply instead of the built-in one. */
  migrations?: readonly Migration[];
}

/**
 * Opens (creating if needed) the Flowlab database at `file` (`:memory:` for a private in-memory
 * database) with WAL journaling, synchronous=NORMAL, foreign keys on and a page cache of up to
 * `CACHE_KIB` KiB (allocated as pages are read; large batches of runs stay in it), applies pending
 * migrations, and marks interrupted experiments (see `SqliteStore.markInterrupted`; the ids are on
 * `store.interruptedOnOpen`).
 * Errors (`StoreError`): `NOT_A_DATABASE` (the file is not SQLite or is corrupt), `CANNOT_OPEN`
 * (missing folder, no permission), `READ_ONLY` (see `options.write`), `SCHEMA_TOO_NEW`,
 * `MIGRATION_FAILED`; each names the file.
 */
export function openStore(file: string, options: OpenStoreOptions = {}): SqliteStore {
  let db: Database.Database;
  if (options.mustExist && file !== ':memory:' && !existsSync(file)) {
    throw new StoreError('NOT_FOUND', `database not found: ${file} (check --db)`, file);
  }
  if ((options.write ?? !options.mustExist) && file !== ':memory:') assertWritable(file);
  try {
    db = new Database(file, {
      timeout: options.busyTimeoutMs ?? 5000,
      fileMustExist: Boolean(options.mustExist) && file !== ':memory:',
      ...(options.nativeBinding !== undefined ? { nativeBinding: options.nativeBinding } : {}),
    });
  } catch (err) {
    throw openError(err, file);
  }
  try {
    db.pragma('journal_mode = WAL'); // first read of the file: a non-database fails here
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`cache_size = -${CACHE_KIB}`);
    const report = migrate(db, options.migrations ?? MIGRATIONS, file);
    const opts = options.markInterrupted === undefined ? {} : { markInterrupted: options.markInterrupted };
    if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.floor(options.maxPageCount)}`);
    return new SqliteStore(nameDatabaseErrors(db, file), file, report, opts);
  } catch (err) {
    db.close();
    throw openError(err, file);
  }
}

/** The connection's page cache limit, KiB: 32 MiB (SQLite's default is 2 MiB). */
export const CACHE_KIB = 32 * 1024;

/**
 * @throws StoreError `READ_ONLY` when `file` exists and is not writable, or its folder is not
 *   (SQLite writes `-wal` and `-shm` files beside it); nothing when `file` does not exist yet.
 */
function assertWritable(file: string): void {
  if (!existsSync(file)) return;
  for (const [what, target] of [['file', file], ['folder', path.dirname(path.resolve(file))]] as const) {
    try {
      accessSync(target, constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EACCES';
      throw new StoreError(
        'READ_ONLY',
        `database ${file} is read-only (${what === 'file' ? 'the file' : `its folder ${target}`}: ${code}); this command records results and needs it writable (or pass another --db)`,
        file,
        { cause: err },
      );
    }
  }
}

function openError(err: unknown, file: string): Error {
  if (err instanceof StoreError) return err;
  const code = sqliteCode(err);
  const detail = (err as Error).message;
  if (code === 'SQLITE_NOTADB' || code?.startsWith('SQLITE_CORRUPT')) {
    return new StoreError('NOT_A_DATABASE', `${file} is not a SQLite database (or is corrupt): ${detail}`, file, { cause: err });
  }
  if (code?.startsWith('SQLITE_CANTOPEN') || code?.startsWith('SQLITE_READONLY') || code?.startsWith('SQLITE_PERM')) {
    return new StoreError('CANNOT_OPEN', `cannot open database ${file}: ${detail}`, file, { cause: err });
  }
  if (err instanceof TypeError && /directory/.test(detail)) {
    return new StoreError('CANNOT_OPEN', `cannot open database ${file}: ${detail}`, file, { cause: err });
  }
  return err as Error;
}
