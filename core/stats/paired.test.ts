import { describe, expect, it } from 'vitest';
import { bootstrapMeanCI, signTest } from './paired.ts';

describe('paired statistics', () => {
  it('sign test: exact binomial p computed by hand', () => {
    // 8 better, 2 worse, 3 ties: p = 2 * (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 * 56 / 1024.
    const t = signTest([1, 1, 1, 1, 1, 1, 1, 1, -1, -1, 0, 0, 0]);
    expect(t).toEqual({ positive: 8, negative: 2, ties: 3, p: 112 / 1024 });
    // 5 vs 5: p = 2 * P(X <= 5 | n=10) = 2 * 638/1024 > 1 -> 1.
    expect(signTest([1, 1, 1, 1, 1, -1, -1, -1, -1, -1]).p).toBe(1);
    // 10 vs 0: p = 2 / 1024.
    expect(signTest(Array(10).fill(0.5)).p).toBeCloseTo(2 / 1024, 15);
    expect(signTest([0, 0]).p).toBe(1);
  });

  it('bootstrap: reproducible for a seed, brackets the mean, collapses on constant differences', () => {
    const diffs = [0, 1, 0, 1, 1, 0, 1, 1, 0, 1];
    const a = bootstrapMeanCI(diffs, { seed: 3 });
    const b = bootstrapMeanCI(diffs, { seed: 3 });
    expect(a).toEqual(b);
    expect(a.mean).toBe(0.6);
    expect(a.low).toBeLessThan(0.6);
    expect(a.high).toBeGreaterThan(0.6);
    expect(a.low).toBeGreaterThanOrEqual(0.2);
    expect(a.high).toBeLessThanOrEqual(1);
    expect(bootstrapMeanCI([0.25, 0.25, 0.25], { seed: 1 })).toMatchObject({ mean: 0.25, low: 0.25, high: 0.25 });
  });
});
