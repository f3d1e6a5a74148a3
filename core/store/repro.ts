import type { Database, Statement } from 'better-sqlite3';
import { StoreError } from './errors.ts';

/** What a reproducibility record belongs to. */
export type ReproKind = 'experiment' | 'train-loop' | 'study' | 'evolution';

/**
 * The reproducibility record of one experiment, train loop, study or evolution (core/repro;
 * `flowlab verify`, `flowlab repeat`): a fingerprint of everything that determines it (input
 * hashes, code version, native library versions, decode settings), whether it is exactly
 * repeatable, and once finished a digest of its outputs.
 */
export interface ReproRecord {
  /** The experiment, loop, study or evolution id. */
  id: string;
  kind: ReproKind;
  /** core/repro `Fingerprint` (decoded by its reader's schema). */
  fingerprint: Record<string, unknown>;
  /** sha256 (hex) of the canonical JSON of `fingerprint`. */
  fingerprintDigest: string;
  /** `exact`, or why not: `not guaranteed: server-side batching`, `not guaranteed: mixed decode batches`. */
  repeatability: string;
  /** sha256 (hex) of the outputs (core/repro digests); absent until it finished. */
  outputDigest?: string;
  /** Epoch ms. */
  createdAt: number;
  finishedAt?: number;
}

interface Row { id: string; kind: ReproKind; fingerprint_json: string; fingerprint_digest: string; repeatability: string; output_digest: string | null; created_at: number; finished_at: number | null }

const fromRow = (r: Row): ReproRecord => ({
  id: r.id, kind: r.kind, fingerprint: JSON.parse(r.fingerprint_json) as Record<string, unknown>, fingerprintDigest: r.fingerprint_digest,
  repeatability: r.repeatability, ...(r.output_digest !== null && { outputDigest: r.output_digest }), createdAt: r.created_at,
  ...(r.finished_at !== null && { finishedAt: r.finished_at }),
});

/** The port's `ReproRepo` (port.ts) over the store's connection: the repro_records table. */
export class SqliteReproRepo {
  private readonly st: Record<'upsert' | 'byId' | 'finish', Statement>;

  constructor(db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      upsert: p(`INSERT INTO repro_records (id, kind, fingerprint_json, fingerprint_digest, repeatability, output_digest, created_at, finished_at)
        VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)
        ON CONFLICT(id) DO UPDATE SET kind = excluded.kind, fingerprint_json = excluded.fingerprint_json,
          fingerprint_digest = excluded.fingerprint_digest, repeatability = excluded.repeatability`),
      byId: p('SELECT * FROM repro_records WHERE id = ?'),
      finish: p('UPDATE repro_records SET output_digest = ?, finished_at = ? WHERE id = ?'),
    };
  }

  /** Records (or, on a resume, replaces) a fingerprint; the output digest is kept. Errors: `INVALID_RECORD` (not JSON-serialisable). */
  record(input: { id: string; kind: ReproKind; fingerprint: Record<string, unknown>; fingerprintDigest: string; repeatability: string }): void {
    let json: string;
    try {
      json = JSON.stringify(input.fingerprint);
    } catch (err) {
      throw new StoreError('INVALID_RECORD', `${this.file}: the fingerprint of ${input.id} is not JSON-serialisable`, input.id, { cause: err });
    }
    this.st.upsert.run(input.id, input.kind, json, input.fingerprintDigest, input.repeatability, Date.now());
  }

  /** Stores the output digest of a finished record. Errors: `NOT_FOUND` (no record with that id). */
  finish(id: string, outputDigest: string): void {
    if (this.st.finish.run(outputDigest, Date.now(), id).changes === 0) throw new StoreError('NOT_FOUND', `${this.file}: no reproducibility record for ${id}`, id);
  }

  find(id: string): ReproRecord | undefined {
    const row = this.st.byId.get(id) as Row | undefined;
    return row && fromRow(row);
  }
}
