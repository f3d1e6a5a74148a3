/** Sampling defaults and seed handling shared by both generation paths (`generate.ts`, `tokenRecorder.ts`). */
import type { LlamaContextSequence, LlamaGrammar } from 'node-llama-cpp';
import type { GenerateRequest } from '../../core/model/index.ts';
import type { RenderedInput } from './renderInput.ts';

/**
 * One sampling call, as generate.ts hands it to either path (`sampleCompletion`, or
 * tokenRecorder.ts `sampleRecorded`): the acquired sequence (history cleared), the rendered
 * prompt, the request, the JSON-schema grammar if any, the user's non-empty stop strings and the
 * call's abort signal.
 */
export interface SampleCall {
  sequence: LlamaContextSequence;
  input: RenderedInput;
  request: GenerateRequest;
  grammar: LlamaGrammar | undefined;
  userStops: readonly string[];
  signal: AbortSignal | undefined;
}

/** Top-k, top-p and min-p cut-offs of a sampler (node-llama-cpp's option names; topK 0 = off). */
export interface SamplingCutoffs {
  topK: number;
  topP: number;
  minP: number;
}

/** node-llama-cpp's own sampling defaults, made explicit so the results do not hide them. */
export const SAMPLING_DEFAULTS: SamplingCutoffs = { topK: 40, topP: 0.95, minP: 0 };

/** On-policy sampling defaults of the recorded path: the full distribution at the given temperature. */
export const ON_POLICY: SamplingCutoffs = { topK: 0, topP: 1, minP: 0 };

/** node-llama-cpp clamps negative seeds to 0 and llama.cpp takes 32 bits: map every seed into [0, 2^32). */
export function normaliseSeed(seed: number): number {
  if (!Number.isFinite(seed)) return 0;
  const m = Math.trunc(seed) % 2 ** 32;
  return m < 0 ? m + 2 ** 32 : m;
}


/**
 * The sampler options of a request, as node-llama-cpp names them: its temperature (default 0,
 * greedy), its topK, topP and minP, each defaulting to `defaults`, and its seed mapped into
 * [0, 2^32) (normaliseSeed). Both `LlamaCompletion` and `sequence.evaluate` take this shape.
 */
export function samplerOptions(request: GenerateRequest, defaults: SamplingCutoffs): SamplingCutoffs & { temperature: number; seed: number } {
  const p = request.params;
  return {
    temperature: p.temperature ?? 0,
    topK: p.topK ?? defaults.topK,
    topP: p.topP ?? defaults.topP,
    minP: p.minP ?? defaults.minP,
    seed: normaliseSeed(request.seed),
  };
}
