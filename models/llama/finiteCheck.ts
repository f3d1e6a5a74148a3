/**
 * The provider's load-time check that a model computes finite numbers. A GGUF file can have a
 * valid header and NaN or infinite weights (a diverged training step, a bad conversion); llama.cpp
 * loads it, and then every logit is NaN: sampling without a grammar returns empty completions,
 * and with a grammar node-llama-cpp's sampler rejects a promise nobody awaits ("Failed to accept
 * token in sampler: Unexpected empty grammar stack"), which kills the process and leaves the call
 * pending forever. Two checks, both before the first call:
 * - the float tensors (F32, F16, BF16) of files up to {@link SCAN_LIMIT_BYTES} are read and every
 *   value tested (the GGUF reader in `models/gguf/readGguf.ts`); a 1 MB model takes ~2 ms;
 * - one forward pass over a single token on the created context, whose next-token distribution
 *   must be finite. Every weight matrix of a transformer layer multiplies that token's hidden
 *   state, so a non-finite value in any of them (quantised files included) shows up here; only
 *   embedding rows of other tokens escape it, which the tensor scan covers for float files.
 */
import type { LlamaContext, LlamaModel, Token } from 'node-llama-cpp';
import { ModelError } from '../../core/model/index.ts';
import { isFloatTensorType, readGguf } from '../gguf/readGguf.ts';
import { readGgufTensors } from '../gguf/readTensors.ts';
import { errorText } from './errorText.ts';
import { readGgufInfo, type GgufInfo } from './ggufInfo.ts';

/** Files up to this size (bytes) have their float tensors scanned value by value at load. */
export const SCAN_LIMIT_BYTES = 256 * 1024 * 1024;

/**
 * Tests every value of the float tensors of `realFile` (skipped above {@link SCAN_LIMIT_BYTES};
 * quantised tensors are left to {@link probeFiniteLogits}).
 *
 * @throws ModelError `MODEL_INVALID` naming the file, the first tensor with a non-finite value,
 *   the value and its element index.
 */
export async function scanFiniteWeights(realFile: string, sizeBytes: number): Promise<void> {
  if (sizeBytes > SCAN_LIMIT_BYTES) return;
  let file;
  try {
    file = await readGguf(realFile);
  } catch {
    return; // the header was already checked by checkGgufFile; a reader gap is not the model's fault
  }
  const names = file.tensors.filter((t) => isFloatTensorType(t.type)).map((t) => t.name);
  let tensors: Map<string, Float32Array>;
  try {
    tensors = await readGgufTensors(file, names);
  } catch {
    return;
  }
  for (const [name, values] of tensors) {
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      if (!Number.isFinite(v)) {
        throw new ModelError(
          'MODEL_INVALID',
          `Model file ${realFile} has a non-finite weight (${String(v)}) in tensor "${name}" at element ${i}: it cannot generate`,
          realFile,
        );
      }
    }
  }
}

/**
 * Evaluates one token (the beginning-of-sequence token, else the first token of " ") on a fresh
 * sequence of `context` and checks the next-token probabilities: at least one, every one finite,
 * summing to about 1. The sequence is released again.
 *
 * @throws ModelError `MODEL_INVALID` naming the file ("computes non-finite logits") when the
 *   distribution is empty or not finite; `MODEL_LOAD_FAILED` when the evaluation itself fails.
 */
export async function probeFiniteLogits(model: LlamaModel, context: LlamaContext, realFile: string): Promise<void> {
  const token = (model.tokens.bos ?? model.tokenize(' ')[0]) as Token | undefined;
  if (token === undefined) return;
  const sequence = context.getSequence();
  let probabilities: number[];
  try {
    const [first] = await sequence.controlledEvaluate([
      [token, { generateNext: { probabilities: true, options: { temperature: 1 } } }],
    ]);
    probabilities = [...(first?.next?.probabilities?.values() ?? [])];
  } catch (err) {
    throw new ModelError('MODEL_LOAD_FAILED', `Test evaluation of ${realFile} failed: ${errorText(err)}`, realFile, { cause: err });
  } finally {
    await sequence.clearHistory().catch(() => {});
    sequence.dispose();
  }
  const sum = probabilities.reduce((a, b) => a + b, 0);
  if (probabilities.length === 0 || !probabilities.every(Number.isFinite) || !(Math.abs(sum - 1) < 1e-3)) {
    throw new ModelError(
      'MODEL_INVALID',
      `Model file ${realFile} computes non-finite logits (next-token probabilities after one token: ${probabilities.length === 0 ? 'none' : `sum ${String(sum)}`}): its weights are NaN or infinite, it cannot generate`,
      realFile,
    );
  }
}

/**
 * The header check (`readGgufInfo`) followed by the float-tensor scan ({@link scanFiniteWeights}):
 * what a host runs on a file a user adds or starts a run with, before any model loads.
 *
 * @throws ModelError `MODEL_NOT_FOUND`, `MODEL_INVALID` (see `readGgufInfo`; also a non-finite weight).
 */
export async function readCheckedGgufInfo(filePath: string): Promise<GgufInfo> {
  const info = await readGgufInfo(filePath);
  await scanFiniteWeights(filePath, info.sizeBytes);
  return info;
}
