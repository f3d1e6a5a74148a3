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
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import {
  LlamaCompletion,
  LlamaGrammarEvaluationState,
  LlamaText,
  LlamaVocabularyType,
  resolveChatWrapper,
  type ChatHistoryItem,
  type ChatWrapper,
  type CustomBatchingPrioritizationStrategy,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaLogLevel,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import {
  ModelError,
  type GenerateRequest,
  type GenerateResult,
  type JsonSchema,
  type ModelProvider,
} from '../../core/model/index.ts';
import { checkGgufFile, type GgufInfo } from './ggufInfo.ts';
import { checkAdapters, contextKey, contextKeySync, realpathOrUndefined, type ResolvedLora } from './loraAdapters.ts';
import { logListeners, sharedRuntime, type LogListener } from './runtime.ts';

/** How one model file is run. Unset fields fall back to {@link LlamaProviderOptions.defaults}. */
export interface LlamaModelConfig {
  /** Path to the `.gguf` file (relative paths resolve against the process's working directory). */
  path: string;
  /**
   * Context size per sequence, in tokens: the prompt (including BOS) plus the completion must fit.
   * llama.cpp may round it up (to a multiple of 256).
   *
   * Defaults to `defaults.contextSize` (1024).
   */
  contextSize?: number;
  /**
   * CPU threads used to evaluate this model's context. Always set it explicitly: on the 2-core
   * reference machine 1 thread gave ~1,000-3,000 tokens/s with the tiny model, node-llama-cpp's
   * own default (4) ~2 tokens/s.
   *
   * Defaults to `defaults.threads` (1).
   */
  threads?: number;
  /**
   * `false`: CPU only (no layers offloaded). `'auto'`: offload as many layers as fit on a GPU, if
   * the runtime finds one (also makes `getLlama` look for a GPU backend).
   *
   * Defaults to `defaults.gpu` (`false`).
   */
  gpu?: 'auto' | false;
  /**
   * Parallel sequences in the model's context: how many `generate` calls on this model run (and
   * are batched) at once; further calls wait for a free sequence. Memory grows with
   * `contextSize * sequences`.
   *
   * Defaults to `defaults.sequences` (4).
   */
  sequences?: number;
  /**
   * How concurrent calls on this model share decode batches.
   * - `'isolated'`: every llama.cpp decode holds tokens of one sequence only; concurrent calls
   *   interleave batch by batch (round robin). A call's text never depends on what else runs:
   *   the same seed, prompt and params give the same text alone or under load.
   * - `'mixed'`: node-llama-cpp's default, several sequences per decode (more throughput on larger
   *   models). Measured here: batched evaluation changes logits slightly, and at temperature > 0
   *   about 1 in 10 60-token calls then samples a different continuation than it would alone
   *   (greedy decoding was unaffected in 160 trials). Use only when reproducibility under
   *   concurrency does not matter.
   *
   * Defaults to `defaults.batching` (`'isolated'`).
   */
  batching?: 'isolated' | 'mixed';
  /**
   * `true`: attention computed exactly in F32 (flash attention off, F32 KV cache), so sampled
   * log-probabilities match the tfjs trainer's to ~1e-6 instead of ~1e-3 (models/trainer parity
   * test): on-policy sampling for laptop RL. Slower and larger; off by default.
   */
  exactAttention?: boolean;
  /**
   * LoRA adapters (GGUF files in llama.cpp's adapter layout, e.g. from llama.cpp's
   * `convert_lora_to_gguf.py`, or `makeLoraAdapter` in `models/gguf`) applied on top of the
   * base model for this ref. Each update is added as `scale * (alpha / rank) * B A x`;
   * `scale` defaults to 1 (0 disables an adapter; negative values subtract it).
   *
   * A ref with adapters gets its own context on the shared base model; refs naming the same
   * file with the same adapters and scales (in the same order) share that context. Adapter
   * files are checked before use: a missing file is `MODEL_NOT_FOUND`, a file that is not a
   * GGUF or not a LoRA adapter (`general.type = "adapter"`, `adapter.type = "lora"`) is
   * `MODEL_INVALID`, and an adapter made for another architecture or another base model
   * (tensor missing or of another shape) is `MODEL_LOAD_FAILED`; every message names the
   * adapter file and the ref.
   *
   * Defaults to none.
   */
  lora?: ReadonlyArray<LlamaLoraAdapter>;
}

/** One LoRA adapter of a model ref (see {@link LlamaModelConfig.lora}). */
export interface LlamaLoraAdapter {
  /** Path to the adapter `.gguf` (relative paths resolve against the working directory). */
  path: string;
  /** Multiplier of the adapter's update. Defaults to 1. */
  scale?: number;
}

/** Options of {@link LlamaProvider}. */
export interface LlamaProviderOptions {
  /**
   * Model refs (`GenerateRequest.model`, e.g. `"default"` or a role's ref) to model files.
   * Several refs may name the same file: it is loaded once. When refs sharing a context (same
   * file, same adapters) disagree on settings, the largest `contextSize`, `threads` and
   * `sequences` win and `batching: 'isolated'` wins; `gpu: 'auto'` on any ref of a file wins.
   */
  models: Record<string, LlamaModelConfig>;
  /** Fallbacks for unset per-model settings. */
  defaults?: {
    /** Tokens per sequence. Defaults to `1024`. */
    contextSize?: number;
    /** CPU threads per context. Defaults to `1` (set it explicitly; see {@link LlamaModelConfig.threads}). */
    threads?: number;
    /** Defaults to `false` (CPU only). */
    gpu?: 'auto' | false;
    /** Parallel sequences per context. Defaults to `4`. */
    sequences?: number;
    /** Defaults to `'isolated'` (see {@link LlamaModelConfig.batching}). */
    batching?: 'isolated' | 'mixed';
  };
  /**
   * Least severe llama.cpp log level passed on. Defaults to `'error'` (the tiny models' harmless
   * load warnings are `warn`).
   */
  logLevel?: `${LlamaLogLevel}`;
  /**
   * Receives llama.cpp's log lines at or above `logLevel`. Defaults to printing them on stderr
   * prefixed `[llama.cpp]`. Error lines logged while a model loads are also added to the
   * `MODEL_LOAD_FAILED` message.
   */
  onLog?: (level: `${LlamaLogLevel}`, message: string) => void;
}

/** A loaded model context (a file plus its LoRA adapters), as reported by {@link LlamaProvider.load}. */
export interface LoadedModelInfo {
  /** The refs (keys of `options.models`) that use this context: same file, same adapters. */
  refs: string[];
  /** The file's real path (symlinks resolved): the identity models are shared by. */
  path: string;
  /** Base name of `path`; also `GenerateResult.model`. */
  fileName: string;
  /** Header summary (see `readGgufInfo`). */
  info: GgufInfo;
  /** Actual context size per sequence, in tokens (after llama.cpp's rounding). */
  contextSize: number;
  threads: number;
  sequences: number;
  gpu: 'auto' | false;
  batching: 'isolated' | 'mixed';
  /** True when generation goes through the model's chat template; false: plain completion. */
  usesChatTemplate: boolean;
  /** The LoRA adapters applied in this context (real paths, scales); empty for the plain model. */
  lora: Array<{ path: string; scale: number }>;
  /**
   * Milliseconds to create this context (and load its adapters), plus the model load when this
   * context's creation loaded it (excludes `getLlama`).
   */
  loadMs: number;
}

const DEFAULTS = {
  contextSize: 1024,
  threads: 1,
  gpu: false as 'auto' | false,
  sequences: 4,
  batching: 'isolated' as 'isolated' | 'mixed',
};
/** node-llama-cpp's own sampling defaults, made explicit so the results do not hide them. */
const SAMPLING_DEFAULTS = { topK: 40, topP: 0.95, minP: 0 };

/** Settings of one context (the file-level `gpu` is resolved when the model loads). */
interface ResolvedSettings {
  contextSize: number;
  threads: number;
  sequences: number;
  batching: 'isolated' | 'mixed';
  exactAttention: boolean;
}

/** A loaded model file, shared by every context on it. */
interface LoadedFile {
  model: LlamaModel;
  gpu: 'auto' | false;
  /** Set only when the file carries `tokenizer.chat_template`. */
  chatWrapper?: ChatWrapper;
  prependsBos: boolean;
}

/** One context: a model file plus its adapters. */
interface LoadedModel {
  summary: LoadedModelInfo;
  model: LlamaModel;
  context: LlamaContext;
  pool: SequencePool;
  /** Set only when the file carries `tokenizer.chat_template`. */
  chatWrapper?: ChatWrapper;
  /** Whether LlamaCompletion prepends a beginning-of-sequence token to the input. */
  prependsBos: boolean;
}

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

  private readonly options: LlamaProviderOptions;
  private llamaPromise?: Promise<Llama>;
  /** ref -> its context (promise; removed again when loading fails, so a retry retries). */
  private readonly refs = new Map<string, Promise<LoadedModel>>();
  /** real file path -> loaded model. */
  private readonly files = new Map<string, Promise<LoadedFile>>();
  /** context key (real file path + adapters) -> context. */
  private readonly contexts = new Map<string, Promise<LoadedModel>>();
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private loadedCount = 0;
  private contextCount = 0;
  private disposed = false;
  private readonly logRing: { seq: number; level: string; message: string }[] = [];
  private logSeq = 0;
  private logListener?: LogListener;

  constructor(options: LlamaProviderOptions) {
    this.options = options;
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
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    this.assertOpen();
    const { signal } = request;
    throwIfAborted(signal, request.model);

    const loaded = await this.entryForRef(request.model);
    const grammar = request.jsonSchema ? await this.grammarFor(request.jsonSchema) : undefined;
    throwIfAborted(signal, request.model);

    const fileName = loaded.summary.fileName;
    const input = renderInput(loaded, request);
    const promptTokens = input.tokens.length + (loaded.prependsBos ? 1 : 0);
    const contextSize = loaded.summary.contextSize;
    if (promptTokens >= contextSize) {
      throw new ModelError(
        'GENERATION_FAILED',
        `Prompt of ${promptTokens} tokens does not fit the ${contextSize}-token context of ${fileName} (ref "${request.model}"); raise contextSize`,
        request.model,
      );
    }

    const userStops = (request.params.stop ?? []).filter((s) => s !== '');
    const stopTriggers: (string | LlamaText)[] = [...userStops, ...input.extraStops];
    const temperature = request.params.temperature ?? 0;

    // One listener on the caller's signal however many calls share it: a rollout group runs G
    // calls under one signal, node-llama-cpp adds listeners per call, and Node warns past 10.
    const link = signal ? linkSignal(signal) : undefined;
    const callSignal = link?.signal;
    let sequence: LlamaContextSequence;
    try {
      sequence = await loaded.pool.acquire(callSignal, request.model);
    } catch (err) {
      link?.release();
      throw err;
    }
    try {
      await sequence.clearHistory();
      if (request.recordTokens) {
        const rec = await sampleRecorded(loaded, sequence, input, request, grammar, userStops, callSignal);
        return {
          text: rec.text,
          tokens: { prompt: rec.promptTokenIds.length, completion: rec.completionTokenIds.length },
          ms: performance.now() - started,
          seed: request.seed,
          model: fileName,
          stopReason: rec.stopReason,
          renderedPrompt: input.rendered,
          promptTokenIds: rec.promptTokenIds,
          completionTokenIds: rec.completionTokenIds,
        };
      }
      const completion = new LlamaCompletion({ contextSequence: sequence });
      const meterBefore = sequence.tokenMeter.getState();
      let response;
      try {
        response = await completion.generateCompletionWithMeta(input.tokens, {
          temperature,
          topK: request.params.topK ?? SAMPLING_DEFAULTS.topK,
          topP: request.params.topP ?? SAMPLING_DEFAULTS.topP,
          minP: request.params.minP ?? SAMPLING_DEFAULTS.minP,
          seed: normaliseSeed(request.seed),
          maxTokens: request.params.maxTokens,
          repeatPenalty: false,
          ...(grammar ? { grammar } : {}),
          ...(stopTriggers.length > 0 ? { customStopTriggers: stopTriggers } : {}),
          ...(callSignal ? { signal: callSignal } : {}),
          // Never drop or shift tokens silently: the prompt was checked to fit above, and
          // generation ends when the context is full. (A numeric shift size is used as is;
          // it bounds the prompt to contextSize - 1 inside LlamaCompletion.)
          disableContextShift: true,
          contextShiftSize: 1,
        });
      } finally {
        completion.dispose({ disposeSequence: false });
      }
      const used = sequence.tokenMeter.diff(meterBefore);
      const meta = response.metadata;
      let stopReason: GenerateResult['stopReason'];
      switch (meta.stopReason) {
        case 'eogToken':
        case 'stopGenerationTrigger': // the grammar's end (the JSON value is complete)
          stopReason = 'eos';
          break;
        case 'maxTokens':
          stopReason = 'maxTokens';
          break;
        case 'abort':
          stopReason = 'abort';
          break;
        case 'customStopTrigger': {
          const trigger = meta.customStopTrigger;
          const isUserStop =
            trigger.length > 0 && trigger.every((t) => typeof t === 'string') && userStops.includes(trigger.join(''));
          // The chat template's own end-of-turn triggers count as a natural end.
          stopReason = isUserStop || input.extraStops.length === 0 ? 'stop' : 'eos';
          break;
        }
        default:
          stopReason = 'other';
      }
      return {
        text: response.response,
        tokens: { prompt: promptTokens, completion: used.usedOutputTokens },
        ms: performance.now() - started,
        seed: request.seed,
        model: fileName,
        stopReason,
        renderedPrompt: input.rendered,
      };
    } catch (err) {
      if (err instanceof ModelError) throw err;
      if (signal?.aborted) {
        throw new ModelError('ABORTED', `Generation on ${fileName} (ref "${request.model}") was aborted`, request.model, {
          cause: signal.reason ?? err,
        });
      }
      if (this.disposed) {
        throw new ModelError('GENERATION_FAILED', 'LlamaProvider was disposed during generation', request.model, {
          cause: err,
        });
      }
      throw new ModelError(
        'GENERATION_FAILED',
        `Generation failed on ${fileName} (ref "${request.model}"): ${errorText(err)}`,
        request.model,
        { cause: err },
      );
    } finally {
      loaded.pool.release(sequence);
      link?.release();
    }
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
    this.assertOpen();
    const refs = ref === undefined ? Object.keys(this.options.models) : [ref];
    const loaded = await Promise.all(refs.map((r) => this.entryForRef(r)));
    return [...new Set(loaded)].map((l) => l.summary);
  }

  /** Number of distinct model files loaded so far (refs sharing a file count once). */
  modelsLoaded(): number {
    return this.loadedCount;
  }

  /**
   * Number of contexts created so far: one per distinct (file, adapters) in use; refs with
   * different LoRA adapters on one file count one model and one context each.
   */
  contextsCreated(): number {
    return this.contextCount;
  }

  /**
   * Releases every context and model (the llama.cpp runtime itself is shared by the process's
   * providers and stays loaded; see `sharedRuntime`). Calls in flight fail with
   * `GENERATION_FAILED`; any later `generate`/`load` throws `GENERATION_FAILED` ("disposed").
   * Safe to call twice.
   */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const contexts = await Promise.allSettled([...this.contexts.values()]);
    for (const c of contexts) {
      if (c.status !== 'fulfilled') continue;
      c.value.pool.close(new ModelError('GENERATION_FAILED', 'LlamaProvider was disposed'));
      await c.value.context.dispose().catch(() => {});
    }
    const files = await Promise.allSettled([...this.files.values()]);
    for (const f of files) {
      if (f.status === 'fulfilled') await f.value.model.dispose().catch(() => {});
    }
    this.contexts.clear();
    this.files.clear();
    this.refs.clear();
    this.grammars.clear();
    // The runtime itself is shared by the process's providers and stays loaded (see sharedRuntime).
    this.llamaPromise = undefined;
    if (this.logListener) logListeners.delete(this.logListener);
  }

  // ---- internals -------------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.disposed) throw new ModelError('GENERATION_FAILED', 'LlamaProvider has been disposed');
  }

  private entryForRef(ref: string): Promise<LoadedModel> {
    const config = Object.hasOwn(this.options.models, ref) ? this.options.models[ref] : undefined;
    if (!config) {
      const known = Object.keys(this.options.models);
      return Promise.reject(
        new ModelError(
          'MODEL_UNKNOWN_REF',
          `Unknown model ref "${ref}"; this provider knows ${known.length ? known.map((k) => `"${k}"`).join(', ') : 'no models'}`,
          ref,
        ),
      );
    }
    let entry = this.refs.get(ref);
    if (!entry) {
      entry = this.loadRef(ref, config);
      this.refs.set(ref, entry);
      entry.catch(() => {
        if (this.refs.get(ref) === entry) this.refs.delete(ref);
      });
    }
    return entry;
  }

  private async loadRef(ref: string, config: LlamaModelConfig): Promise<LoadedModel> {
    const given = path.resolve(config.path);
    const { info } = await checkGgufFile(given);
    const real = await realpath(given);
    const adapters = await checkAdapters(ref, config.lora ?? [], real, info);
    this.assertOpen();
    const key = contextKey(real, adapters);
    let context = this.contexts.get(key);
    if (!context) {
      context = this.createContext(key, real, info, adapters);
      this.contexts.set(key, context);
      context.catch(() => {
        if (this.contexts.get(key) === context) this.contexts.delete(key);
      });
    }
    return context;
  }

  private fileFor(realFile: string, info: GgufInfo): Promise<LoadedFile> {
    let file = this.files.get(realFile);
    if (!file) {
      file = this.loadFile(realFile, info);
      this.files.set(realFile, file);
      file.catch(() => {
        if (this.files.get(realFile) === file) this.files.delete(realFile);
      });
    }
    return file;
  }

  /** Settings of one context, merged over every ref that uses it (same real file, same adapters). */
  private settingsFor(key: string, realFile: string): { refs: string[]; settings: ResolvedSettings } {
    const d = { ...DEFAULTS, ...definedOnly(this.options.defaults ?? {}) };
    const refs: string[] = [];
    const settings: ResolvedSettings = { contextSize: 0, threads: 0, sequences: 0, batching: 'mixed', exactAttention: false };
    for (const [ref, c] of Object.entries(this.options.models)) {
      const real = realpathOrUndefined(c.path);
      if (real !== realFile) continue;
      if (contextKeySync(real, c.lora ?? []) !== key) continue;
      refs.push(ref);
      settings.contextSize = Math.max(settings.contextSize, c.contextSize ?? d.contextSize);
      settings.threads = Math.max(settings.threads, c.threads ?? d.threads);
      settings.sequences = Math.max(settings.sequences, c.sequences ?? d.sequences);
      if ((c.batching ?? d.batching) === 'isolated') settings.batching = 'isolated';
      if (c.exactAttention) settings.exactAttention = true;
    }
    return { refs, settings };
  }

  private async loadFile(realFile: string, info: GgufInfo): Promise<LoadedFile> {
    const llama = await this.getLlamaOnce();
    this.assertOpen();
    const gpu = Object.values(this.options.models).some(
      (c) => (c.gpu ?? this.options.defaults?.gpu ?? DEFAULTS.gpu) === 'auto' && realpathOrUndefined(c.path) === realFile,
    )
      ? 'auto'
      : false;
    const logMark = this.logSeq;
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: realFile, gpuLayers: gpu === false ? 0 : 'auto' });
    } catch (err) {
      throw new ModelError(
        'MODEL_LOAD_FAILED',
        `Failed to load model ${realFile}: ${errorText(err)}${await this.logsSince(logMark)}`,
        realFile,
        { cause: err },
      );
    }
    let chatWrapper: ChatWrapper | undefined;
    if (info.hasChatTemplate) {
      try {
        // Only with a template: without one, resolveChatWrapper guesses (Llama2Chat for llama
        // models), whose default system prompt overflows small contexts.
        chatWrapper =
          resolveChatWrapper(model, { fallbackToOtherWrappersOnJinjaError: false, warningLogs: false }) ?? undefined;
      } catch (err) {
        await model.dispose().catch(() => {});
        throw new ModelError(
          'MODEL_LOAD_FAILED',
          `The chat template of ${realFile} cannot be used: ${errorText(err)}`,
          realFile,
          { cause: err },
        );
      }
    }
    if (this.disposed) {
      await model.dispose().catch(() => {});
      throw new ModelError('GENERATION_FAILED', 'LlamaProvider has been disposed');
    }
    this.loadedCount++;
    const file: LoadedFile = { model, gpu, prependsBos: prependsBos(model) };
    if (chatWrapper) file.chatWrapper = chatWrapper;
    return file;
  }

  private async createContext(key: string, realFile: string, info: GgufInfo, adapters: ResolvedLora[]): Promise<LoadedModel> {
    const started = performance.now();
    const loadingModel = !this.files.has(realFile);
    const file = await this.fileFor(realFile, info);
    this.assertOpen();
    const { refs, settings } = this.settingsFor(key, realFile);
    const fileName = path.basename(realFile);
    const refList = refs.map((r) => `"${r}"`).join(', ');
    const ctxStarted = performance.now();
    const logMark = this.logSeq;
    let context: LlamaContext;
    try {
      context = await file.model.createContext({
        contextSize: settings.contextSize,
        threads: settings.threads,
        sequences: settings.sequences,
        ...(settings.batching === 'isolated' ? { batching: { itemPrioritizationStrategy: oneSequencePerBatch } } : {}),
        ...(settings.exactAttention ? { flashAttention: false, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' } as const : {}),
        ...(adapters.length > 0
          ? { lora: { adapters: adapters.map((a) => ({ filePath: a.path, scale: a.scale })) } }
          : {}),
      });
    } catch (err) {
      const text = errorText(err);
      const logs = await this.logsSince(logMark);
      const adapter = adapters.find((a) => text.includes(a.path));
      if (adapter || (adapters.length > 0 && /lora/i.test(text))) {
        const which = adapter ? adapter.path : adapters.map((a) => a.path).join(', ');
        throw new ModelError(
          'MODEL_LOAD_FAILED',
          `LoRA adapter ${which} (ref ${refList}) cannot be applied to ${realFile}: ${text}${logs}; is it an adapter for this base model?`,
          adapter?.path ?? realFile,
          { cause: err },
        );
      }
      throw new ModelError(
        'MODEL_LOAD_FAILED',
        `Failed to create a context (${settings.contextSize} tokens x ${settings.sequences} sequences) for ${realFile}: ${text}${logs}`,
        realFile,
        { cause: err },
      );
    }
    if (this.disposed) {
      await context.dispose().catch(() => {});
      throw new ModelError('GENERATION_FAILED', 'LlamaProvider has been disposed');
    }
    this.contextCount++;
    const loaded: LoadedModel = {
      summary: {
        refs,
        path: realFile,
        fileName,
        info,
        contextSize: context.contextSize,
        threads: settings.threads,
        sequences: settings.sequences,
        gpu: file.gpu,
        batching: settings.batching,
        usesChatTemplate: file.chatWrapper != null,
        lora: adapters.map((a) => ({ ...a })),
        loadMs: loadingModel ? performance.now() - started : performance.now() - ctxStarted,
      },
      model: file.model,
      context,
      pool: new SequencePool(context, settings.sequences),
      prependsBos: file.prependsBos,
    };
    if (file.chatWrapper) loaded.chatWrapper = file.chatWrapper;
    return loaded;
  }

  private getLlamaOnce(): Promise<Llama> {
    if (!this.llamaPromise) {
      const d = this.options.defaults ?? {};
      const anyGpu = d.gpu === 'auto' || Object.values(this.options.models).some((m) => m.gpu === 'auto');
      if (!this.logListener) {
        this.logListener = {
          level: (this.options.logLevel ?? 'error') as LlamaLogLevel,
          ...(this.options.onLog ? { onLog: this.options.onLog } : {}),
          record: (level, message) => {
            this.logRing.push({ seq: ++this.logSeq, level, message });
            if (this.logRing.length > 50) this.logRing.shift();
          },
        };
        logListeners.add(this.logListener);
      }
      const promise = sharedRuntime(anyGpu ? 'auto' : false, this.logListener.level).catch((err: unknown) => {
        if (this.llamaPromise === promise) this.llamaPromise = undefined;
        throw new ModelError('MODEL_LOAD_FAILED', `The llama.cpp runtime could not start: ${errorText(err)}`, undefined, {
          cause: err,
        });
      });
      this.llamaPromise = promise;
    }
    return this.llamaPromise;
  }

  /** Error-level llama.cpp log lines since `mark`, formatted for an error message. */
  private async logsSince(mark: number): Promise<string> {
    // Native log lines can arrive a little after the failing call rejects.
    await new Promise((r) => setTimeout(r, 20));
    const lines = this.logRing
      .filter((l) => l.seq > mark && (l.level === 'error' || l.level === 'fatal'))
      .map((l) => l.message.trim());
    return lines.length ? ` (llama.cpp: ${lines.join('; ')})` : '';
  }

  private grammarFor(schema: JsonSchema): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let grammar = this.grammars.get(key);
    if (!grammar) {
      grammar = this.getLlamaOnce().then(async (llama) => {
        try {
          return await llama.createGrammarForJsonSchema(schema as Parameters<Llama['createGrammarForJsonSchema']>[0]);
        } catch (err) {
          throw new ModelError(
            'GENERATION_FAILED',
            `The JSON schema cannot be compiled into a grammar: ${errorText(err)}`,
            undefined,
            { cause: err },
          );
        }
      });
      this.grammars.set(key, grammar);
      grammar.catch(() => {
        if (this.grammars.get(key) === grammar) this.grammars.delete(key);
      });
    }
    return grammar;
  }
}

/**
 * Batch strategy for `batching: 'isolated'`: each decode takes tokens of the first queued
 * sequence only (node-llama-cpp queues in arrival order, so sequences take turns). llama.cpp's
 * numerics depend on the batch's shape, so this keeps every call's logits identical to a solo run.
 */
const oneSequencePerBatch: CustomBatchingPrioritizationStrategy = ({ items, size }) => {
  const first = items[0];
  return first ? [{ item: first, processAmount: Math.max(1, Math.min(size, first.tokens.length)) }] : [];
};

/** Tokens to feed (without the BOS that LlamaCompletion prepends), their text, extra stops. */
interface RenderedInput {
  tokens: Token[];
  rendered: string;
  extraStops: LlamaText[];
}

function renderInput(loaded: LoadedModel, request: GenerateRequest): RenderedInput {
  const { model, chatWrapper } = loaded;
  if (chatWrapper) {
    const history: ChatHistoryItem[] = [];
    if (request.system) history.push({ type: 'system', text: request.system });
    history.push({ type: 'user', text: request.prompt }, { type: 'model', response: [] });
    const state = chatWrapper.generateContextState({ chatHistory: history });
    let tokens = state.contextText.tokenize(model.tokenizer);
    // The template may start with BOS; LlamaCompletion adds its own, so drop the template's.
    if (loaded.prependsBos && tokens.length > 0 && tokens[0] === model.tokens.bos) tokens = tokens.slice(1);
    return { tokens, rendered: model.detokenize(tokens, true), extraStops: state.stopGenerationTriggers };
  }
  const text = request.system ? `${request.system}\n\n${request.prompt}` : request.prompt;
  // Exactly what LlamaCompletion does with a string input (see tokenizeInput + BOS handling).
  const tokens = model.tokenize(text, false, loaded.prependsBos ? 'trimLeadingSpace' : undefined);
  return { tokens, rendered: text, extraStops: [] };
}

/** On-policy sampling defaults of the recorded path: the full distribution at the given temperature. */
const ON_POLICY = { topK: 0, topP: 1, minP: 0 };

type StopTrigger = { kind: 'user' | 'end'; text: string } | { kind: 'user' | 'end'; tokens: Token[] };

/** A stop trigger as text (when it holds only text) or as a token sequence (special tokens). */
function toStopTrigger(
  kind: 'user' | 'end',
  trigger: string | LlamaText | readonly (string | Token)[],
  model: LlamaModel,
): StopTrigger {
  if (typeof trigger === 'string') return { kind, text: trigger };
  const values: readonly unknown[] = trigger instanceof LlamaText ? trigger.values : trigger;
  if (values.every((v) => typeof v === 'string')) return { kind, text: values.join('') };
  if (trigger instanceof LlamaText) return { kind, tokens: trigger.tokenize(model.tokenizer) };
  return { kind, tokens: (trigger as readonly (string | Token)[]).flatMap((v) => (typeof v === 'string' ? model.tokenize(v, false) : [v])) };
}

/**
 * The recorded, on-policy sampling path (`request.recordTokens`, issue 6; LAPTOP-RL.md): the
 * prompt is fed as token ids (BOS + the rendered prompt's tokens) through `sequence.evaluate`,
 * and every sampled id is kept, the final end-of-generation token included, so a trainer scores
 * exactly the tokens that were sampled (LlamaCompletion's own tokenization and its bookkeeping,
 * where the last sampled token never enters `contextTokens`, are bypassed). Sampling: the
 * request's temperature and seed; topK, topP and minP default to 0, 1 and 0 (the full
 * distribution). Stops: an end-of-generation token, a stop string (user stops: `stop`; the
 * grammar's and the chat template's: `eos`), `maxTokens`, or a full context (`maxTokens`). The
 * text is the detokenized ids before the stop (a stop string's own text is cut off; its
 * tokens stay in `completionTokenIds`, as they were sampled).
 */
async function sampleRecorded(
  loaded: LoadedModel,
  sequence: LlamaContextSequence,
  input: RenderedInput,
  request: GenerateRequest,
  grammar: LlamaGrammar | undefined,
  userStops: readonly string[],
  signal: AbortSignal | undefined,
): Promise<{ text: string; promptTokenIds: number[]; completionTokenIds: number[]; stopReason: GenerateResult['stopReason'] }> {
  const { model } = loaded;
  const bos = model.tokens.bos;
  const promptIds: Token[] = loaded.prependsBos && bos != null ? [bos, ...input.tokens] : [...input.tokens];
  const stops: StopTrigger[] = [
    ...userStops.map((t) => toStopTrigger('user', t, model)),
    ...input.extraStops.map((t) => toStopTrigger('end', t, model)),
    ...(grammar?.stopGenerationTriggers ?? []).map((t) => toStopTrigger('end', t, model)),
  ];
  const p = request.params;
  const maxTokens = p.maxTokens > 0 ? p.maxTokens : Infinity;
  const room = loaded.summary.contextSize - 1 - promptIds.length;
  const completion: Token[] = [];
  let stopReason: GenerateResult['stopReason'] = 'maxTokens';
  let textEnd: number | undefined;
  let idsEnd: number | undefined;
  if (Math.min(maxTokens, room) <= 0) return { text: '', promptTokenIds: promptIds.map(Number), completionTokenIds: [], stopReason };
  const iterator = sequence.evaluate(promptIds, {
    temperature: p.temperature ?? 0,
    topK: p.topK ?? ON_POLICY.topK,
    topP: p.topP ?? ON_POLICY.topP,
    minP: p.minP ?? ON_POLICY.minP,
    seed: normaliseSeed(request.seed),
    ...(grammar ? { grammarEvaluationState: new LlamaGrammarEvaluationState({ model, grammar }) } : {}),
    yieldEogToken: true,
  });
  for await (const token of iterator) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    completion.push(token);
    if (model.isEogToken(token)) {
      stopReason = 'eos';
      idsEnd = completion.length - 1;
      break;
    }
    const hit = findStop(stops, completion, model);
    if (hit) {
      stopReason = hit.kind === 'user' || (input.extraStops.length === 0 && !grammar) ? 'stop' : 'eos';
      textEnd = hit.textEnd;
      idsEnd = hit.idsEnd;
      break;
    }
    if (completion.length >= maxTokens || completion.length >= room) break;
  }
  let text = model.detokenize(completion.slice(0, idsEnd ?? completion.length));
  if (textEnd !== undefined) text = text.slice(0, textEnd);
  return { text, promptTokenIds: promptIds.map(Number), completionTokenIds: completion.map(Number), stopReason };
}

/** The first stop trigger the completion so far has reached: where its text ends (text stops) or its tokens start. */
function findStop(stops: readonly StopTrigger[], completion: readonly Token[], model: LlamaModel): { kind: 'user' | 'end'; textEnd?: number; idsEnd?: number } | undefined {
  if (!stops.length) return undefined;
  let text: string | undefined;
  let best: { kind: 'user' | 'end'; textEnd?: number; idsEnd?: number; at: number } | undefined;
  for (const s of stops) {
    if ('text' in s) {
      if (!s.text) continue;
      text ??= model.detokenize(completion as Token[]);
      const at = text.indexOf(s.text);
      if (at >= 0 && (!best || at < best.at)) best = { kind: s.kind, textEnd: at, at };
    } else if (s.tokens.length && completion.length >= s.tokens.length) {
      const from = completion.length - s.tokens.length;
      if (s.tokens.every((t, i) => completion[from + i] === t) && !best) best = { kind: s.kind, idsEnd: from, at: Infinity };
    }
  }
  return best;
}

/** Mirrors node-llama-cpp's (internal) resolveBeginningTokenToPrepend used by LlamaCompletion. */
function prependsBos(model: LlamaModel): boolean {
  const type = model.vocabularyType;
  if (type === LlamaVocabularyType.rwkv || type === LlamaVocabularyType.ugm) return false;
  if (type === LlamaVocabularyType.wpm) return model.tokens.bos != null;
  return model.tokens.shouldPrependBosToken && model.tokens.bos != null;
}

/** node-llama-cpp clamps negative seeds to 0 and llama.cpp takes 32 bits: map every seed into [0, 2^32). */
function normaliseSeed(seed: number): number {
  if (!Number.isFinite(seed)) return 0;
  const m = Math.trunc(seed) % 2 ** 32;
  return m < 0 ? m + 2 ** 32 : m;
}

/** Per-call signals that follow one caller signal, through a single listener on it. */
const linkedSignals = new WeakMap<AbortSignal, Set<AbortController>>();

function linkSignal(parent: AbortSignal): { signal: AbortSignal; release: () => void } {
  const child = new AbortController();
  if (parent.aborted) {
    child.abort(parent.reason);
    return { signal: child.signal, release: () => {} };
  }
  let children = linkedSignals.get(parent);
  if (!children) {
    const set = new Set<AbortController>();
    children = set;
    linkedSignals.set(parent, set);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(parent.reason);
        set.clear();
      },
      { once: true },
    );
  }
  children.add(child);
  const set = children;
  return { signal: child.signal, release: () => set.delete(child) };
}

function throwIfAborted(signal: AbortSignal | undefined, ref: string): void {
  if (signal?.aborted) {
    throw new ModelError('ABORTED', `Generation (ref "${ref}") was aborted`, ref, { cause: signal.reason });
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Hands out a context's sequences: at most `size`, created on demand, FIFO waiting when all are
 * taken. A waiter whose signal aborts leaves the queue with `ABORTED`.
 */
class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiters: {
    resolve: (s: LlamaContextSequence) => void;
    reject: (e: unknown) => void;
    cleanup: () => void;
  }[] = [];
  private created = 0;
  private closedWith?: unknown;

  constructor(
    private readonly context: LlamaContext,
    private readonly size: number,
  ) {}

  acquire(signal: AbortSignal | undefined, ref: string): Promise<LlamaContextSequence> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const ready = this.free.pop();
    if (ready) return Promise.resolve(ready);
    if (this.created < this.size && this.context.sequencesLeft > 0) {
      this.created++;
      return Promise.resolve(this.context.getSequence());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new ModelError('ABORTED', `Generation (ref "${ref}") was aborted while waiting for a free sequence`, ref, {
          cause: signal?.reason,
        }));
      };
      const waiter = {
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  release(sequence: LlamaContextSequence): void {
    const next = this.waiters.shift();
    if (next) {
      next.cleanup();
      next.resolve(sequence);
    } else {
      this.free.push(sequence);
    }
  }

  close(reason: unknown): void {
    this.closedWith = reason;
    for (const w of this.waiters.splice(0)) {
      w.cleanup();
      w.reject(reason);
    }
  }
}
