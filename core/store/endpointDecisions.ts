import type { Database, Statement } from 'better-sqlite3';
import type { EndpointDecision } from '../model/provider.ts';
import { StoreError } from './errors.ts';

/**
 * The decisions a provider took about its endpoints during an experiment (backpressure: limits
 * lowered on 429/503 and raised again; failover: replicas taken out and put back;
 * models/openai/pool.ts, docs/scale.md), kept on the experiment (migration 15,
 * `endpoint_decisions`). Write-once, in the order taken.
 */
export interface EndpointDecisionsRepo {
  /** Appends `decisions` to the experiment's, in one transaction. Errors: `NOT_FOUND` (no such experiment). */
  add(experimentId: string, decisions: readonly EndpointDecision[]): void;
  /** The experiment's decisions, in the order taken. */
  of(experimentId: string): EndpointDecision[];
}

interface Row { at: number; endpoint: string; action: EndpointDecision['action']; limit_after: number; reason: string; retry_at: number | null }

/** The port's `EndpointDecisionsRepo` over the store's connection. */
export class SqliteEndpointDecisionsRepo implements EndpointDecisionsRepo {
  private readonly st: Record<'insert' | 'next' | 'of' | 'exists', Statement>;

  constructor(private readonly db: Database, private readonly file: string) {
    this.st = {
      insert: db.prepare('INSERT INTO endpoint_decisions (experiment_id, seq, at, endpoint, action, limit_after, reason, retry_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
      next: db.prepare('SELECT coalesce(max(seq), -1) + 1 FROM endpoint_decisions WHERE experiment_id = ?').pluck(),
      of: db.prepare('SELECT at, endpoint, action, limit_after, reason, retry_at FROM endpoint_decisions WHERE experiment_id = ? ORDER BY seq'),
      exists: db.prepare('SELECT 1 FROM experiments WHERE id = ?').pluck(),
    };
  }

  add(experimentId: string, decisions: readonly EndpointDecision[]): void {
    if (decisions.length === 0) return;
    if (!this.st.exists.get(experimentId)) throw new StoreError('NOT_FOUND', `${this.file}: no experiment ${experimentId} to record endpoint decisions on`, experimentId);
    this.db.transaction(() => {
      let seq = this.st.next.get(experimentId) as number;
      for (const d of decisions) this.st.insert.run(experimentId, seq++, d.at, d.endpoint, d.action, d.limit, d.reason, d.retryAt ?? null);
    })();
  }

  of(experimentId: string): EndpointDecision[] {
    return (this.st.of.all(experimentId) as Row[]).map((r) => ({ at: r.at, endpoint: r.endpoint, action: r.action, limit: r.limit_after, reason: r.reason, ...(r.retry_at !== null && { retryAt: r.retry_at }) }));
  }
}

/** Migration 15: the table. */
export const ENDPOINT_DECISIONS_SQL = /* sql */ `
CREATE TABLE endpoint_decisions (
  experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  seq           INTEGER NOT NULL,
  at            INTEGER NOT NULL,                 -- epoch ms
  endpoint      TEXT NOT NULL,                    -- <base-url>#<model>
  action        TEXT NOT NULL CHECK (action IN ('decrease','increase','remove','restore')),
  limit_after   INTEGER NOT NULL,                 -- the endpoint's concurrency limit after it (0: taken out)
  reason        TEXT NOT NULL,
  retry_at      INTEGER,                          -- remove: when it is tried again (epoch ms)
  PRIMARY KEY (experiment_id, seq)
) WITHOUT ROWID;
`;
