import { describe, expect, it } from 'vitest';
import { asExperimentId, asRoleName, asRunId } from '../core/ids.ts';
import type { RunRecord } from '../core/results/index.ts';
import { compareRuns } from './commands/compare.ts';

const run = (taskId: string, score: number, h: Record<string, number>, seed = 1): RunRecord => ({
  runId: asRunId(`x/${taskId}`), experimentId: asExperimentId('x'), taskIndex: 0, taskId, status: 'completed', score, correct: score === 1,
  seed, promptTokens: 0, completionTokens: 0, startedAt: 0, endedAt: 0, failures: {},
  ladder: Object.fromEntries(Object.entries(h).map(([role, reward]) => [role, { role: asRoleName(role), reward } as never])),
});

describe('flowlab compare (paired statistics)', () => {
  it('pairs by task, computes deltas, the sign test and the bootstrap interval by hand', () => {
    const a = ['t0', 't1', 't2', 't3', 't4'].map((t, i) => run(t, i < 1 ? 1 : 0, { solver: 0.2 }));
    const b = [...['t0', 't1', 't2', 't3'].map((t) => run(t, 1, { solver: 0.5, extra: 1 })), run('t9', 1, { solver: 1 })];
    const r = compareRuns('A', a, 'B', b, 7);
    expect(r.pairs).toBe(4);
    expect([r.unpairedA, r.unpairedB]).toEqual([1, 1]);
    // score: A = [1, 0, 0, 0], B = [1, 1, 1, 1] -> diffs [0, 1, 1, 1]: +3 / -0 / =1, p = 2 * 0.5^3 = 0.25.
    expect(r.score).toMatchObject({ a: 0.25, b: 1, delta: 0.75, signTest: { positive: 3, negative: 0, ties: 1, p: 0.25 } });
    expect(r.score.ci.low).toBeGreaterThanOrEqual(0.25);
    expect(r.score.ci.high).toBe(1);
    expect(Object.keys(r.roles)).toEqual(['solver']); // "extra" exists only in B
    expect(r.roles.solver!.delta).toBeCloseTo(0.3, 12);
    expect(r.seedsMatch).toBe(true);
  });
});
