import { WhereError, type ErrorLocation } from '../errors.ts';

/**
 * Stable codes for store failures. The CLI and UI print `message`; tests assert `code`.
 * - `NOT_A_DATABASE`: the file exists but is not a SQLite database (or is corrupt);
 * - `CANNOT_OPEN`: the file cannot be opened or created (missing folder, permissions);
 * - `READ_ONLY`: the file (or its folder) is not writable and the command records results;
 * - `SCHEMA_TOO_NEW`: the database was written by a newer Flowlab (unknown migration versions);
 * - `MIGRATION_FAILED`: a migration threw; it was rolled back;
 * - `RUN_EXISTS`: a run for this (experiment, task index) or with this run id is already stored;
 * - `EXPERIMENT_EXISTS`: an experiment with this id is already stored;
 * - `EXPERIMENT_BUSY`: another live process is running this experiment;
 * - `NOT_FOUND`: no experiment, run or planned task with this id/index;
 * - `INVALID_RECORD`: a record cannot be stored (not JSON-serialisable, violates a constraint,
 *   mismatched run id);
 * - `CORRUPT_RECORD`: a stored JSON column does not decode (core/store/config.ts): the message
 *   names the row and the field;
 * - `CLOSED`: the store was used after `close()`;
 * - `DISK_FULL`: SQLite could not write (`SQLITE_FULL`); the message names the database;
 * - `DATABASE_BUSY`: another connection held the lock past the busy timeout;
 * - `DATABASE_ERROR`: any other SQLite failure, naming the database (namedErrors.ts).
 */
export type StoreErrorCode =
  | 'NOT_A_DATABASE'
  | 'CANNOT_OPEN'
  | 'READ_ONLY'
  | 'SCHEMA_TOO_NEW'
  | 'MIGRATION_FAILED'
  | 'RUN_EXISTS'
  | 'EXPERIMENT_EXISTS'
  | 'EXPERIMENT_BUSY'
  | 'NOT_FOUND'
  | 'INVALID_RECORD'
  | 'CORRUPT_RECORD'
  | 'CLOSED'
  | 'DISK_FULL'
  | 'DATABASE_BUSY'
  | 'DATABASE_ERROR';

/**
 * A store failure with a stable `code` and a message that says what and where; `where` is the
 * database file, or the experiment/run id concerned (not read as a location).
 */
export class StoreError extends WhereError<StoreErrorCode> {
  override readonly name = 'StoreError';

  /** No location: `where` may be an id as well as a file. */
  static override locate(): ErrorLocation {
    return {};
  }
}

/** The `code` of a better-sqlite3 `SqliteError` (e.g. `SQLITE_NOTADB`), or undefined. */
export function sqliteCode(err: unknown): string | undefined {
  if (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('SQLITE_')) {
    return err.code;
  }
  return undefined;
}

/** Whether a SQLite error is a UNIQUE or PRIMARY KEY constraint violation. */
export function isUniqueViolation(err: unknown): boolean {
  const code = sqliteCode(err);
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** A StoreError passes through; a SQLite constraint error becomes `INVALID_RECORD` naming `where`. */
export function invalidRecord(err: unknown, where: string): Error {
  if (err instanceof StoreError) return err;
  if (sqliteCode(err)?.startsWith('SQLITE_CONSTRAINT')) {
    return new StoreError('INVALID_RECORD', `${where}: ${(err as Error).message}`, where, { cause: err });
  }
  return err as Error;
}
