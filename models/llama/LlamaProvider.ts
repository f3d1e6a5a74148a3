/**
 * The node-llama-cpp adapter of the `ModelProvider` port: local GGUF models on CPU (or GPU).
 *
 * Design:
 * - Lazy: the llama.cpp runtime starts on first use (prebuilt binary only, never a source build)
 *   and is shared by every provider of the process (see `runtime.ts`); each model file loads on
 *   the first call that names one of its refs (or on `load()`).
 * - Refs that resolve (through `realpath`) to the same file share one `LlamaModel`, and refs with
 *   the same file and the same LoRA adapters (none, usually) share one `LlamaContext`; a ref with
 *   different adapters gets a context of its own on the same model (node-llama-cpp applies
 *   adapters per context), so per-role adapters cost one context each, not one model each.
 *   A context has `sequences` sequences handed out by a small pool. Concurrent
 *   `generate` calls on one model each take a free sequence (waiting when none is free) and
 *   node-llama-cpp's batch scheduler interleaves them, instead of one call waiting for another.
 *   By default (`batching: 'isolated'`) each decode batch holds one sequence, because mixing
 *   sequences in a batch changes llama.cpp's numerics and so, at temperature > 0, the sampled
 *   text; `batching: 'mixed'` opts into shared batches for throughput.
 * - Every call starts from an empty sequence (history cleared): results never depend on which
 *   calls ran before or beside it, and the same seed, prompt and params give the same text.
 *
 * The class composes the parts, one concern per file: settings (`config.ts`), the model and
 * context cache (`modelCache.ts`, loading through `loaders.ts`, log lines in `logRing.ts`), the
 * sequence pool (`sequencePool.ts`), one call (`generate.ts`: prompt rendering in
 * `renderInput.ts`, signal linking in `signals.ts`, the token-recording sampler in
 * `tokenRecorder.ts`), LoRA checks (`loraAdapters.ts`) and the shared runtime (`runtime.ts`).
 */
import type { Token } from 'node-llama-cpp';
import type { GenerateRequest, GenerateResult, ModelProvider, RenderedPrompt } from '../../core/model/index.ts';
import type { LlamaProviderOptions, LoadedModelInfo } from './config.ts';
import { generate, renderPrompt } from './generate.ts';
import { ModelCache } from './modelCache.ts';

export type { LlamaLoraAdapter, LlamaModelConfig, LlamaProviderOptions, LoadedModelInfo } from './config.ts';

/**
 * `ModelProvider` over node-llama-cpp 3.x for local GGUF files.
 *
 * @example
 * ```ts
 * const provider = new LlamaProvider({ models: { default: { path: 'models/stories260K.gguf' } } });
 * const out = await provider.generate({ model: 'default', prompt: 'Once upon a time', seed: 1,
 *   params: { temperature: 0, maxTokens: 40 }, role, key });
 * await provider.dispose();
 * ```
 */
export class LlamaProvider implements ModelProvider {
  readonly name = 'node-llama-cpp';

  private readonly cache: ModelCache;

  constructor(private readonly options: LlamaProviderOptions) {
    this.cache = new ModelCache(options);
  }

  /**
   * Generates a completion for one request.
   *
   * Prompt: when the model file has a chat template, a single user turn (`request.prompt`) with
   * `request.system` as the system message, rendered by node-llama-cpp's chat wrapper for that
   * template; otherwise plain completion of `system + "\n\n" + prompt` (or just `prompt`).
   *
   * Sampling: `temperature` 0 is greedy; `topK` (default 40), `topP` (default 0.95) and `minP`
   * (default 0) apply when `temperature > 0`; no repeat penalty. `seed` is used modulo 2^32.
   * `maxTokens` caps the sampled tokens (<= 0: until EOS or a full context); generation also
   * stops at a full context (`stopReason: 'maxTokens'`), never shifting the context. `stop`
   * strings end generation before their first occurrence. `jsonSchema` constrains decoding to
   * JSON matching the schema; the raw text is returned.
   *
   * Token counts (the model tokenizer's real counts):
   * - `prompt`: the tokens fed, including the BOS token the runtime prepends (computed by
   *   tokenizing exactly as `LlamaCompletion` does, before generation).
   * - `completion`: the tokens sampled in this call, read from the sequence's `TokenMeter`
   *   (output side); it includes a final EOS/end-of-turn token and the tokens of a stop string,
   *   neither of which is in `text`.
   *
   * `ms` is the wall time of the whole call (including a first-use model load and any wait for a
   * free sequence).
   *
   * @throws ModelError `MODEL_UNKNOWN_REF` (ref not in `options.models`), `MODEL_NOT_FOUND`,
   *   `MODEL_INVALID`, `MODEL_LOAD_FAILED` (first use of a model), `ABORTED` (`request.signal`),
   *   `GENERATION_FAILED` (prompt does not fit the context, schema cannot be compiled, runtime
   *   failure, or the provider is disposed).
   */
  generate(request: GenerateRequest): Promise<GenerateResult> {
    return generate(this.cache, request);
  }

  /**
   * The prompt of `request` exactly as `generate` feeds it: through the file's chat template
   * (`form: 'template'`) or as plain completion text (`plain`), detokenized with special tokens
   * written out; `tokens` is `GenerateResult.tokens.prompt` of the same request. Loads the model
   * on first use. Nothing is generated.
   * @throws ModelError `MODEL_UNKNOWN_REF`, `MODEL_NOT_FOUND`, `MODEL_INVALID`, `MODEL_LOAD_FAILED`,
   *   `GENERATION_FAILED` (the template fails on these messages, or the provider is disposed).
   */
  renderPrompt(request: GenerateRequest): Promise<RenderedPrompt> {
    return renderPrompt(this.cache, request);
  }

  /**
   * Loads a model ahead of use (to surface errors and load time early).
   *
   * @param ref a key of `options.models`; omitted: every configured ref (each file once).
   * @returns one entry per distinct context (file + adapters) used by the refs loaded.
   * @throws ModelError `MODEL_UNKNOWN_REF`, `MODEL_NOT_FOUND`, `MODEL_INVALID`, `MODEL_LOAD_FAILED`
   *   (the first failure when several refs load), or `GENERATION_FAILED` after `dispose()`.
   */
  async load(ref?: string): Promise<LoadedModelInfo[]> {
    this.cache.assertOpen();
    const refs = ref === undefined ? Object.keys(this.options.models) : [ref];
    const loaded = await Promise.all(refs.map((r) => this.cache.entryForRef(r)));
    return [...new Set(loaded)].map((l) => l.summary);
  }

  /**
   * Character offsets of each token in the detokenized text of `ids` under the model behind
   * `ref` (`offsets[i]` = the length of `detokenize(ids[0..i))`, the same detokenizer that makes
   * a recorded completion's text). O(n²) in characters; n is a completion (at most a few hundred).
   * @throws ModelError as `load` does for the ref.
   */
  async tokenOffsets(ref: string, ids: readonly number[]): Promise<number[]> {
    this.cache.assertOpen();
    const { model } = await this.cache.entryForRef(ref);
    const tokens = ids.map((t) => t as Token);
    return tokens.map((_, i) => model.detokenize(tokens.slice(0, i)).length);
  }

  /** Number of distinct model files loaded so far (refs sharing a file count once). */
  modelsLoaded(): number {
    return this.cache.modelsLoaded;
  }

  /**
   * Number of contexts created so far: one per distinct (file, adapters) in use; refs with
   * different LoRA adapters on one file count one model and one context each.
   */
  contextsCreated(): number {
    return this.cache.contextsCreated;
  }

  /**
   * Releases every context and model (the llama.cpp runtime itself is shared by the process's
   * providers and stays loaded; see `sharedRuntime`). Calls in flight fail with
   * `GENERATION_FAILED`; any later `generate`/`load` throws `GENERATION_FAILED` ("disposed").
   * Safe to call twice.
   */
  dispose(): Promise<void> {
    return this.cache.dispose();
  }
}
