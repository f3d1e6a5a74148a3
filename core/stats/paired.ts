/**
 * Paired statistics for A/B comparisons of two experiments on the same tasks and seeds
 * (so "the cards helped" is a measured claim: `flowlab compare`, docs/hint-cards.md).
 */
import { mulberry32 } from '../random.ts';

/** Exact two-sided sign test: ties (zero differences) are dropped. */
export interface SignTest {
  positive: number;
  negative: number;
  ties: number;
  /** Two-sided p = min(1, 2·P(X ≤ min(n+, n−))), X ~ Binomial(n+ + n−, 1/2); 1 when n = 0. */
  p: number;
}

export function signTest(diffs: readonly number[]): SignTest {
  let positive = 0;
  let negative = 0;
  let ties = 0;
  for (const d of diffs) {
    if (d > 0) positive++;
    else if (d < 0) negative++;
    else ties++;
  }
  const n = positive + negative;
  if (n === 0) return { positive, negative, ties, p: 1 };
  const k = Math.min(positive, negative);
  // P(X <= k): term by term (exact in doubles for small n); in log space past n = 1000 (underflow).
  let cdf = 0;
  if (n <= 1000) {
    let term = 0.5 ** n;
    for (let i = 0; i <= k; i++) {
      if (i > 0) term = (term * (n - i + 1)) / i;
      cdf += term;
    }
  } else {
    let logC = 0;
    for (let i = 0; i <= k; i++) {
      if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
      cdf += Math.exp(logC - n * Math.LN2);
    }
  }
  return { positive, negative, ties, p: Math.min(1, 2 * cdf) };
}

export interface BootstrapCI {
  mean: number;
  low: number;
  high: number;
  resamples: number;
  level: number;
}

/**
 * Percentile bootstrap interval of the mean difference: resample the pairs with replacement
 * `resamples` times (default 10,000), take the (1−level)/2 and (1+level)/2 quantiles of the
 * resampled means (level default 0.95). Deterministic for a seed. Empty input: NaNs.
 */
export function bootstrapMeanCI(diffs: readonly number[], opts: { resamples?: number; level?: number; seed?: number } = {}): BootstrapCI {
  const resamples = opts.resamples ?? 10_000;
  const level = opts.level ?? 0.95;
  const n = diffs.length;
  if (n === 0) return { mean: NaN, low: NaN, high: NaN, resamples, level };
  const mean = diffs.reduce((s, d) => s + d, 0) / n;
  const rand = mulberry32(opts.seed ?? 0);
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += diffs[Math.floor(rand() * n)]!;
    means[b] = s / n;
  }
  means.sort();
  const q = (p: number) => means[Math.min(resamples - 1, Math.max(0, Math.floor(p * resamples)))]!;
  return { mean, low: q((1 - level) / 2), high: q((1 + level) / 2), resamples, level };
}
