/**
 * Issue 6 bench: the tfjs trainer (tfjs-core + wasm) on a small LLaMA GGUF: time per SFT step and
 * per policy step at batch 8 × 128 tokens, train tokens/s, write-back and llama.cpp reload
 * times, and llama.cpp's own sampling speed in the same run. The reference figures measured for
 * earlier on the 2-core development machine are returned beside them (printed, not asserted).
 */
import { TfjsTrainer } from '../models/trainer/TfjsTrainer.ts';
import { LlamaCppReference, llamaRuntime } from '../models/trainer/testing/llamaCpp.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface TrainingBenchOptions {
  /** Path to the GGUF (stories260K). */
  model: string;
  /** Sequences per step. Default 8. */
  batch?: number;
  /** Tokens per sequence. Default 128. */
  tokens?: number;
  /** Timed steps of each kind (after 2 warm-up steps). Default 5. */
  steps?: number;
}

/** A timing summary: median and min over the timed repetitions, in milliseconds. */
export interface Timing {
  medianMs: number;
  minMs: number;
}

export interface TrainingBenchResult {
  model: string;
  parameters: number;
  batch: number;
  tokens: number;
  /** SFT step (cross-entropy on every token, Adam, grad clip). */
  sft: Timing & { tokensPerSec: number };
  /** Policy step: 32 prompt + 96 completion tokens per sample, KL to the reference (one more forward pass). */
  policy: Timing & { tokensPerSec: number };
  /** `writeGguf` (export + rewrite + fsync + rename). */
  write: Timing;
  /** llama.cpp: dispose the old model + load the new file + create a context. */
  reload: Timing;
  /** llama.cpp greedy sampling of one 128-token sequence, 1 thread (tokens/s). */
  samplingTokensPerSec: number;
  /** Reference figures measured earlier for the 260K model on the 2-core machine. */
  reference: { sftStepMs: [number, number]; trainTokensPerSec: number; writeMs: [number, number]; reloadMs: [number, number] };
}

const summary = (xs: number[]): Timing => {
  const s = [...xs].sort((a, b) => a - b);
  return { medianMs: s[Math.floor(s.length / 2)]!, minMs: s[0]! };
};

/** Deterministic token ids in 3..vocab-1 (content does not change the speed). */
function ids(n: number, seed: number, vocab: number): number[] {
  let a = seed >>> 0;
  return Array.from({ length: n }, () => {
    a = (Math.imul(a, 1664525) + 1013904223) >>> 0;
    return 3 + (a % (vocab - 3));
  });
}

export async function benchTraining(opts: TrainingBenchOptions): Promise<TrainingBenchResult> {
  const batch = opts.batch ?? 8;
  const tokens = opts.tokens ?? 128;
  const steps = opts.steps ?? 5;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-bench-training-'));
  const model = await new TfjsTrainer().load(opts.model);
  try {
    const vocab = model.config.vocab;
    const sftBatch = Array.from({ length: batch }, (_, b) => ({ tokens: [1, ...ids(tokens - 1, b + 1, vocab)], lossMask: new Array<number>(tokens).fill(1) }));
    const promptLen = Math.min(32, tokens >> 2);
    const policyBatch = Array.from({ length: batch }, (_, b) => ({
      promptTokens: [1, ...ids(promptLen - 1, 100 + b, vocab)],
      completionTokens: ids(tokens - promptLen, 200 + b, vocab),
      advantage: b % 2 ? 1 : -1,
    }));

    const sftMs: number[] = [];
    for (let i = 0; i < steps + 2; i++) {
      const r = await model.sftStep(sftBatch, { lr: 1e-4 });
      if (i >= 2) sftMs.push(r.ms);
    }
    const policyMs: number[] = [];
    for (let i = 0; i < steps + 2; i++) {
      const r = await model.policyStep(policyBatch, { lr: 1e-4, kl: 0.05 });
      if (i >= 2) policyMs.push(r.ms);
    }

    await llamaRuntime();
    const out = path.join(tmp, 'model.gguf');
    const writeMs: number[] = [];
    const reloadMs: number[] = [];
    let current = await LlamaCppReference.open(opts.model);
    for (let i = 0; i < steps; i++) {
      let t0 = performance.now();
      await model.writeGguf(out);
      writeMs.push(performance.now() - t0);
      t0 = performance.now();
      await current.dispose();
      current = await LlamaCppReference.open(out);
      reloadMs.push(performance.now() - t0);
    }
    // llama.cpp sampling speed on the same machine, same run (greedy, one sequence, 1 thread).
    await current.greedy([1], 8); // warm-up
    const t0 = performance.now();
    const sampled = await current.greedy([1, ...ids(3, 7, vocab)], tokens);
    const samplingTokensPerSec = sampled.length / ((performance.now() - t0) / 1000);
    await current.dispose();

    const sft = summary(sftMs);
    const policy = summary(policyMs);
    return {
      model: path.basename(opts.model),
      parameters: model.parameters,
      batch,
      tokens,
      sft: { ...sft, tokensPerSec: (batch * tokens) / (sft.medianMs / 1000) },
      policy: { ...policy, tokensPerSec: (batch * tokens) / (policy.medianMs / 1000) },
      write: summary(writeMs),
      reload: summary(reloadMs),
      samplingTokensPerSec,
      reference: { sftStepMs: [470, 520], trainTokensPerSec: 2000, writeMs: [2, 6], reloadMs: [42, 49] },
    };
  } finally {
    model.dispose();
    await rm(tmp, { recursive: true, force: true });
  }
}
