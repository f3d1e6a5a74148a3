/**
 * The trainer's batches as flat arrays: token ids, targets and per-position weights of an SFT or
 * policy batch padded to `[B, T]`, the additive logit mask of grammar-restricted positions, and
 * the checks of token ids and lengths against the model (TfjsTrainer.ts's file comment says
 * how the losses weigh positions). Errors: RangeError naming the step and the sequence.
 */
import type { PolicySample, SftSequence } from '../../core/training/index.ts';
import { tf } from './tfjs.ts';

type T = tf.Tensor;

/** What a batch is checked against: the vocabulary size and the context length (tokens). */
export interface TokenLimits {
  vocab: number;
  contextLength: number;
}

/** Throws a RangeError naming `where` when a token id is outside the vocabulary. */
export function checkTokens(limits: TokenLimits, tokens: readonly number[], where: string): void {
  const v = limits.vocab;
  for (const id of tokens) {
    if (!Number.isInteger(id) || id < 0 || id >= v) throw new RangeError(`${where}: token id ${id} is outside the vocabulary (0..${v - 1})`);
  }
}

/** Throws a RangeError when `n` tokens do not fit the context. */
export function checkLength(limits: TokenLimits, n: number): void {
  if (n > limits.contextLength) {
    throw new RangeError(`sequence of ${n} tokens exceeds the model's context length ${limits.contextLength}`);
  }
}

/**
 * An SFT batch: `[B, T]` ids and next-token targets (T = longest sequence − 1), each loss token
 * (`lossMask` 1, after the first position) weighted 1 / (loss tokens of the batch), `count` loss
 * tokens, and the grammar mask (`restrict`) when a sequence has `allowed` lists.
 */
export function sftBatch(batch: readonly SftSequence[], limits: TokenLimits) {
  if (batch.length === 0) throw new RangeError('sftStep: empty batch');
  const t = Math.max(...batch.map((s) => s.tokens.length)) - 1;
  if (t < 1) throw new RangeError('sftStep: every sequence has fewer than 2 tokens; nothing to predict');
  checkLength(limits, t + 1);
  const b = batch.length;
  const ids = new Int32Array(b * t);
  const targets = new Int32Array(b * t);
  const weight = new Float32Array(b * t);
  let count = 0;
  batch.forEach((s, i) => {
    if (s.lossMask.length !== s.tokens.length) {
      throw new RangeError(`sftStep: sequence ${i} has ${s.tokens.length} tokens but ${s.lossMask.length} lossMask values`);
    }
    checkTokens(limits, s.tokens, `sftStep sequence ${i}`);
    for (let j = 0; j + 1 < s.tokens.length; j++) {
      ids[i * t + j] = s.tokens[j]!;
      targets[i * t + j] = s.tokens[j + 1]!;
      if (s.lossMask[j + 1]) {
        weight[i * t + j] = 1;
        count++;
      }
    }
  });
  if (count === 0) throw new RangeError('sftStep: no token has lossMask 1 (after the first position)');
  for (let i = 0; i < weight.length; i++) weight[i]! /= count;

  const restrict = restriction(limits, b * t, batch.map((s, i) => ({ at: i * t - 1, allowed: s.allowed, length: s.tokens.length, first: 1 })), 'sftStep');
  return { b, t, ids, targets, weight, count, restrict };
}

/**
 * Padded batch of prompt+completion sequences with per-position weights (the policy step's
 * averaging: TfjsTrainer.ts's file comment). Errors: RangeError naming the sample.
 */
export function policyBatch(batch: readonly PolicySample[], limits: TokenLimits) {
  const kept = batch.filter((s) => s.completionTokens.length > 0);
  const t = Math.max(1, ...kept.map((s) => s.promptTokens.length + s.completionTokens.length - 1));
  const b = Math.max(1, kept.length);
  const n = b * t;
  const ids = new Int32Array(n);
  const targets = new Int32Array(n);
  const weight = new Float32Array(n);
  const isCompletion = new Float32Array(n);
  const advantage = new Float32Array(n);
  const old = new Float32Array(n);
  const hasOld = new Float32Array(n);
  let tokens = 0;
  kept.forEach((s, i) => {
    const where = `policyStep sample ${batch.indexOf(s)}`;
    if (s.promptTokens.length === 0) throw new RangeError(`${where}: empty prompt (it needs at least BOS)`);
    if (!Number.isFinite(s.advantage)) throw new RangeError(`${where}: advantage ${s.advantage} is not finite`);
    if (s.oldLogprobs && s.oldLogprobs.length !== s.completionTokens.length) {
      throw new RangeError(`${where}: ${s.completionTokens.length} completion tokens but ${s.oldLogprobs.length} oldLogprobs`);
    }
    const seq = [...s.promptTokens, ...s.completionTokens];
    checkTokens(limits, seq, where);
    checkLength(limits, seq.length);
    const p = s.promptTokens.length;
    if (s.completionMask && s.completionMask.length !== s.completionTokens.length) {
      throw new RangeError(`${where}: ${s.completionTokens.length} completion tokens but ${s.completionMask.length} completionMask values`);
    }
    const mask = s.completionMask;
    const nc = mask ? Math.max(1, mask.reduce((a, m) => a + (m ? 1 : 0), 0)) : s.completionTokens.length;
    for (let j = 0; j + 1 < seq.length; j++) {
      const at = i * t + j;
      ids[at] = seq[j]!;
      targets[at] = seq[j + 1]!;
      if (j + 1 >= p && (!mask || mask[j + 1 - p])) {
        weight[at] = 1 / (nc * kept.length);
        isCompletion[at] = 1;
        advantage[at] = s.advantage;
        if (s.oldLogprobs) {
          old[at] = s.oldLogprobs[j + 1 - p]!;
          hasOld[at] = 1;
        }
        tokens++;
      }
    }
  });
  const restrict = restriction(limits, n, kept.map((s, i) => ({ at: i * t + s.promptTokens.length - 1, allowed: s.completionAllowed, length: s.completionTokens.length, first: 0 })), 'policyStep');
  // 1 at the kept completion rows whose token was grammar-restricted (the entropy bonus's rows).
  const restricted = new Float32Array(n);
  kept.forEach((s, i) => s.completionAllowed?.forEach((ids, j) => {
    const row = i * t + s.promptTokens.length - 1 + j;
    if (ids && isCompletion[row]) restricted[row] = 1;
  }));
  return { samples: kept.length, b, t, ids, targets, weight, isCompletion, advantage, old, hasOld, tokens, restrict, restricted };
}

/**
 * The additive logit mask of grammar-restricted positions, `[n, V]` (0 for an allowed id, −1e9
 * for the others; rows of unrestricted positions all 0), built on call, or undefined when no
 * sequence has an allowed list. Each entry: the flat row of the sequence's first listed token
 * minus one (`at`: row `at + j` predicts its token `j`), its list, how long it must be, and
 * the first token predicted (`first`: an SFT sequence's token 0 is never predicted).
 */
export function restriction(limits: TokenLimits, n: number, seqs: Array<{ at: number; allowed?: ReadonlyArray<readonly number[] | null>; length: number; first: number }>, where: string): (() => T) | undefined {
  if (!seqs.some((s) => s.allowed?.some((a) => a))) return undefined;
  const v = limits.vocab;
  const mask = new Float32Array(n * v);
  seqs.forEach((s, i) => {
    if (!s.allowed) return;
    if (s.allowed.length !== s.length) throw new RangeError(`${where} sequence ${i}: ${s.length} tokens but ${s.allowed.length} allowed lists`);
    s.allowed.forEach((ids, j) => {
      const row = s.at + j;
      if (!ids || j < s.first) return;
      checkTokens(limits, ids, `${where} sequence ${i} allowed[${j}]`);
      mask.fill(-1e9, row * v, (row + 1) * v);
      for (const id of ids) mask[row * v + id] = 0;
    });
  });
  return () => tf.tensor2d(mask, [n, v]);
}

/** A policy batch (policyBatch). */
export type PolicyBatch = ReturnType<typeof policyBatch>;
