/**
 * The tfjs LLaMA on synthetic GGUFs (no shared model needed): the forward pass against an
 * independent float64 implementation of llama.cpp's conventions (GQA, NORM rope incl. partial
 * rope, tied head), the gradient against central finite differences, the refusals, and
 * tensor bookkeeping.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufError, readGguf } from '../gguf/readGguf.ts';
import { readGgufTensors } from '../gguf/readTensors.ts';
import { llamaConfigFromGguf, type LlamaConfig } from './llamaConfig.ts';
import { LlamaForward, isTransposedMatrix } from './llamaForward.ts';
import { logSoftmax } from './ops.ts';
import { initTfjs, tf } from './tfjs.ts';
import { TfjsTrainer } from './TfjsTrainer.ts';
import { buildGguf, randomFloats, str, tinyLlama, u32, type BuilderValue, type TinyLlamaOptions } from './testing/ggufBuilder.ts';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-trainer-'));
  await initTfjs();
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function fixture(name: string, o: TinyLlamaOptions | Buffer): Promise<string> {
  const file = path.join(tmp, name);
  await writeFile(file, Buffer.isBuffer(o) ? o : tinyLlama(o));
  return file;
}

/** Independent float64 forward of llama.cpp's `llama` graph: logits `[T][V]` for one sequence. */
function referenceLogits(c: LlamaConfig, w: Map<string, Float32Array>, ids: number[]): number[][] {
  const get = (n: string) => w.get(n)!;
  const matvec = (m: Float32Array, x: number[], outDim: number): number[] => {
    const inDim = x.length;
    const y = new Array<number>(outDim).fill(0);
    for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) y[o]! += m[o * inDim + i]! * x[i]!;
    return y;
  };
  const rms = (x: number[], g: Float32Array) => {
    const s = 1 / Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length + c.eps);
    return x.map((v, i) => v * s * g[i]!);
  };
  const rope = (x: number[], pos: number, heads: number) => {
    const y = [...x];
    for (let h = 0; h < heads; h++) {
      for (let i = 0; i < c.ropeDims; i += 2) {
        const th = pos * Math.pow(c.ropeBase, -i / c.ropeDims);
        const a = x[h * c.headDim + i]!;
        const b = x[h * c.headDim + i + 1]!;
        y[h * c.headDim + i] = a * Math.cos(th) - b * Math.sin(th);
        y[h * c.headDim + i + 1] = a * Math.sin(th) + b * Math.cos(th);
      }
    }
    return y;
  };
  const emb = get('token_embd.weight');
  let xs = ids.map((id) => Array.from(emb.subarray(id * c.dim, (id + 1) * c.dim)));
  const hd = c.headDim;
  const g = c.heads / c.kvHeads;
  for (let l = 0; l < c.layers; l++) {
    const p = `blk.${l}.`;
    const qs: number[][] = [];
    const ks: number[][] = [];
    const vs: number[][] = [];
    xs.forEach((x, t) => {
      const h = rms(x, get(`${p}attn_norm.weight`));
      qs.push(rope(matvec(get(`${p}attn_q.weight`), h, c.heads * hd), t, c.heads));
      ks.push(rope(matvec(get(`${p}attn_k.weight`), h, c.kvHeads * hd), t, c.kvHeads));
      vs.push(matvec(get(`${p}attn_v.weight`), h, c.kvHeads * hd));
    });
    xs = xs.map((x, t) => {
      const att = new Array<number>(c.heads * hd).fill(0);
      for (let h = 0; h < c.heads; h++) {
        const kv = Math.floor(h / g);
        const sc: number[] = [];
        for (let s = 0; s <= t; s++) {
          let d = 0;
          for (let i = 0; i < hd; i++) d += qs[t]![h * hd + i]! * ks[s]![kv * hd + i]!;
          sc.push(d / Math.sqrt(hd));
        }
        const mx = Math.max(...sc);
        const e = sc.map((v) => Math.exp(v - mx));
        const z = e.reduce((a, b) => a + b, 0);
        for (let s = 0; s <= t; s++) for (let i = 0; i < hd; i++) att[h * hd + i]! += (e[s]! / z) * vs[s]![kv * hd + i]!;
      }
      const o = matvec(get(`${p}attn_output.weight`), att, c.dim);
      const x1 = x.map((v, i) => v + o[i]!);
      const h2 = rms(x1, get(`${p}ffn_norm.weight`));
      const gate = matvec(get(`${p}ffn_gate.weight`), h2, c.ffn).map((v) => v / (1 + Math.exp(-v)));
      const up = matvec(get(`${p}ffn_up.weight`), h2, c.ffn);
      const down = matvec(get(`${p}ffn_down.weight`), gate.map((v, i) => v * up[i]!), c.dim);
      return x1.map((v, i) => v + down[i]!);
    });
  }
  const head = c.tiedOutput ? emb : get('output.weight');
  return xs.map((x) => matvec(head, rms(x, get('output_norm.weight')), c.vocab));
}

describe('tfjs LLaMA forward (synthetic models)', () => {
  const variants: Array<[string, TinyLlamaOptions]> = [
    ['GQA (4 heads, 2 KV heads), separate head', { seed: 3 }],
    ['multi-head (4/4), tied head, partial rope (2 of 4 lanes)', { kvHeads: 4, tied: true, ropeDims: 2, seed: 5 }],
    ['GQA 4:1, 3 layers', { kvHeads: 1, layers: 3, seed: 7 }],
  ];
  for (const [label, opts] of variants) {
    it(`matches a float64 reference implementation: ${label}`, async () => {
      const file = await fixture(`ref-${opts.seed}.gguf`, opts);
      const gguf = await readGguf(file);
      const config = llamaConfigFromGguf(gguf);
      const weights = await readGgufTensors(gguf);
      const ids = [1, 5, 9, 2, 31, 7, 7, 0, 12, 3, 4, 20];
      const want = referenceLogits(config, weights, ids);
      const model = await new TfjsTrainer().load(file);
      try {
        const probs = await model.probabilities(ids);
        let maxDiff = 0;
        want.forEach((row, t) => {
          const mx = Math.max(...row);
          const e = row.map((v) => Math.exp(v - mx));
          const z = e.reduce((a, b) => a + b, 0);
          e.forEach((v, j) => (maxDiff = Math.max(maxDiff, Math.abs(v / z - probs[t]![j]!))));
        });
        expect(maxDiff).toBeLessThan(1e-5);
        expect(await model.greedy(ids.slice(0, 3), 5)).toHaveLength(5);
      } finally {
        model.dispose();
      }
    });
  }

  it('computes the gradient of the SFT loss: central finite differences along random directions agree', async () => {
    for (const opts of [{ seed: 11 }, { seed: 13, tied: true, kvHeads: 1, ropeDims: 2 }] as TinyLlamaOptions[]) {
      const file = await fixture(`grad-${opts.seed}.gguf`, opts);
      const gguf = await readGguf(file);
      const config = llamaConfigFromGguf(gguf);
      const data = await readGgufTensors(gguf);
      const names = gguf.tensors.map((t) => t.name);
      const forward = new LlamaForward(config);
      const base = gguf.tensors.map((t) => {
        const v = data.get(t.name)!;
        if (t.dims.length === 1) return tf.tensor1d(v);
        const m = tf.tensor2d(v, [t.dims[1]!, t.dims[0]!]);
        return isTransposedMatrix(t.name, t.dims) ? tf.transpose(m) : m;
      });
      const b = 2;
      const t = 7;
      const ids = Int32Array.from({ length: b * t }, (_, i) => (i * 7 + 3) % config.vocab);
      const targets = Int32Array.from({ length: b * t }, (_, i) => (i * 5 + 1) % config.vocab);
      const loss = (...ws: tf.Tensor[]) =>
        tf.tidy(() => {
          const lookup = (n: string) => ws[names.indexOf(n)]!;
          const lp = logSoftmax(forward.logits(lookup, ids, b, t));
          return tf.neg(tf.mean(tf.sum(tf.mul(lp, tf.oneHot(tf.tensor1d(targets, 'int32'), config.vocab)), -1))) as tf.Scalar;
        });
      const grads = tf.grads(loss)(base);
      for (let dir = 0; dir < 3; dir++) {
        const u = base.map((p, i) => tf.tensor(randomFloats(p.size, 100 * dir + i + 1), p.shape));
        const norm = Math.sqrt(u.reduce((a, x) => a + tf.sum(tf.square(x)).dataSync()[0]!, 0));
        const analytic = grads.reduce((a, g, i) => a + tf.sum(tf.mul(g, u[i]!)).dataSync()[0]!, 0) / norm;
        const eps = 1e-2;
        const shifted = (s: number) => base.map((p, i) => tf.add(p, tf.mul(u[i]!, (s * eps) / norm)));
        const plus = shifted(1);
        const minus = shifted(-1);
        const numeric = (loss(...plus).dataSync()[0]! - loss(...minus).dataSync()[0]!) / (2 * eps);
        expect(Math.abs(analytic - numeric)).toBeLessThan(2e-3 + 2e-2 * Math.abs(numeric));
        tf.dispose([...u, ...plus, ...minus]);
      }
      tf.dispose([...base, ...grads]);
      forward.dispose();
    }
  });

  it('keeps the tensor count constant across steps and frees everything on dispose', async () => {
    const file = await fixture('leak.gguf', { seed: 17 });
    const before = tf.memory().numTensors;
    const model = await new TfjsTrainer().load(file);
    const seq = { tokens: [1, 4, 5, 6, 7, 8], lossMask: [0, 0, 1, 1, 1, 1] };
    const sample = { promptTokens: [1, 4, 5], completionTokens: [6, 7, 8], advantage: 1 };
    await model.sftStep([seq], { lr: 1e-3 });
    await model.policyStep([sample], { lr: 1e-3, kl: 0.1 });
    await model.greedy([1, 2], 3);
    const steady = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) {
      await model.sftStep([seq], { lr: 1e-3 });
      await model.policyStep([{ ...sample, oldLogprobs: [-1, -2, -3] }], { lr: 1e-3, kl: 0.1, clip: 0.2 });
      await model.greedy([1, 2], 3);
      await model.probabilities([1, 2, 3]);
    }
    expect(tf.memory().numTensors).toBe(steady);
    model.dispose();
    expect(tf.memory().numTensors).toBe(before);
    await expect(model.greedy([1], 1)).rejects.toThrow(/disposed/);
  });

  it('a completion mask keeps only the chosen tokens in the policy loss (grammar-forced ones out)', async () => {
    const file = await fixture('mask.gguf', { seed: 23 });
    const model = await new TfjsTrainer().load(file);
    try {
      const lp = await (model as unknown as { logprobs(p: number[], c: number[]): Promise<number[]> }).logprobs([1, 4, 5], [6, 7, 8]);
      // REINFORCE with A = 1 and kl 0: loss = −mean over the kept tokens of log π; only token 7 kept.
      const r = await model.policyStep([{ promptTokens: [1, 4, 5], completionTokens: [6, 7, 8], advantage: 1, completionMask: [0, 1, 0] }], { lr: 1e-3, kl: 0 });
      expect(r.tokens).toBe(1);
      expect(r.loss).toBeCloseTo(-lp[1]!, 5);
      await expect(model.policyStep([{ promptTokens: [1], completionTokens: [2, 3], advantage: 1, completionMask: [1] }], { lr: 1e-3, kl: 0 })).rejects.toThrow(/2 completion tokens but 1 completionMask/);
    } finally {
      model.dispose();
    }
  });

  it('grammar-restricted positions: the log-probability is renormalised over the allowed ids (policy and SFT)', async () => {
    const file = await fixture('allowed.gguf', { seed: 29 });
    const model = await new TfjsTrainer().load(file);
    try {
      // Next-token distribution after [1, 4, 5, 6]: the position that predicts token 7.
      const p = (await model.probabilities([1, 4, 5, 6]))[3]!;
      const renorm = Math.log(p[7]! / (p[7]! + p[9]! + p[2]!));
      expect(renorm).toBeGreaterThan(Math.log(p[7]!));
      const r = await model.policyStep([{ promptTokens: [1, 4, 5], completionTokens: [6, 7, 8], advantage: 1, completionMask: [0, 1, 0], completionAllowed: [null, [7, 9, 2], null] }], { lr: 1e-9, kl: 0 });
      expect(r.loss).toBeCloseTo(-renorm, 4);
      const q = (await model.probabilities([1, 4, 5, 6]))[3]!;
      const s = await model.sftStep([{ tokens: [1, 4, 5, 6, 7], lossMask: [0, 0, 0, 0, 1], allowed: [null, null, null, null, [7, 3]] }], { lr: 1e-9 });
      expect(s.loss).toBeCloseTo(-Math.log(q[7]! / (q[7]! + q[3]!)), 4);
      await expect(model.policyStep([{ promptTokens: [1], completionTokens: [2, 3], advantage: 1, completionAllowed: [[2, 5]] }], { lr: 1e-3, kl: 0 })).rejects.toThrow(/2 tokens but 1 allowed lists/);
      // This fixture lists no tokenizer pieces.
      expect(model.vocabulary()).toEqual([]);
    } finally {
      model.dispose();
    }
  });

  it('entropy bonus: −β · the entropy of the renormalised distribution at restricted chosen tokens, and a step raises it', async () => {
    const file = await fixture('entropy.gguf', { seed: 31 });
    const model = await new TfjsTrainer().load(file);
    try {
      const allowed = [7, 9, 2];
      const entropyAt = async (): Promise<number> => {
        const p = (await model.probabilities([1, 4, 5, 6]))[3]!;
        const z = allowed.reduce((acc, id) => acc + p[id]!, 0);
        return -allowed.reduce((acc, id) => acc + (p[id]! / z) * Math.log(p[id]! / z), 0);
      };
      const h0 = await entropyAt();
      expect(h0).toBeGreaterThan(0);
      expect(h0).toBeLessThan(Math.log(3));
      // A = 0, kl 0: the loss is the entropy term alone; token 6 (unrestricted) and 8 (masked out) add nothing.
      const sample = { promptTokens: [1, 4, 5], completionTokens: [6, 7, 8], advantage: 0, completionMask: [1, 1, 0], completionAllowed: [null, allowed, null] };
      const r = await model.policyStep([sample], { lr: 1e-9, kl: 0, entropy: 0.5 });
      // Two kept tokens: weight 1/2 each; only the restricted one carries −β·H.
      expect(r.loss).toBeCloseTo(-0.5 * h0 / 2, 4);
      const off = await model.policyStep([sample], { lr: 1e-9, kl: 0 });
      expect(off.loss).toBeCloseTo(0, 6);
      for (let i = 0; i < 5; i++) await model.policyStep([sample], { lr: 1e-2, kl: 0, entropy: 1 });
      expect(await entropyAt()).toBeGreaterThan(h0 + 1e-3);
      await expect(model.policyStep([sample], { lr: 1e-3, kl: 0, entropy: -0.1 })).rejects.toThrow(/entropy must be >= 0, got -0.1/);
    } finally {
      model.dispose();
    }
  });

  it('rejects bad input with clear errors', async () => {
    const file = await fixture('inputs.gguf', { seed: 19 });
    const model = await new TfjsTrainer().load(file);
    try {
      await expect(model.sftStep([{ tokens: [1, 99], lossMask: [0, 1] }], { lr: 1e-3 })).rejects.toThrow(/token id 99 is outside the vocabulary \(0\.\.31\)/);
      await expect(model.sftStep([{ tokens: [1, 2, 3], lossMask: [0, 1] }], { lr: 1e-3 })).rejects.toThrow(/3 tokens but 2 lossMask/);
      await expect(model.sftStep([{ tokens: [1, 2, 3], lossMask: [1, 0, 0] }], { lr: 1e-3 })).rejects.toThrow(/no token has lossMask 1/);
      await expect(model.sftStep([{ tokens: [1, 2], lossMask: [0, 1] }], { lr: 0 })).rejects.toThrow(/learning rate/);
      await expect(model.sftStep([{ tokens: Array(300).fill(3), lossMask: Array(300).fill(1) }], { lr: 1e-3 })).rejects.toThrow(/context length 256/);
      await expect(
        model.policyStep([{ promptTokens: [1], completionTokens: [2, 3], advantage: 1, oldLogprobs: [0] }], { lr: 1e-3, kl: 0 }),
      ).rejects.toThrow(/2 completion tokens but 1 oldLogprobs/);
      const empty = await model.policyStep([{ promptTokens: [1], completionTokens: [], advantage: 1 }], { lr: 1e-3, kl: 0 });
      expect(empty.tokens).toBe(0);
    } finally {
      model.dispose();
    }
  });
});

describe('the trainer refuses what it cannot train', () => {
  const refusal = async (name: string, bytes: Buffer) => {
    const file = await fixture(name, bytes);
    const err = await new TfjsTrainer().load(file).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(GgufError);
    expect((err as GgufError).message).toContain(file);
    return err as GgufError;
  };

  it('a quantised (Q4_0) model, naming the tensor and its type', async () => {
    const err = await refusal('q4.gguf', tinyLlama({ matrixType: 2 }));
    expect(err.code).toBe('GGUF_UNSUPPORTED_TENSOR_TYPE');
    expect(err.tensor).toBe('token_embd.weight');
    expect(err.message).toMatch(/Unsupported tensor type Q4_0 of tensor "token_embd\.weight" and \d+ more/);
  });

  it('a Q4_K model', async () => {
    const err = await refusal('q4k.gguf', tinyLlama({ matrixType: 12, dim: 256, heads: 4, kvHeads: 4, ffn: 256, layers: 1 }));
    expect(err.code).toBe('GGUF_UNSUPPORTED_TENSOR_TYPE');
    expect(err.message).toContain('Q4_K');
  });

  it('a non-LLaMA architecture, naming it', async () => {
    const err = await refusal('gpt2.gguf', tinyLlama({ architecture: 'gpt2' }));
    expect(err.code).toBe('GGUF_UNSUPPORTED_ARCHITECTURE');
    expect(err.message).toContain('"gpt2"');
  });

  it('a LLaMA with a tensor the forward pass does not implement (rope_freqs), or a wrong shape', async () => {
    // A LLaMA with no blocks: only the embedding and the output norm are read.
    const NO_BLOCKS: Array<[string, BuilderValue]> = [
      ['general.architecture', str('llama')],
      ['llama.block_count', u32(0)],
      ['llama.embedding_length', u32(8)],
      ['llama.feed_forward_length', u32(8)],
      ['llama.attention.head_count', u32(2)],
    ];
    const withExtra = buildGguf({
      metadata: NO_BLOCKS,
      tensors: [
        { name: 'token_embd.weight', dims: [8, 4] },
        { name: 'output_norm.weight', dims: [8] },
        { name: 'rope_freqs.weight', dims: [2] },
      ],
    });
    const err = await refusal('extra.gguf', withExtra);
    expect(err.code).toBe('GGUF_UNSUPPORTED_MODEL');
    expect(err.tensor).toBe('rope_freqs.weight');
    const wrongShape = buildGguf({
      metadata: NO_BLOCKS,
      tensors: [
        { name: 'token_embd.weight', dims: [8, 4] },
        { name: 'output_norm.weight', dims: [6] },
      ],
    });
    const err2 = await refusal('shape.gguf', wrongShape);
    expect(err2.message).toMatch(/"output_norm\.weight" has ne \[6\], expected \[8\]/);
  });

  it('a truncated file and a missing one', async () => {
    const whole = tinyLlama({ seed: 23 });
    const err = await refusal('cut.gguf', whole.subarray(0, whole.length - 100));
    expect(err.code).toBe('GGUF_TRUNCATED');
    await expect(new TfjsTrainer().load(path.join(tmp, 'nope.gguf'))).rejects.toMatchObject({ code: 'GGUF_NOT_FOUND' });
  });
});
