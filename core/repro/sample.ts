/** The tasks `flowlab repeat` re-runs: a seeded sample of an experiment's task indices. */
import { mulberry32 } from '../random.ts';

/**
 * `n` of `indices` chosen without replacement by a partial Fisher–Yates shuffle driven by
 * `seed` (core/random.ts), returned sorted; all of them when n ≥ their count. The same seed and
 * list give the same sample.
 */
export function sampleTaskIndices(indices: readonly number[], n: number, seed: number): number[] {
  const xs = [...indices].sort((a, b) => a - b);
  if (n >= xs.length) return xs;
  const rand = mulberry32(seed);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(rand() * (xs.length - i));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs.slice(0, Math.max(0, n)).sort((a, b) => a - b);
}
