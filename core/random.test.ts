import { describe, expect, it } from 'vitest';
import { deriveSeed, fnv1a32, gaussian, mulberry32, uniformFloats } from './random.ts';

describe('core/random', () => {
  it('mulberry32 gives the reference sequence for seed 1 and repeats per seed', () => {
    const r = mulberry32(1);
    const first = [r(), r(), r()].map((x) => Math.round(x * 4294967296));
    // Pinned: the generated datasets (core/tasks/learn.ts) and bootstrap intervals depend on this
    // exact sequence, so a change to the generator must show here.
    expect(first).toEqual([2693262067, 11749833, 2265367787]);
    const a = mulberry32(99);
    const b = mulberry32(99);
    for (let i = 0; i < 100; i++) expect(a()).toBe(b());
  });

  it('fnv1a32 matches the published FNV-1a test vectors', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('deriveSeed is FNV-1a over NUL-joined parts, masked to 31 bits', () => {
    expect(deriveSeed('a')).toBe(0xe40c292c & 0x7fffffff);
    expect(deriveSeed(7, 'node', 1)).toBe(fnv1a32('7\u0000node\u00001') & 0x7fffffff);
    expect(deriveSeed(7, 'node', 1)).not.toBe(deriveSeed(7, 'node', 2));
  });

  it('gaussian has mean ≈ 0 and variance ≈ 1; uniformFloats stays in [−scale, scale)', () => {
    const g = gaussian(3);
    let s = 0;
    let s2 = 0;
    const n = 20_000;
    for (let i = 0; i < n; i++) {
      const x = g();
      s += x;
      s2 += x * x;
    }
    expect(Math.abs(s / n)).toBeLessThan(0.03);
    expect(Math.abs(s2 / n - 1)).toBeLessThan(0.05);
    const u = uniformFloats(1000, 5, 0.5);
    expect(Math.min(...u)).toBeGreaterThanOrEqual(-0.5);
    expect(Math.max(...u)).toBeLessThan(0.5);
  });
});
