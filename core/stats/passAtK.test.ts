import { describe, expect, it } from 'vitest';
import { PassAtKError, meanPassAtK, passAtK } from './passAtK.ts';

/** C(n, k) by the definition, for the hand checks (small n only). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

describe('passAtK (Chen et al. 2021, eq. 1)', () => {
  it('matches hand-computed values', () => {
    // n=5, c=2, k=1: 1 - C(3,1)/C(5,1) = 1 - 3/5 = 0.4 (pass@1 is the fraction correct).
    expect(passAtK(5, 2, 1)).toBeCloseTo(0.4, 12);
    // n=5, c=2, k=2: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7.
    expect(passAtK(5, 2, 2)).toBeCloseTo(0.7, 12);
    // n=10, c=3, k=5: 1 - C(7,5)/C(10,5) = 1 - 21/252 = 11/12.
    expect(passAtK(10, 3, 5)).toBeCloseTo(11 / 12, 12);
    // n=4, c=1, k=2: 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5.
    expect(passAtK(4, 1, 2)).toBe(0.5);
  });

  it('is 0 with no correct sample and 1 when every draw of k must include a correct one', () => {
    expect(passAtK(10, 0, 3)).toBe(0);
    expect(passAtK(10, 8, 3)).toBe(1); // n - c = 2 < k = 3
    expect(passAtK(1, 1, 1)).toBe(1);
  });

  it('agrees with the binomial form on a grid of small n', () => {
    for (let n = 1; n <= 12; n++) for (let c = 0; c <= n; c++) for (let k = 1; k <= n; k++) {
      expect(passAtK(n, c, k)).toBeCloseTo(1 - choose(n - c, k) / choose(n, k), 10);
    }
  });

  it('stays finite where the binomial coefficients overflow a double', () => {
    // C(2000, 1000) is about 2e600; the product form needs none of it.
    const v = passAtK(2000, 3, 1000);
    // 1 - (1000/2000)(999/1999)(998/1998)
    expect(v).toBeCloseTo(1 - (1000 / 2000) * (999 / 1999) * (998 / 1998), 12);
  });

  it('averages over problems', () => {
    expect(meanPassAtK([{ n: 5, c: 2 }, { n: 4, c: 1 }], 2)).toBeCloseTo((0.7 + 0.5) / 2, 12);
    expect(meanPassAtK([], 1)).toBeNaN();
  });

  it('rejects counts out of range, naming them', () => {
    expect(() => passAtK(5, 6, 1)).toThrow(PassAtKError);
    expect(() => passAtK(5, 2, 6)).toThrow(/k must be between 1 and n = 5, got 6/);
    expect(() => passAtK(0, 0, 1)).toThrow(/n must be at least 1/);
    expect(() => passAtK(5, 1.5, 1)).toThrow(/c must be an integer/);
  });
});
