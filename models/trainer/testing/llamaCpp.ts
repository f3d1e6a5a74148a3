/**
 * llama.cpp (node-llama-cpp 3.21.1) as the reference the trainer is checked against, through its
 * low-level sequence API so both sides see exactly the same token ids (BOS included): greedy
 * tokens from `sequence.evaluate(tokens, {temperature: 0})`, next-token distributions from
 * `sequence.controlledEvaluate` with `generateNext.probabilities` (temperature 1, topK 0,
 * topP 1, minP 0: the full softmax). CPU only, one thread. For tests and the bench.
 *
 * Measured (stories260K, 25 positions): with llama.cpp's exact F32 attention (`'f32'` below) the
 * tfjs probabilities agree to ~2e-6; with node-llama-cpp's defaults (flash attention on CPU,
 * which computes attention in F16) the difference is 4.4e-4 on "Once upon a time" and up to
 * ~2.4e-3 on other prompts: llama.cpp's F16 rounding, not the trainer's.
 */
import { LlamaLogLevel, type Llama, type LlamaContext, type LlamaModel, type Token } from 'node-llama-cpp';
import { sharedRuntime } from '../../llama/runtime.ts';

/**
 * The process's llama.cpp runtime for tests: the one `LlamaProvider` shares (`models/llama/runtime.ts`;
 * prebuilt binary only), CPU, errors only.
 */
export function llamaRuntime(): Promise<Llama> {
  return sharedRuntime(false, LlamaLogLevel.error);
}

/** One model file opened in llama.cpp with a single-sequence context. */
export class LlamaCppReference {
  private constructor(
    readonly model: LlamaModel,
    private readonly context: LlamaContext,
    /** Milliseconds the model load and context creation took. */
    readonly loadMs: number,
  ) {}

  /**
   * @param attention `'default'`: node-llama-cpp's defaults, as Flowlab samples (flash attention
   *   `auto`, which is on for these models on CPU, and an F16 KV cache: the CPU flash-attention
   *   kernel computes in F16, ~1e-3 probability noise). `'f32'`: flash attention off and an F32
   *   KV cache, llama.cpp's exact F32 path.
   */
  static async open(modelPath: string, attention: 'default' | 'f32' = 'default', contextSize = 512): Promise<LlamaCppReference> {
    const llama = await llamaRuntime();
    const t0 = performance.now();
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({
      contextSize,
      threads: 1,
      sequences: 1,
      ...(attention === 'f32' ? { flashAttention: false, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' } : {}),
    });
    return new LlamaCppReference(model, context, performance.now() - t0);
  }

  /** `text`'s token ids with BOS first, as llama.cpp prepends it for this model. */
  tokenize(text: string): number[] {
    const ids = this.model.tokenize(text) as number[];
    const bos = this.model.tokens.bos;
    return bos != null && this.model.tokens.shouldPrependBosToken ? [bos as number, ...ids] : ids;
  }

  detokenize(ids: readonly number[]): string {
    return this.model.detokenize(ids as Token[]);
  }

  /** `n` greedy tokens (temperature 0) after `tokens`; stops early at end of generation. */
  async greedy(tokens: readonly number[], n: number): Promise<number[]> {
    const seq = this.context.getSequence();
    try {
      const out: number[] = [];
      if (n <= 0) return out;
      for await (const t of seq.evaluate(tokens as Token[], { temperature: 0 })) {
        out.push(t);
        if (this.model.isEogToken(t) || out.length >= n) break;
      }
      return out;
    } finally {
      seq.dispose();
    }
  }

  /** Row `i`: P(next token | tokens[0..i]) over the vocabulary (the full softmax). */
  async probabilities(tokens: readonly number[]): Promise<number[][]> {
    const seq = this.context.getSequence();
    try {
      const res = await seq.controlledEvaluate(
        tokens.map((t) => [t as Token, { generateNext: { probabilities: true, options: { temperature: 1, topK: 0, topP: 1, minP: 0 } } }]),
      );
      return res.map((r, i) => {
        const probs = r?.next?.probabilities;
        if (!probs) throw new Error(`llama.cpp returned no probabilities at position ${i}`);
        const row = new Array<number>(probs.size).fill(0); // topK 0: every token of the vocabulary
        for (const [tok, p] of probs) row[tok] = p;
        return row;
      });
    } finally {
      seq.dispose();
    }
  }

  async dispose(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
