/**
 * The LLaMA forward pass in TensorFlow.js, following llama.cpp's `llm_build_llama`
 * (src/llama-model.cpp) for the `llama` architecture, all in F32:
 *
 * ```
 * x = token_embd[ids]                                              [N, D]   (N = B·T)
 * per layer l:
 *   h = rmsnorm(x, eps) · attn_norm
 *   q = rope(h @ Wqᵀ), k = rope(h @ Wkᵀ), v = h @ Wvᵀ              [N, H·hd], [N, KV·hd]
 *   a = softmax(q kᵀ / sqrt(hd) + causal mask) v   (GQA: head h reads KV head ⌊h/(H/KV)⌋)
 *   x = x + a @ Woᵀ
 *   h = rmsnorm(x, eps) · ffn_norm
 *   x = x + (silu(h @ Wgateᵀ) ⊙ (h @ Wupᵀ)) @ Wdownᵀ
 * logits = (rmsnorm(x, eps) · output_norm) @ Woutᵀ                  [N, V]
 * ```
 * with llama.cpp's NORM rope (adjacent pairs, θ = pos·base^(−2i/n_rot)) and `Wout` =
 * `output.weight`, or `token_embd.weight` when the file has no head (tied embeddings).
 *
 * Weight layout in memory: GGUF `ne = [in, out]` is a row-major `[out][in]` matrix; matrices are
 * held transposed as `[in, out]` tensors so every projection is a plain `x @ W` (no transpose
 * flags on wasm). `token_embd.weight` is held as `[V, D]` (its file layout), norms as `[D]`.
 */
import { tf } from './tfjs.ts';
import { attention, causalMaskBias, embed, matmul2d, rmsNorm, rope, ropeTables, silu } from './ops.ts';
import type { LlamaConfig } from './llamaConfig.ts';

type T = tf.Tensor;

/** Weights by GGUF tensor name, in the in-memory layout described above. */
export type WeightLookup = (name: string) => T;

/** True for the tensors held transposed (`[in, out]`): every 2-D tensor except `token_embd.weight`. */
export function isTransposedMatrix(name: string, dims: readonly number[]): boolean {
  return dims.length === 2 && name !== 'token_embd.weight';
}

/**
 * Builds the forward computation for one model shape; caches the constant tensors (rope tables,
 * causal masks). Call inside `tf.tidy` (or a gradient function): intermediate tensors are not
 * disposed here.
 */
export class LlamaForward {
  private ropeCap = 0;
  private ropeCos?: T;
  private ropeSin?: T;
  private ropeR?: T;
  private readonly masks = new Map<number, T>();

  constructor(readonly config: LlamaConfig) {}

  /**
   * Logits for a batch of equally long sequences: {@link embed}, every {@link block}, {@link head}.
   *
   * @param w weights by GGUF name (see {@link WeightLookup}).
   * @param ids token ids, `B·T` values, batch-major; every sequence starts at position 0.
   * @param lastOnly when true, returns the logits of each sequence's last position only.
   * @param tidyBlocks when true, each block runs in its own `tf.tidy`, so only one block's
   *   intermediates are alive at a time (same values; for passes without a gradient tape).
   * @returns `[B·T, V]` (or `[B, V]` with `lastOnly`), F32, at temperature 1.
   */
  logits(w: WeightLookup, ids: Int32Array, b: number, t: number, lastOnly = false, tidyBlocks = false): T {
    const c = this.config;
    let x = this.embed(w, tf.tensor1d(ids, 'int32')); // [N, D]
    for (let l = 0; l < c.layers; l++) {
      const input = x;
      x = tidyBlocks ? tf.tidy(() => this.block(w, l, input, b, t)) : this.block(w, l, input, b, t);
      if (tidyBlocks) input.dispose();
    }
    if (lastOnly) {
      x = tf.reshape(tf.slice(tf.reshape(x, [b, t, c.dim]), [0, t - 1, 0], [b, 1, c.dim]), [b, c.dim]);
    }
    return this.head(w, x);
  }

  /** Token embeddings: rows `ids` (int32 `[N]`) of `token_embd.weight` -> `[N, D]`. */
  embed(w: WeightLookup, ids: tf.Tensor1D): T {
    return embed(w('token_embd.weight'), ids, this.config.vocab);
  }

  /** Transformer block `l` (attention, then feed-forward, each with its residual) on `x [B·T, D]` -> `[B·T, D]`. */
  block(w: WeightLookup, l: number, x: T, b: number, t: number): T {
    const c = this.config;
    const { cos, sin, r } = this.rope(t);
    const mask = this.mask(t);
    const qScale = 1 / Math.sqrt(c.headDim);
    const p = `blk.${l}.`;
    let h = rmsNorm(x, w(`${p}attn_norm.weight`), c.eps);
    const q = tf.mul(rope(matmul2d(h, w(`${p}attn_q.weight`)), b, t, c.heads, c.headDim, cos, sin, r), qScale);
    const k = rope(matmul2d(h, w(`${p}attn_k.weight`)), b, t, c.kvHeads, c.headDim, cos, sin, r);
    const v = matmul2d(h, w(`${p}attn_v.weight`));
    const a = attention(q, k, v, b, t, c.heads, c.kvHeads, c.headDim, mask);
    x = tf.add(x, matmul2d(a, w(`${p}attn_output.weight`)));
    h = rmsNorm(x, w(`${p}ffn_norm.weight`), c.eps);
    const gate = silu(matmul2d(h, w(`${p}ffn_gate.weight`)));
    const up = matmul2d(h, w(`${p}ffn_up.weight`));
    return tf.add(x, matmul2d(tf.mul(gate, up), w(`${p}ffn_down.weight`)));
  }

  /** The output head: final RMSNorm and `Wout`, `x [N, D]` -> logits `[N, V]`. */
  head(w: WeightLookup, x: T): T {
    const c = this.config;
    x = rmsNorm(x, w('output_norm.weight'), c.eps);
    const head = c.tiedOutput ? tf.transpose(w('token_embd.weight')) : w('output.weight'); // [D, V]
    return matmul2d(x, head);
  }

  /** GGUF names of the weights {@link block} `l` reads. */
  blockWeights(l: number): string[] {
    const p = `blk.${l}.`;
    return ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'].map((n) => `${p}${n}.weight`);
  }

  /** GGUF names of the weights {@link head} reads. */
  headWeights(): string[] {
    return ['output_norm.weight', this.config.tiedOutput ? 'token_embd.weight' : 'output.weight'];
  }

  /** Rope tables for positions `0..t-1`: `cos`, `sin` `[t, hd]` and the pair-swap matrix `R`. */
  private rope(t: number): { cos: T; sin: T; r: T } {
    const c = this.config;
    if (t > this.ropeCap) {
      this.ropeCos?.dispose();
      this.ropeSin?.dispose();
      this.ropeR?.dispose();
      let cap = 64;
      while (cap < t) cap *= 2;
      const tables = tf.tidy(() => {
        const r = ropeTables(cap, c.headDim, c.ropeDims, c.ropeBase, c.ropeFreqScale);
        return [r.cos, r.sin, r.r];
      });
      [this.ropeCos, this.ropeSin, this.ropeR] = tables.map((x) => tf.keep(x)) as [T, T, T];
      this.ropeCap = cap;
    }
    const hd = c.headDim;
    return {
      cos: tf.slice(this.ropeCos!, [0, 0], [t, hd]),
      sin: tf.slice(this.ropeSin!, [0, 0], [t, hd]),
      r: this.ropeR!,
    };
  }

  private mask(t: number): T {
    let m = this.masks.get(t);
    if (!m) {
      if (this.masks.size >= 64) this.clearMasks();
      m = tf.keep(causalMaskBias(t, this.config.heads / this.config.kvHeads));
      this.masks.set(t, m);
    }
    return m;
  }

  private clearMasks(): void {
    for (const m of this.masks.values()) m.dispose();
    this.masks.clear();
  }

  /** Frees the cached constants. */
  dispose(): void {
    this.ropeCos?.dispose();
    this.ropeSin?.dispose();
    this.ropeR?.dispose();
    this.ropeCos = this.ropeSin = this.ropeR = undefined;
    this.ropeCap = 0;
    this.clearMasks();
  }
}
