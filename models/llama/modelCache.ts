/**
 * The models and contexts of one `LlamaProvider`, loaded on first use and shared:
 * - refs that resolve (through `realpath`) to the same file share one `LlamaModel`;
 * - refs with the same file and the same LoRA adapters (none, usually) share one `LlamaContext`;
 *   a ref with different adapters gets a context of its own on the same model (node-llama-cpp
 *   applies adapters per context), so per-role adapters cost one context each, not one model each.
 * Every cache entry is a promise, removed again when it rejects, so a retry retries.
 * A file is checked before its first use: non-finite weights or logits are `MODEL_INVALID` (`finiteCheck.ts`).
 */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Llama, LlamaGrammar, LlamaLogLevel } from 'node-llama-cpp';
import { ModelError, type JsonSchema } from '../../core/model/index.ts';
import { DEFAULTS, type LlamaModelConfig, type LlamaProviderOptions, type LoadedModelInfo, type ResolvedSettings } from './config.ts';
import { explainLlamaStartFailure } from './binary.ts';
import { errorText } from './errorText.ts';
import { checkGgufFile, type GgufInfo } from './ggufInfo.ts';
import { probeFiniteLogits, scanFiniteWeights } from './finiteCheck.ts';
import { createLlamaContext, openModelFile, type LoadedFile, type LoadedModel } from './loaders.ts';
import { LogRing } from './logRing.ts';
import { checkAdapters, contextKey, contextKeySync, realpathOrUndefined, type ResolvedLora } from './loraAdapters.ts';
import { sharedRuntime } from './runtime.ts';
import { SequencePool } from './sequencePool.ts';

/** The message of every use-after-dispose failure. */
const DISPOSED = 'LlamaProvider has been disposed';

/** Loads, shares and releases the models and contexts named by `options.models`. */
export class ModelCache {
  private llamaPromise?: Promise<Llama>;
  /** ref -> its context (promise; removed again when loading fails, so a retry retries). */
  private readonly refs = new Map<string, Promise<LoadedModel>>();
  /** real file path -> loaded model. */
  private readonly files = new Map<string, Promise<LoadedFile>>();
  /** context key (real file path + adapters) -> context. */
  private readonly contexts = new Map<string, Promise<LoadedModel>>();
  /** JSON of a schema -> its compiled grammar. */
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();
  private readonly logs = new LogRing();
  private loadedCount = 0;
  private contextCount = 0;
  /** Set by {@link dispose}; every later use throws `GENERATION_FAILED`. */
  disposed = false;

  constructor(private readonly options: LlamaProviderOptions) {}

  /** Distinct model files loaded so far. */
  get modelsLoaded(): number {
    return this.loadedCount;
  }

  /** Contexts created so far (one per distinct file + adapters in use). */
  get contextsCreated(): number {
    return this.contextCount;
  }

  /** @throws ModelError `GENERATION_FAILED` ("disposed") after {@link dispose}. */
  assertOpen(): void {
    if (this.disposed) throw new ModelError('GENERATION_FAILED', DISPOSED);
  }

  /**
   * The context of `ref`, loading its file and creating the context on first use.
   * @throws ModelError `MODEL_UNKNOWN_REF` (listing the known refs), `MODEL_NOT_FOUND`,
   *   `MODEL_INVALID`, `MODEL_LOAD_FAILED`, `GENERATION_FAILED` (disposed meanwhile).
   */
  entryForRef(ref: string): Promise<LoadedModel> {
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
    return cached(this.refs, ref, () => this.loadRef(ref, config));
  }

  /**
   * The grammar compiled from `schema` (cached by its JSON text).
   * @throws ModelError `GENERATION_FAILED` when the schema cannot be compiled; `MODEL_LOAD_FAILED` when the runtime cannot start.
   */
  grammarFor(schema: JsonSchema): Promise<LlamaGrammar> {
    return cached(this.grammars, JSON.stringify(schema), () =>
      this.getLlamaOnce().then(async (llama) => {
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
      }),
    );
  }

  /**
   * Releases every context and model (the runtime is shared by the process and stays; see
   * `sharedRuntime`): pending sequence waiters fail with `GENERATION_FAILED`. Safe to call twice.
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
    this.llamaPromise = undefined;
    this.logs.detach();
  }

  private async loadRef(ref: string, config: LlamaModelConfig): Promise<LoadedModel> {
    const given = path.resolve(config.path);
    const { info } = await checkGgufFile(given);
    const real = await realpath(given);
    const adapters = await checkAdapters(ref, config.lora ?? [], real, info);
    this.assertOpen();
    const key = contextKey(real, adapters);
    return cached(this.contexts, key, () => this.createContext(key, real, info, adapters));
  }

  /** Settings of one context, merged over every ref that uses it (same real file, same adapters). */
  private settingsFor(key: string, realFile: string): { refs: string[]; settings: ResolvedSettings } {
    const d = { ...DEFAULTS, ...definedOnly(this.options.defaults ?? {}) };
    const refs: string[] = [];
    const settings: ResolvedSettings = { contextSize: 0, threads: 0, sequences: 0, batching: 'mixed', exactAttention: false, prefixReuse: true, source: { threads: 'default', batchSize: 'default' } };
    for (const [ref, c] of Object.entries(this.options.models)) {
      const real = realpathOrUndefined(c.path);
      if (real !== realFile) continue;
      if (contextKeySync(real, c.lora ?? []) !== key) continue;
      refs.push(ref);
      settings.contextSize = Math.max(settings.contextSize, c.contextSize ?? d.contextSize);
      const threads = c.threads ?? d.threads;
      if (threads > settings.threads) settings.source.threads = c.threads !== undefined ? (c.settingsSource?.threads ?? 'flag') : 'default';
      settings.threads = Math.max(settings.threads, threads);
      const batch = c.batchSize ?? d.batchSize;
      if (batch !== undefined && batch > (settings.batchSize ?? 0)) {
        settings.batchSize = batch;
        settings.source.batchSize = c.batchSize !== undefined ? (c.settingsSource?.batchSize ?? 'flag') : 'default';
      }
      if (!(c.prefixReuse ?? d.prefixReuse)) settings.prefixReuse = false;
      settings.sequences = Math.max(settings.sequences, c.sequences ?? d.sequences);
      if ((c.batching ?? d.batching) === 'isolated') settings.batching = 'isolated';
      if (c.exactAttention) settings.exactAttention = true;
    }
    return { refs, settings };
  }

  private async loadFile(realFile: string, info: GgufInfo): Promise<LoadedFile> {
    await scanFiniteWeights(realFile, info.sizeBytes);
    const llama = await this.getLlamaOnce();
    this.assertOpen();
    const gpu = Object.values(this.options.models).some(
      (c) => (c.gpu ?? this.options.defaults?.gpu ?? DEFAULTS.gpu) === 'auto' && realpathOrUndefined(c.path) === realFile,
    )
      ? 'auto'
      : false;
    const file = await openModelFile(llama, realFile, info, gpu, this.logs);
    if (this.disposed) {
      await file.model.dispose().catch(() => {});
      throw new ModelError('GENERATION_FAILED', DISPOSED);
    }
    this.loadedCount++;
    return file;
  }

  private async createContext(key: string, realFile: string, info: GgufInfo, adapters: ResolvedLora[]): Promise<LoadedModel> {
    const started = performance.now();
    const loadingModel = !this.files.has(realFile);
    const file = await cached(this.files, realFile, () => this.loadFile(realFile, info));
    this.assertOpen();
    const { refs, settings } = this.settingsFor(key, realFile);
    const ctxStarted = performance.now();
    const context = await createLlamaContext(file, realFile, refs, settings, adapters, this.logs);
    if (this.disposed) {
      await context.dispose().catch(() => {});
      throw new ModelError('GENERATION_FAILED', DISPOSED);
    }
    try {
      await probeFiniteLogits(file.model, context, realFile);
    } catch (err) {
      await context.dispose().catch(() => {});
      throw err;
    }
    this.contextCount++;
    const loaded: LoadedModel = {
      summary: {
        refs,
        path: realFile,
        fileName: path.basename(realFile),
        info,
        contextSize: context.contextSize,
        threads: settings.threads,
        sequences: settings.sequences,
        gpu: file.gpu,
        batching: settings.batching,
        batchSize: context.batchSize,
        prefixReuse: settings.prefixReuse,
        source: { ...settings.source },
        usesChatTemplate: file.template != null,
        lora: adapters.map((a) => ({ ...a })),
        loadMs: loadingModel ? performance.now() - started : performance.now() - ctxStarted,
      } satisfies LoadedModelInfo,
      model: file.model,
      context,
      pool: new SequencePool(context, settings.sequences),
      prependsBos: file.prependsBos,
    };
    if (file.chatWrapper) loaded.chatWrapper = file.chatWrapper;
    if (file.template) loaded.template = file.template;
    return loaded;
  }

  private getLlamaOnce(): Promise<Llama> {
    if (!this.llamaPromise) {
      const d = this.options.defaults ?? {};
      const anyGpu = d.gpu === 'auto' || Object.values(this.options.models).some((m) => m.gpu === 'auto');
      const level = this.logs.attach((this.options.logLevel ?? 'error') as LlamaLogLevel, this.options.onLog);
      const promise = sharedRuntime(anyGpu ? 'auto' : false, level).catch((err: unknown) => {
        if (this.llamaPromise === promise) this.llamaPromise = undefined;
        throw new ModelError('MODEL_LOAD_FAILED', `The llama.cpp runtime could not start: ${explainLlamaStartFailure(err)}`, undefined, {
          cause: err,
        });
      });
      this.llamaPromise = promise;
    }
    return this.llamaPromise;
  }
}

/** `map.get(key)`, or `make()` stored under `key` and removed again if it rejects (so a retry retries). */
function cached<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let entry = map.get(key);
  if (!entry) {
    const made = make();
    entry = made;
    map.set(key, made);
    made.catch(() => {
      if (map.get(key) === made) map.delete(key);
    });
  }
  return entry;
}

/** `o` without its `undefined` fields (so spreading it keeps the defaults under them). */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
