/**
 * The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
 * on Code", section 2.1, equation 1): with n samples per problem of which c are correct,
 * pass@k = 1 - C(n-c, k) / C(n, k), computed in the numerically stable product form the paper's
 * figure 3 gives, 1 - prod_{i = n-c+1}^{n} (1 - k/i), which never forms a binomial coefficient.
 */

/** Thrown for counts that are not integers with 0 <= c <= n and 1 <= k <= n. */
export class PassAtKError extends RangeError {
  override readonly name = 'PassAtKError';
  readonly code = 'BAD_COUNTS';
}

/**
 * pass@k of one problem, 0..1: the chance that at least one of k samples drawn without
 * replacement from the n generated ones is correct. Exactly 1 when n - c < k.
 * @param n samples generated (integer >= 1)
 * @param c correct samples among them (integer, 0..n)
 * @param k samples allowed (integer, 1..n)
 * @throws PassAtKError naming the bad count.
 */
export function passAtK(n: number, c: number, k: number): number {
  for (const [name, v] of [['n', n], ['c', c], ['k', k]] as const) {
    if (!Number.isInteger(v)) throw new PassAtKError(`pass@k: ${name} must be an integer, got ${String(v)}`);
  }
  if (n < 1) throw new PassAtKError(`pass@k: n must be at least 1, got ${n}`);
  if (c < 0 || c > n) throw new PassAtKError(`pass@k: c must be between 0 and n = ${n}, got ${c}`);
  if (k < 1 || k > n) throw new PassAtKError(`pass@k: k must be between 1 and n = ${n}, got ${k}`);
  if (n - c < k) return 1;
  let miss = 1;
  for (let i = n - c + 1; i <= n; i++) miss *= 1 - k / i;
  return 1 - miss;
}

/**
 * The benchmark's pass@k: the mean of `passAtK` over problems, each given as {n, c}
 * (problems may have different n; each needs n >= k). 0 problems gives NaN.
 */
export function meanPassAtK(problems: readonly { n: number; c: number }[], k: number): number {
  if (problems.length === 0) return Number.NaN;
  let sum = 0;
  for (const p of problems) sum += passAtK(p.n, p.c, k);
  return sum / problems.length;
}
