/**
 * Every SQLite failure of a store names its database file. better-sqlite3 throws a `SqliteError`
 * whose message is SQLite's alone ("database or disk is full"), so a full disk, an I/O error or a
 * lock timeout reached the user without saying which database. {@link nameDatabaseErrors} wraps a
 * connection's statements, `exec`, `pragma` and transactions so such an error becomes a
 * `StoreError` naming the file (the original as its `cause`). Constraint violations
 * (`SQLITE_CONSTRAINT*`) pass through unchanged: the repositories turn them into
 * `RUN_EXISTS` / `INVALID_RECORD` naming the record.
 *
 * Codes: `SQLITE_FULL` -> `DISK_FULL`; `SQLITE_READONLY*` -> `READ_ONLY`; `SQLITE_CORRUPT*`,
 * `SQLITE_NOTADB` -> `NOT_A_DATABASE`; `SQLITE_BUSY*`, `SQLITE_LOCKED*` -> `DATABASE_BUSY`; any other
 * -> `DATABASE_ERROR` (SQLite result codes: sqlite.org/rescode.html).
 */
import type Database from 'better-sqlite3';
import { sqliteCode, StoreError, type StoreErrorCode } from './errors.ts';

/** The StoreError for a SQLite error of `file`, or `err` unchanged (not SQLite, a constraint, already a StoreError). */
export function namedSqliteError(err: unknown, file: string): unknown {
  const code = sqliteCode(err);
  if (!code || code.startsWith('SQLITE_CONSTRAINT') || err instanceof StoreError) return err;
  const detail = (err as Error).message;
  const [storeCode, what]: [StoreErrorCode, string] = code === 'SQLITE_FULL'
    ? ['DISK_FULL', `the disk holding database ${file} is full (or the database reached its size limit): ${detail}; free some space and run the command again (what was committed before is kept)`]
    : code.startsWith('SQLITE_READONLY') ? ['READ_ONLY', `database ${file} cannot be written: ${detail}`]
    : code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' ? ['NOT_A_DATABASE', `database ${file} is corrupt: ${detail}`]
    : code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED') ? ['DATABASE_BUSY', `database ${file} is locked by another connection: ${detail}`]
    : ['DATABASE_ERROR', `database ${file}: ${detail} (${code})`];
  return new StoreError(storeCode, what, file, { cause: err });
}

type Fn = (...args: unknown[]) => unknown;

function guard<T extends Fn>(fn: T, self: unknown, file: string): T {
  return function (this: unknown, ...args: unknown[]) {
    try {
      return fn.apply(self ?? this, args);
    } catch (err) {
      throw namedSqliteError(err, file);
    }
  } as T;
}

/** Wraps `db` in place (see the module comment) and returns it. */
export function nameDatabaseErrors(db: Database.Database, file: string): Database.Database {
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const st = prepare(source);
    for (const m of ['run', 'get', 'all', 'iterate'] as const) {
      const orig = st[m] as unknown as Fn;
      (st as unknown as Record<string, Fn>)[m] = guard(orig, st, file);
    }
    return st;
  }) as typeof db.prepare;
  db.exec = guard(db.exec.bind(db) as Fn, db, file) as unknown as typeof db.exec;
  db.pragma = guard(db.pragma.bind(db) as Fn, db, file) as unknown as typeof db.pragma;
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: Fn) => {
    const tx = transaction(fn) as unknown as Record<string, Fn> & Fn;
    const wrapped = guard(tx, undefined, file) as Record<string, Fn> & Fn;
    for (const v of ['deferred', 'immediate', 'exclusive'] as const) wrapped[v] = guard(tx[v]!, undefined, file);
    return wrapped;
  }) as unknown as typeof db.transaction;
  return db;
}
