/** Sampling defaults and seed handling shared by both generation paths (`generate.ts`, `tokenRecorder.ts`). */

/** node-llama-cpp's own sampling defaults, made explicit so the results do not hide them. */
export const SAMPLING_DEFAULTS = { topK: 40, topP: 0.95, minP: 0 };

/** On-policy sampling defaults of the recorded path: the full distribution at the given temperature. */
export const ON_POLICY = { topK: 0, topP: 1, minP: 0 };

/** node-llama-cpp clamps negative seeds to 0 and llama.cpp takes 32 bits: map every seed into [0, 2^32). */
export function normaliseSeed(seed: number): number {
  if (!Number.isFinite(seed)) return 0;
  const m = Math.trunc(seed) % 2 ** 32;
  return m < 0 ? m + 2 ** 32 : m;
}

