/**
 * A SQLite store file a command may create: when the file was not there before the command and
 * the command fails before anything worth keeping is written (a refused spec, a model file that
 * is not there), `discard()` removes it and its side files (`-wal`, `-shm`, `-journal`), so a
 * refused command leaves no new database behind. Call `discard()` only after the store is closed.
 */
import { existsSync, rmSync } from 'node:fs';

export interface FreshStoreFile {
  /** Whether the file did not exist when this was made (`:memory:` and '' are never fresh). */
  readonly fresh: boolean;
  /** Removes the file and its side files when it was fresh; else nothing. Never throws. */
  discard(): void;
}

export function freshStoreFile(db: string | undefined): FreshStoreFile {
  const fresh = !!db && db !== ':memory:' && !existsSync(db);
  return {
    fresh,
    discard() {
      if (!fresh || !db) return;
      for (const f of [db, `${db}-wal`, `${db}-shm`, `${db}-journal`]) rmSync(f, { force: true });
    },
  };
}
