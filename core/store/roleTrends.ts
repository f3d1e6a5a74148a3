/**
 * Per-role trends across experiments (issue 29, "per-role blame and ladder trends across
 * experiments"): for every experiment and every role with a reward ladder in its runs, the mean
 * ladder reward h_ρ (core/reward `RoleLadder.reward`, docs/credit.md) over the runs that carry the
 * role's ladder, and the runs with a root failure blamed on the role (the run search index's
 * `run_blame`, runSearch.ts). Two grouped SQL reads, so the cost does not grow with decoding runs.
 */
import type { Database } from 'better-sqlite3';

/** One experiment's figures for one role. */
export interface RoleTrendRow {
  experimentId: string;
  role: string;
  /** Runs whose stored ladder has the role. */
  runs: number;
  /** Mean h_ρ over those runs (−0.5..1 with the default weights); null when no run has the role's ladder. */
  meanReward: number | null;
  /** Runs of the experiment with a root failure blamed on the role. */
  blamedRuns: number;
  /** Runs of the experiment in all (the share's denominator). */
  experimentRuns: number;
}

/**
 * Every experiment × role row, by experiment creation (oldest first), then role. Roles blamed
 * but with no ladder (an imported trace) are listed with `runs` 0 and `meanReward` null.
 */
export function roleTrendsOf(db: Database): RoleTrendRow[] {
  const ladders = db.prepare(`
    SELECT r.experiment_id AS experimentId, j.key AS role, count(*) AS runs, avg(json_extract(j.value, '$.reward')) AS meanReward
    FROM runs r, json_each(r.ladder_json) j
    WHERE r.ladder_json IS NOT NULL AND json_valid(r.ladder_json) AND json_type(j.value, '$.reward') IN ('real', 'integer')
    GROUP BY r.experiment_id, j.key`).all() as Array<{ experimentId: string; role: string; runs: number; meanReward: number }>;
  const hasBlame = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_blame'`).get() !== undefined;
  const blamed = hasBlame
    ? (db.prepare(`SELECT r.experiment_id AS experimentId, b.role AS role, count(DISTINCT r.id) AS n FROM run_blame b JOIN runs r ON r.id = b.run_id GROUP BY r.experiment_id, b.role`).all() as Array<{ experimentId: string; role: string; n: number }>)
    : [];
  const totals = new Map((db.prepare(`SELECT experiment_id AS id, count(*) AS n FROM runs GROUP BY experiment_id`).all() as Array<{ id: string; n: number }>).map((t) => [t.id, t.n]));
  const order = new Map((db.prepare(`SELECT id FROM experiments ORDER BY created_at, id`).pluck().all() as string[]).map((id, i) => [id, i]));
  const key = (e: string, r: string) => `${e}\u0000${r}`;
  const rows = new Map<string, RoleTrendRow>();
  for (const l of ladders) rows.set(key(l.experimentId, l.role), { ...l, blamedRuns: 0, experimentRuns: totals.get(l.experimentId) ?? 0 });
  for (const b of blamed) {
    const row = rows.get(key(b.experimentId, b.role));
    if (row) row.blamedRuns = b.n;
    else rows.set(key(b.experimentId, b.role), { experimentId: b.experimentId, role: b.role, runs: 0, meanReward: null, blamedRuns: b.n, experimentRuns: totals.get(b.experimentId) ?? 0 });
  }
  return [...rows.values()].sort((a, b) => (order.get(a.experimentId) ?? 0) - (order.get(b.experimentId) ?? 0) || a.experimentId.localeCompare(b.experimentId) || a.role.localeCompare(b.role));
}
