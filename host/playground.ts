/**
 * The playground of the Models view (`startGeneration`, `cancelGeneration`; core/api/playground.ts):
 * one generation with one model, a local GGUF file (node-llama-cpp) or an OpenAI-compatible
 * endpoint, through the same `ModelProvider` port runs use, streamed as `PlaygroundEvent`s.
 *
 * - One generation per model at a time (a second one naming the same model is `BUSY`); any
 *   generation can be cancelled (its signal aborts the call; `cancelled` is sent). A local file
 *   is held as the lab's jobs hold theirs (host/modelFiles.ts) while the generation runs: a job
 *   naming it meanwhile is `BUSY`, and a generation on a file a job holds is `BUSY`.
 * - The last model used stays loaded (one provider, keyed by model and threads), so the next
 *   generation with it starts at once; another model replaces it once no generation uses it.
 * - A local model's prompt is rendered first (`ModelProvider.renderPrompt`: the chat template
 *   applied, as the model sees it) and sent before the first token; an endpoint applies its own
 *   template (`promptForm: 'server'`).
 * - Same seed and settings, same text with a local model: the provider is node-llama-cpp's with
 *   every call from a state that does not depend on earlier calls (models/llama).
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { ApiError, MAX_RENDERED_CHARS, tokensPerSecond, type LabEvent, type PlaygroundEvent, type StartGenerationRequest } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import { asRoleName } from '../core/ids.ts';
import { EndpointRefError, isEndpointRef, parseEndpointRef, type GenerateRequest, type ModelConfig, type ModelProvider } from '../core/model/index.ts';
import { schemaRefusal } from './chatSchema.ts';
import { jobEmitter } from './jobs.ts';
import type { ModelPaths } from './modelPaths.ts';

/** The method names, for errors. */
const START = 'startGeneration';

/** Options of {@link Playground}. */
export interface PlaygroundOptions {
  /** Receives every event (a listener's throw is dropped). */
  emit: (event: LabEvent) => void;
  /** Builds the provider of a one-model config (`models.default`); default models/factory `llamaProvider` (files and endpoints). */
  createProvider: (config: ModelConfig) => Promise<ModelProvider>;
  /** Throws an Error naming the file when it is not a GGUF model (run before a file not loaded yet is used; default: its header read). */
  checkModel: (file: string) => Promise<unknown>;
  /** Where request model paths may point (`FORBIDDEN` elsewhere); confined hosts (`flowlab serve`) also refuse endpoints that would be sent a key. */
  modelPaths?: ModelPaths;
  /** Rejects (ApiError UNAVAILABLE) when local models cannot run on this machine. */
  needLocalModels?: (method: string) => void;
  /**
   * Holds a local model file for one generation, as every job of the lab holds its files
   * (host/modelFiles.ts: `BUSY` naming the holder when a job has it, and jobs get `BUSY` while the
   * generation runs); returns the release. Absent: nothing is held beyond this playground's own rule.
   */
  hold?: (file: string, method: string, holder: string) => () => void;
}

/** One generation in flight. */
interface Running {
  model: string;
  controller: AbortController;
  done: Promise<void>;
}

/** The loaded provider and what it was made for. */
interface Loaded {
  key: string;
  model: string;
  provider: Promise<ModelProvider>;
  users: number;
}

/** The lab's playground (see the module comment). */
export class Playground {
  private readonly running = new Map<string, Running>();
  private readonly send: (event: PlaygroundEvent) => void;
  private loaded: Loaded | undefined;
  private readonly retired = new Set<Promise<unknown>>();
  private disposed = false;

  constructor(private readonly o: PlaygroundOptions) {
    this.send = jobEmitter<PlaygroundEvent>(o.emit);
  }

  /**
   * Checks the request and starts the generation in the background; resolves with its id (its
   * `running` event is sent first). Errors (ApiError, method `startGeneration`, field `model`):
   * `BAD_REQUEST` (a bad endpoint reference, a file that is not a readable GGUF; field `jsonSchema`: a schema that is not
   * draft-07 or, for a local file, one its grammar cannot enforce, host/chatSchema.ts), `FORBIDDEN` (a file outside the model folders; on a
   * confined host an endpoint with `key=` or `keychain=`), `BUSY` (a generation with that model
   * runs), `UNAVAILABLE` (shutting down; local models unavailable).
   */
  async start(req: StartGenerationRequest): Promise<{ generationId: string }> {
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${START}: the lab is shutting down`, START);
    const endpoint = isEndpointRef(req.model);
    let shown: string;
    if (endpoint) {
      let specs;
      try {
        specs = parseEndpointRef(req.model);
      } catch (err) {
        if (err instanceof EndpointRefError) throw new ApiError('BAD_REQUEST', `${START}: ${err.message}`, START, 'model', { cause: err });
        throw err;
      }
      this.o.modelPaths?.checkModel(req.model, START, 'model'); // a served lab sends no key at a page's request (host/modelPaths.ts)
      shown = specs.map((s) => `${s.model} @ ${s.baseUrl}`).join(', ');
    } else {
      this.o.modelPaths?.check(req.model, START, 'model');
      this.o.needLocalModels?.(START);
      shown = path.basename(req.model);
    }
    if (req.jsonSchema) {
      // Checked as serve-model checks a request's schema (host/chatSchema.ts): draft-07, and for a local
      // file what its grammar can enforce; node-llama-cpp would otherwise decode `type: nonsense` as any value.
      const refused = schemaRefusal(req.jsonSchema, !endpoint);
      if (refused) throw new ApiError('BAD_REQUEST', `${START}: jsonSchema: ${refused.message}`, START, 'jsonSchema');
    }
    for (const r of this.running.values()) {
      if (r.model === req.model) throw new ApiError('BUSY', `${START}: a generation with ${shown} is running; cancel it or wait for it`, START, 'model');
    }
    const generationId = `gen-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    // A local file is the lab's for the generation (an experiment on it meanwhile is BUSY, and the other way round).
    let release = () => {};
    try {
      if (!endpoint && this.o.hold) release = this.o.hold(path.resolve(req.model), START, `playground generation ${generationId}`);
    } catch (err) {
      // The lab's BUSY names the jobs' field (`models`); here the request's is `model`.
      if (err instanceof ApiError) throw new ApiError(err.code, err.message, START, 'model', { cause: err });
      throw err;
    }
    const controller = new AbortController();
    const entry: Running = { model: req.model, controller, done: Promise.resolve() };
    this.running.set(generationId, entry);
    if (!endpoint && this.loaded?.model !== req.model) {
      // A file not loaded yet: its header read (and checked) before the answer, so a bad file is a BAD_REQUEST.
      try {
        await this.o.checkModel(req.model);
      } catch (err) {
        this.running.delete(generationId);
        release();
        throw new ApiError('BAD_REQUEST', `${START}: ${errorMessage(err)}`, START, 'model', { cause: err });
      }
    }
    this.send({ type: 'generation', generationId, model: shown, status: 'running' });
    entry.done = this.generate(generationId, shown, req, controller.signal).finally(() => {
      this.running.delete(generationId);
      release();
    });
    return { generationId };
  }

  /** Aborts a generation; resolves once its closing event was sent. `{cancelled: false}` when it does not run here. */
  async cancel(generationId: string): Promise<{ cancelled: boolean }> {
    const r = this.running.get(generationId);
    if (!r) return { cancelled: false };
    r.controller.abort(new Error('cancelled'));
    await r.done;
    return { cancelled: true };
  }

  /** Resolves when the generation has ended and its closing event was sent (at once when it does not run here). */
  async settled(generationId: string): Promise<void> {
    await this.running.get(generationId)?.done;
  }

  /** Cancels every generation, waits for them, and unloads the model. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([...this.running.keys()].map((id) => this.cancel(id)));
    const last = this.loaded;
    this.loaded = undefined;
    if (last) this.retire(last.provider);
    await Promise.all([...this.retired]);
  }

  /** The body of one generation: load, render, stream, close. Never rejects (its end is an event). */
  private async generate(generationId: string, model: string, req: StartGenerationRequest, signal: AbortSignal): Promise<void> {
    const close = (status: 'completed' | 'cancelled' | 'failed', rest: Partial<Extract<PlaygroundEvent, { type: 'generation' }>> = {}) =>
      this.send({ type: 'generation', generationId, model, status, ...rest });
    let lease: Loaded | undefined;
    try {
      lease = await this.acquire(req);
      const provider = await lease.provider;
      if (signal.aborted) return close('cancelled', { message: 'cancelled before it started' });
      const request = playgroundRequest(req, signal);
      if (provider.renderPrompt) {
        const rendered = await provider.renderPrompt(request);
        const cut = rendered.text.length > MAX_RENDERED_CHARS;
        this.send({
          type: 'generation', generationId, model, status: 'running', promptForm: rendered.form, promptTokens: rendered.tokens,
          renderedPrompt: cut ? rendered.text.slice(0, MAX_RENDERED_CHARS) : rendered.text, ...(cut && { renderedCut: true }),
        });
      } else {
        this.send({ type: 'generation', generationId, model, status: 'running', promptForm: 'server' });
      }
      const t0 = performance.now();
      let firstTokenMs: number | undefined;
      let counted: number | undefined;
      request.onTokens = (n) => {
        counted = (counted ?? 0) + n;
      };
      request.onText = (piece) => {
        const ms = performance.now() - t0;
        firstTokenMs ??= ms;
        this.send({ type: 'generationText', generationId, text: piece, ms: round(ms), ...(counted !== undefined && { completionTokens: counted }) });
      };
      const out = await provider.generate(request);
      const ms = round(performance.now() - t0);
      const speed = tokensPerSecond(out.tokens.completion, ms);
      close('completed', {
        text: out.text, ...(out.thinking !== undefined && { thinking: out.thinking }),
        promptTokens: out.tokens.prompt, completionTokens: out.tokens.completion, ms,
        ...(firstTokenMs !== undefined && { firstTokenMs: round(firstTokenMs) }), ...(speed !== undefined && { tokensPerSecond: speed }),
        ...(out.stopReason && { stopReason: out.stopReason }), seed: request.seed,
      });
    } catch (err) {
      if (signal.aborted) close('cancelled', { message: 'cancelled' });
      else close('failed', { message: errorMessage(err).slice(0, 2000) });
    } finally {
      if (lease) this.release(lease);
    }
  }

  /**
   * The provider for `req` (model and threads): the loaded one when it matches, else a new one
   * (a file checked first, then loaded), which replaces the loaded one (unloaded once unused).
   */
  private async acquire(req: StartGenerationRequest): Promise<Loaded> {
    const key = JSON.stringify([req.model, req.threads ?? null]);
    if (this.loaded?.key !== key) {
      const old = this.loaded;
      const provider = (async () => {
        const p = await this.o.createProvider({ models: { default: req.model }, roleModels: {}, gpu: false, ...(req.threads !== undefined && { threads: req.threads }) });
        try {
          await p.load?.('default');
        } catch (err) {
          await p.dispose().catch(() => {});
          throw err;
        }
        return p;
      })();
      provider.catch(() => {}); // a failed load is reported by the generation that awaits it
      this.loaded = { key, model: req.model, provider, users: 0 };
      if (old && old.users === 0) this.retire(old.provider);
    }
    const lease = this.loaded!;
    lease.users++;
    // A failed load is not kept: the next request loads again.
    lease.provider.catch(() => {
      if (this.loaded === lease) this.loaded = undefined;
    });
    return lease;
  }

  private release(lease: Loaded): void {
    lease.users--;
    if (lease.users === 0 && this.loaded !== lease) this.retire(lease.provider);
  }

  /** Disposes a provider no longer current (once it has loaded, or failed to). */
  private retire(provider: Promise<ModelProvider>): void {
    const done = provider.then((p) => p.dispose(), () => {}).catch(() => {});
    this.retired.add(done);
    void done.finally(() => this.retired.delete(done));
  }
}

/** The port's request for a playground payload: one call, role `playground`, model ref `default`, seed 0 when none is given. */
export function playgroundRequest(req: StartGenerationRequest, signal?: AbortSignal): GenerateRequest {
  return {
    role: asRoleName('playground'),
    model: 'default',
    prompt: req.prompt,
    ...(req.system ? { system: req.system } : {}),
    params: {
      temperature: req.temperature ?? 0,
      maxTokens: req.maxTokens,
      ...(req.topK !== undefined && { topK: req.topK }),
      ...(req.topP !== undefined && { topP: req.topP }),
      ...(req.minP !== undefined && { minP: req.minP }),
    },
    seed: req.seed ?? 0,
    ...(req.jsonSchema && { jsonSchema: req.jsonSchema }),
    key: { taskKey: 'playground', nodeId: 'playground', attempt: 1, callIndex: 0 },
    ...(signal && { signal }),
  };
}

/** Milliseconds to 0.1. */
function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
