/**
 * The one source of deterministic randomness and string hashing in Flowlab. Everything that must
 * replay bit-for-bit from a seed (bootstrap intervals, generated datasets, per-call model seeds,
 * initial LoRA weights, test models) draws from here, so the same seed gives the same numbers in
 * the CLI, the lab window, the bench and the tests.
 *
 * - `mulberry32`: Tommy Ettinger's 32-bit PRNG (public domain, 2017): a Weyl sequence with step
 *   0x6D2B79F5 through a xorshift-multiply output mix. Period 2^32; fine for sampling and tests,
 *   not for cryptography.
 * - `fnv1a32`: the 32-bit Fowler–Noll–Vo hash, variant 1a (offset basis 0x811C9DC5, prime
 *   0x01000193), over UTF-16 code units.
 */

/** A generator of uniform floats in [0, 1). */
export type Rng = () => number;

/**
 * mulberry32 seeded with `seed` (taken as an unsigned 32-bit integer). Returns a generator of
 * uniform floats in [0, 1) with 32 bits of resolution; two generators with the same seed yield
 * the same sequence.
 */
export function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Seeded standard normal samples (mean 0, variance 1): Box–Muller (Box & Muller 1958, "A Note on
 * the Generation of Random Normal Deviates") over two mulberry32 uniforms per sample, the first
 * taken as 1 − u so the logarithm never sees 0.
 */
export function gaussian(seed: number): Rng {
  const uniform = mulberry32(seed);
  return () => {
    const u = 1 - uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * uniform());
  };
}

/** `n` deterministic floats uniform in [−scale, scale) from mulberry32(seed). */
export function uniformFloats(n: number, seed: number, scale = 1): Float32Array {
  const rand = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rand() * 2 - 1) * scale;
  return out;
}

/** FNV-1a (32-bit) of `s`'s UTF-16 code units, as an unsigned integer in 0 .. 2^32 − 1. */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * Deterministic seeds. A run's seed is derived from the experiment seed and the task index; each
 * model call's seed from the run seed, node id, attempt and call index, so a resumed or replayed
 * run asks for exactly the same seeds as the original. FNV-1a (32-bit) over the parts joined by
 * NUL. Output range: 0 .. 2^31 − 1.
 */
export function deriveSeed(...parts: Array<string | number>): number {
  return fnv1a32(parts.join('\u0000')) & 0x7fffffff;
}
