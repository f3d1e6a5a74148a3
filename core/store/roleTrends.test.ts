/**
 * Per-role trends (roleTrends.ts and the API's getRoleTrends): the mean ladder reward and the runs
 * blamed on each role per experiment, on three hand-made experiments whose figures are worked out
 * by hand in test/fixtures.ts `seedRoleTrends`.
 */
import { describe, expect, it } from 'vitest';
import { roleTrendsOf } from '../api/features/evaluations.ts';
import { openStore } from './index.ts';
import { seedRoleTrends } from '../../test/fixtures.ts';

describe('role trends', () => {
  it('gives each role its mean h and blamed runs per experiment, oldest experiment first', () => {
    const store = openStore(':memory:');
    seedRoleTrends(store);
    const rows = store.roleTrends().map((r) => [r.experimentId, r.role, r.runs, Number(r.meanReward!.toFixed(6)), r.blamedRuns, r.experimentRuns]);
    expect(rows).toEqual([
      ['exp-trend-1', 'planner', 4, 1, 0, 4],
      ['exp-trend-1', 'solver', 4, 0.5, 1, 4],
      ['exp-trend-2', 'planner', 2, 0.6, 1, 2],
      ['exp-trend-2', 'solver', 2, -0.2, 2, 2],
      ['exp-trend-3', 'solver', 2, 0.95, 0, 2],
    ]);
    const t = roleTrendsOf(store);
    expect(t.experiments.map((e) => [e.id, e.kind, e.workflowName])).toEqual([['exp-trend-1', 'run', 'gsm8k-team'], ['exp-trend-2', 'blame-eval', 'gsm8k-team'], ['exp-trend-3', 'run', 'gsm8k-single']]);
    expect(Object.keys(t.roles).sort()).toEqual(['planner', 'solver']);
    expect(t.roles.solver!.map((p) => p.experimentId)).toEqual(['exp-trend-1', 'exp-trend-2', 'exp-trend-3']);
    expect(t.roles.planner!.map((p) => p.experimentId)).toEqual(['exp-trend-1', 'exp-trend-2']);
    store.close();
  });

  it('is empty on an empty store, and lists a role blamed without a ladder with meanReward null', () => {
    const store = openStore(':memory:');
    expect(store.roleTrends()).toEqual([]);
    seedRoleTrends(store);
    // A run whose ladder lacks the planner but whose root is blamed on it (an imported trace has no ladder).
    const db = (store as unknown as { db: import('better-sqlite3').Database }).db;
    db.prepare(`UPDATE runs SET ladder_json = NULL WHERE experiment_id = 'exp-trend-2'`).run();
    const planner2 = store.roleTrends().find((r) => r.experimentId === 'exp-trend-2' && r.role === 'planner');
    expect(planner2).toEqual({ experimentId: 'exp-trend-2', role: 'planner', runs: 0, meanReward: null, blamedRuns: 1, experimentRuns: 2 });
    store.close();
  });
});
