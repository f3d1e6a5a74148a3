import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { newExperiment, tempDir } from '../../test/fixtures.ts';
import { StoreError } from './errors.ts';
import { namedSqliteError } from './namedErrors.ts';
import { openStore } from './openStore.ts';

describe('store errors name the database (issue 30)', () => {
  it('SQLITE_FULL while saving becomes DISK_FULL naming the file; what was committed stays', () => {
    const file = path.join(tempDir('full'), 'lab.db');
    openStore(file).close(); // the schema
    const pages = (new Database(file).pragma('page_count', { simple: true }) as number) + 2;
    const store = openStore(file, { maxPageCount: pages });
    let err: unknown;
    let saved = 0;
    try {
      for (let i = 0; i < 10_000; i++) {
        store.createExperiment(newExperiment({ limit: 50 }));
        saved++;
      }
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe('DISK_FULL');
    expect((err as Error).message).toContain(`the disk holding database ${file} is full`);
    expect(((err as Error).cause as { code?: string }).code).toBe('SQLITE_FULL');
    expect(saved).toBeGreaterThan(0);
    expect(store.listExperiments()).toHaveLength(saved); // reads still work, nothing half-written
    store.close();
  });

  it('maps the other SQLite failures and leaves constraints to the repositories', () => {
    const sqlite = (code: string) => Object.assign(new Error('boom'), { code });
    expect((namedSqliteError(sqlite('SQLITE_IOERR_WRITE'), '/x/lab.db') as StoreError).message).toBe('database /x/lab.db: boom (SQLITE_IOERR_WRITE)');
    expect((namedSqliteError(sqlite('SQLITE_BUSY'), '/x/lab.db') as StoreError).code).toBe('DATABASE_BUSY');
    expect((namedSqliteError(sqlite('SQLITE_READONLY_DBMOVED'), '/x/lab.db') as StoreError).code).toBe('READ_ONLY');
    const unique = sqlite('SQLITE_CONSTRAINT_UNIQUE');
    expect(namedSqliteError(unique, '/x/lab.db')).toBe(unique);
  });
});
