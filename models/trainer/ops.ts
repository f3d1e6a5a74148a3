/**
 * Differentiable building blocks of the LLaMA forward pass, written around the tfjs-on-wasm
 * pitfalls found by timing stories260K's training step on the 2-core reference machine
 * (bench/training.ts times it):
 * - tfjs's own MatMul gradient multiplies with `transposeA/B` flags, ~10× slower on wasm: the
 *   matmuls here have custom gradients that transpose explicitly first;
 * - `gather` has no gradient on wasm: the embedding lookup gathers forward and scatters back
 *   with `one-hotᵀ × dy`;
 * - `tile`'s gradient stops at rank 4 and `SplitV` is slow: GQA folds the query heads of a KV
 *   group into the query axis (no repeated K/V) and rope is `x·C + (x·R)·S` with a fixed signed
 *   permutation `R` (no split of even/odd lanes).
 */
import { tf } from './tfjs.ts';

type T = tf.Tensor;

/**
 * A matmul whose gradients transpose explicitly before multiplying (`da = dy @ bᵀ`, `db = aᵀ @ dy`),
 * where `ᵀ` swaps the last two axes: `perm` is that permutation (undefined: reverse, i.e. 2-D).
 */
function explicitGradMatmul(perm?: number[]): (a: T, b: T) => T {
  return tf.customGrad(((a: T, b: T, save: tf.GradSaveFunc) => {
    save([a, b]);
    return {
      value: tf.matMul(a as tf.Tensor2D, b as tf.Tensor2D),
      gradFunc: (dy: T, saved: T[]) => {
        const [sa, sb] = saved as [tf.Tensor2D, tf.Tensor2D];
        return [tf.matMul(dy as tf.Tensor2D, tf.transpose(sb, perm)), tf.matMul(tf.transpose(sa, perm), dy as tf.Tensor2D)];
      },
    };
  }) as never) as never;
}

/** `x [N, K] @ w [K, M] -> [N, M]`; gradients `dx = dy @ wᵀ`, `dw = xᵀ @ dy` with explicit transposes. */
export const matmul2d: (x: T, w: T) => T = explicitGradMatmul();

/** Batched `a [b, m, k] @ c [b, k, n] -> [b, m, n]`; gradients with explicit transposes of the last two axes. */
export const bmm: (a: T, c: T) => T = explicitGradMatmul([0, 2, 1]);

/** `x [N, K] @ c [K, M]` for a constant `c` (no gradient to `c`). */
export function matmulConst(x: T, c: T): T {
  const f = tf.customGrad(((xx: T, save: tf.GradSaveFunc) => {
    save([c]);
    return {
      value: tf.matMul(xx as tf.Tensor2D, c as tf.Tensor2D),
      gradFunc: (dy: T, saved: T[]) => [tf.matMul(dy as tf.Tensor2D, tf.transpose(saved[0] as tf.Tensor2D))],
    };
  }) as never) as (x: T) => T;
  return f(x);
}

/**
 * Embedding lookup: rows `ids` of `table [V, D]` -> `[ids.length, D]`. Forward is a gather; the
 * gradient to the table is `one-hot(ids)ᵀ @ dy` (wasm has no gather gradient).
 */
export function embed(table: T, ids: tf.Tensor1D, vocab: number): T {
  const f = tf.customGrad(((tb: T, save: tf.GradSaveFunc) => {
    save([ids]); // kept alive for the backward pass (a closure would see it disposed)
    return {
      value: tf.gather(tb, ids),
      gradFunc: (dy: T, saved: T[]) => {
        const oneHotT = tf.transpose(tf.oneHot(saved[0] as tf.Tensor1D, vocab) as tf.Tensor2D);
        return [tf.matMul(oneHotT, dy as tf.Tensor2D)];
      },
    };
  }) as never) as (t: T) => T;
  return f(table);
}

/** llama.cpp's RMSNorm: `x / sqrt(mean(x²) + eps) * w` over the last axis. `x [N, D]`, `w [D]`. */
export function rmsNorm(x: T, w: T, eps: number): T {
  const ms = tf.mean(tf.square(x), -1, true);
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(ms, eps))), w);
}

/** SiLU: `x · sigmoid(x)`. */
export function silu(x: T): T {
  return tf.mul(x, tf.sigmoid(x));
}

/**
 * Rope tables for llama.cpp's NORM mode (adjacent pairs `(x[2i], x[2i+1])` rotated by
 * `θ = pos · base^(−2i/nRot)`; lanes at or past `nRot` are left as they are).
 *
 * @returns `cos`, `sin` as `[T, headDim]` (each angle repeated for both lanes of its pair;
 *   cos 1 / sin 0 past `nRot`) and `R [headDim, headDim]` with `(x·R)[2i] = −x[2i+1]`,
 *   `(x·R)[2i+1] = x[2i]`, so `rope(x) = x·cos + (x·R)·sin`.
 */
export function ropeTables(positions: number, headDim: number, nRot: number, base: number, freqScale: number): { cos: T; sin: T; r: T } {
  const cos = new Float32Array(positions * headDim);
  const sin = new Float32Array(positions * headDim);
  for (let p = 0; p < positions; p++) {
    for (let i = 0; i < headDim; i += 2) {
      let c = 1;
      let s = 0;
      if (i < nRot) {
        const theta = p * freqScale * Math.pow(base, -i / nRot);
        c = Math.cos(theta);
        s = Math.sin(theta);
      }
      cos[p * headDim + i] = c;
      cos[p * headDim + i + 1] = c;
      sin[p * headDim + i] = s;
      sin[p * headDim + i + 1] = s;
    }
  }
  const r = new Float32Array(headDim * headDim);
  for (let i = 0; i < headDim; i += 2) {
    // column 2i takes -x[2i+1]; column 2i+1 takes x[2i]
    r[(i + 1) * headDim + i] = -1;
    r[i * headDim + (i + 1)] = 1;
  }
  return {
    cos: tf.tensor2d(cos, [positions, headDim]),
    sin: tf.tensor2d(sin, [positions, headDim]),
    r: tf.tensor2d(r, [headDim, headDim]),
  };
}

/**
 * Applies rope to `x [B*T, heads*headDim]` (rows in batch-major order, positions 0..T-1).
 * `cos`, `sin`: `[T, headDim]` (the first `T` rows of {@link ropeTables}).
 */
export function rope(x: T, b: number, t: number, heads: number, headDim: number, cos: T, sin: T, r: T): T {
  const x4 = tf.reshape(x, [b, t, heads, headDim]);
  const xr = tf.reshape(matmulConst(tf.reshape(x, [b * t * heads, headDim]), r), [b, t, heads, headDim]);
  const c = tf.reshape(cos, [1, t, 1, headDim]);
  const s = tf.reshape(sin, [1, t, 1, headDim]);
  return tf.reshape(tf.add(tf.mul(x4, c), tf.mul(xr, s)), [b * t, heads * headDim]);
}

/**
 * Causal self-attention with grouped KV heads (GQA: query head `h` reads KV head
 * `⌊h / (heads / kvHeads)⌋`, llama.cpp's grouping).
 *
 * The `g = heads / kvHeads` query heads of a KV head are folded into the query axis, so each
 * (sequence, KV head) is one `[g·T, hd] @ [hd, T]` product and K/V are never repeated.
 *
 * @param q `[B*T, heads*hd]`, already roped and scaled by `1/sqrt(hd)`.
 * @param k `[B*T, kvHeads*hd]`, roped. @param v `[B*T, kvHeads*hd]`.
 * @param maskBias `[g*T, T]`: 0 where query position ≥ key position, −1e9 elsewhere.
 * @returns `[B*T, heads*hd]`, heads in order.
 */
export function attention(q: T, k: T, v: T, b: number, t: number, heads: number, kvHeads: number, hd: number, maskBias: T): T {
  const g = heads / kvHeads;
  // [B, T, KV, g, hd] -> [B, KV, g, T, hd] -> [B*KV, g*T, hd]
  const qf = tf.reshape(tf.transpose(tf.reshape(q, [b, t, kvHeads, g, hd]), [0, 2, 3, 1, 4]), [b * kvHeads, g * t, hd]);
  // [B, T, KV, hd] -> [B, KV, hd, T] -> [B*KV, hd, T]
  const kt = tf.reshape(tf.transpose(tf.reshape(k, [b, t, kvHeads, hd]), [0, 2, 3, 1]), [b * kvHeads, hd, t]);
  // [B, T, KV, hd] -> [B, KV, T, hd] -> [B*KV, T, hd]
  const vf = tf.reshape(tf.transpose(tf.reshape(v, [b, t, kvHeads, hd]), [0, 2, 1, 3]), [b * kvHeads, t, hd]);
  const scores = tf.add(bmm(qf, kt), maskBias);
  const p = tf.softmax(scores);
  const o = bmm(p, vf); // [B*KV, g*T, hd]
  // [B, KV, g, T, hd] -> [B, T, KV, g, hd] -> [B*T, heads*hd]
  return tf.reshape(tf.transpose(tf.reshape(o, [b, kvHeads, g, t, hd]), [0, 3, 1, 2, 4]), [b * t, heads * hd]);
}

/** The additive causal mask for {@link attention}: `[g*T, T]`, row `j*T + i` masks keys `> i`. */
export function causalMaskBias(t: number, g: number): T {
  const m = new Float32Array(g * t * t);
  for (let j = 0; j < g; j++) {
    for (let i = 0; i < t; i++) {
      const row = (j * t + i) * t;
      for (let s = i + 1; s < t; s++) m[row + s] = -1e9;
    }
  }
  return tf.tensor2d(m, [g * t, t]);
}

/**
 * Log-softmax over the last axis of `x [N, V]`: `x − logsumexp(x)`, with the fused gradient
 * `dx = dy − softmax(x) · Σ dy`.
 */
export const logSoftmax: (x: T) => T = tf.customGrad(((x: T, save: tf.GradSaveFunc) => {
  const shifted = tf.sub(x, tf.max(x, -1, true));
  const value = tf.sub(shifted, tf.log(tf.sum(tf.exp(shifted), -1, true)));
  save([value]);
  return {
    value,
    gradFunc: (dy: T, saved: T[]) => [tf.sub(dy, tf.mul(tf.sum(dy, -1, true), tf.exp(saved[0]!)))],
  };
}) as never) as never;
