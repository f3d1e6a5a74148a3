/**
 * `flowlab tune`'s measurement: tokens per second of one model file over thread counts and
 * batch sizes on this machine. Each setting gets a fresh provider (its own context), one warm-up
 * call, then `repeats` timed greedy calls of a fixed prompt from an empty KV cache (prefix reuse
 * off, so every call evaluates its whole prompt); the figure is (prompt + completion tokens) per
 * second of the median call, the work a workflow's call does.
 */
import { asRoleName } from '../../core/ids.ts';
import { LlamaProvider } from './LlamaProvider.ts';

/** One measured setting. */
export interface TunePoint {
  threads: number;
  batchSize: number;
  /** Prompt + completion tokens per second of the median timed call. */
  tokensPerSecond: number;
  /** Median wall time of a timed call, ms. */
  medianMs: number;
}

/** Options of {@link measureSettings}. */
export interface TuneOptions {
  /** Thread counts to try (each at most the machine's cores; the caller checks). */
  threads: readonly number[];
  /** Batch sizes to try (tokens per decode). */
  batchSizes: readonly number[];
  /** Timed calls per setting. Default 3. */
  repeats?: number;
  /** Tokens generated per call. Default 32. */
  maxTokens?: number;
  /** Called after each setting is measured (progress). */
  onPoint?: (point: TunePoint, done: number, total: number) => void;
  signal?: AbortSignal;
}

/** The prompt every setting is timed on: about 200 tokens of plain text (evaluated in batches), then generation. */
const PROMPT = 'Once upon a time, in a small town by the sea, there lived a girl who loved to count the boats. '.repeat(4);

/**
 * Measures `file` at every (threads, batchSize) pair, in that order.
 * @returns the points measured (every pair) and the best one (highest tokens/s; ties: fewer threads).
 * @throws ModelError as `LlamaProvider.generate` does (a missing or invalid file, a runtime that cannot start).
 */
export async function measureSettings(file: string, options: TuneOptions): Promise<{ points: TunePoint[]; best: TunePoint }> {
  const repeats = options.repeats ?? 3;
  const maxTokens = options.maxTokens ?? 32;
  const points: TunePoint[] = [];
  const total = options.threads.length * options.batchSizes.length;
  for (const threads of options.threads) {
    for (const batchSize of options.batchSizes) {
      const provider = new LlamaProvider({ models: { m: { path: file, threads, batchSize, sequences: 1, prefixReuse: false } } });
      try {
        const call = (i: number) =>
          provider.generate({
            role: asRoleName('tune'), model: 'm', prompt: PROMPT, seed: i, params: { temperature: 0, maxTokens },
            key: { taskKey: 'tune', nodeId: 'tune', attempt: 1, callIndex: i },
            ...(options.signal ? { signal: options.signal } : {}),
          });
        await call(0); // warm-up: loads the model and the context
        const timed: { ms: number; tokens: number }[] = [];
        for (let i = 1; i <= repeats; i++) {
          const t0 = performance.now();
          const out = await call(i);
          timed.push({ ms: performance.now() - t0, tokens: out.tokens.prompt + out.tokens.completion });
        }
        timed.sort((a, b) => a.ms - b.ms);
        const mid = timed[Math.floor(timed.length / 2)]!;
        const point = { threads, batchSize, medianMs: mid.ms, tokensPerSecond: (mid.tokens / mid.ms) * 1000 };
        points.push(point);
        options.onPoint?.(point, points.length, total);
      } finally {
        await provider.dispose();
      }
    }
  }
  const best = points.reduce((a, b) => (b.tokensPerSecond > a.tokensPerSecond ? b : a));
  return { points, best };
}
