/**
 * The playground's streaming through the lab API (createHandlers over createLabHost) with a
 * SIMULATED streaming provider (no model: pieces from a list, one token each, each released by the
 * test): the events in order, the counts and speed, one generation per model, cancel, the
 * provider kept for the same model and replaced for another, and the refusals. The same path with
 * the real tiny model is playground.model.test.ts.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers, tokensPerSecond, type FlowlabApi, type LabEvent, type PlaygroundEvent } from '../core/api/index.ts';
import { ModelError, type GenerateRequest, type GenerateResult, type ModelConfig, type ModelProvider, type RenderedPrompt } from '../core/model/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { rejectionOf, tempDir } from '../test/fixtures.ts';
import { createLabHost, type LabHostHandle, type LabHostOptions } from './labHost.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** A SIMULATED model that streams `pieces` one token each; each piece waits for `step()` when gated. */
class SimulatedStreamer implements ModelProvider {
  readonly name = 'simulated streamer';
  disposed = false;
  requests: GenerateRequest[] = [];
  private waiting: (() => void)[] = [];
  constructor(readonly file: string, private readonly pieces: string[], private readonly gated: boolean, private readonly template: boolean) {}

  /** Releases the next piece (a gated streamer), once one waits. */
  async step(): Promise<void> {
    while (this.waiting.length === 0) await new Promise((r) => setTimeout(r, 1));
    this.waiting.shift()!();
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.requests.push(request);
    const t0 = performance.now();
    let text = '';
    for (const piece of this.pieces) {
      if (this.gated) await new Promise<void>((r) => {
        this.waiting.push(r);
        request.signal?.addEventListener('abort', () => r(), { once: true });
      });
      if (request.signal?.aborted) throw new ModelError('ABORTED', 'aborted', request.model);
      request.onTokens?.(1);
      request.onText?.(piece);
      text += piece;
    }
    return { text, tokens: { prompt: 4, completion: this.pieces.length }, ms: performance.now() - t0, seed: request.seed, model: path.basename(this.file), stopReason: 'maxTokens' };
  }

  async renderPrompt(request: GenerateRequest): Promise<RenderedPrompt> {
    return this.template ? { text: `<|system|>${request.system ?? ''}<|user|>${request.prompt}<|assistant|>`, tokens: 4, form: 'template' } : { text: request.prompt, tokens: 4, form: 'plain' };
  }

  modelsLoaded(): number {
    return 1;
  }

  async dispose(): Promise<void> {
    this.disposed = true;
  }
}

/** An endpoint's SIMULATED provider: no `renderPrompt` (the server applies its template); one piece. */
class SimulatedEndpoint implements ModelProvider {
  readonly name = 'simulated endpoint';
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    request.onText?.('{"a":1}');
    return { text: '{"a":1}', tokens: { prompt: 11, completion: 6 }, ms: 5, seed: request.seed, model: 'qwen', stopReason: 'eos' };
  }
  modelsLoaded(): number {
    return 0;
  }
  async dispose(): Promise<void> {}
}

let dir: string;
let store: Store;
let events: LabEvent[];
let lab: LabHostHandle;
let api: FlowlabApi;
let made: SimulatedStreamer[];
let gated: boolean;
const models = () => path.join(dir, 'models');
const fileA = () => path.join(models(), 'a.gguf');
const fileB = () => path.join(models(), 'b.gguf');
const mine = (id: string) => events.filter((e): e is PlaygroundEvent => (e.type === 'generation' || e.type === 'generationText') && e.generationId === id);

function open(extra: Partial<LabHostOptions> = {}) {
  store = openStore(':memory:');
  lab = createLabHost({
    store, dbFile: ':memory:', modelDir: models(), examplesDir: path.join(ROOT, 'examples'), emit: (e) => events.push(e),
    llamaBinary: () => ({ ok: true }) as ReturnType<NonNullable<LabHostOptions['llamaBinary']>>,
    readHeader: async (file) => {
      if (file.endsWith('bad.gguf')) throw new Error(`${file}: not a GGUF file (bad magic)`);
      return { architecture: 'llama', fileType: 'F32', hasChatTemplate: true };
    },
    createProvider: async (config: ModelConfig) => {
      const ref = config.models['default']!;
      if (ref.startsWith('openai:')) return new SimulatedEndpoint();
      const p = new SimulatedStreamer(ref, ['Once', ' upon', ' a', ' time'], gated, ref.endsWith('a.gguf'));
      made.push(p);
      return p;
    },
    ...extra,
  });
  api = createHandlers({ store, version: '1', lab });
}

beforeEach(() => {
  dir = tempDir('playground');
  mkdirSync(models());
  events = [];
  made = [];
  gated = false;
});
afterEach(async () => {
  await lab?.dispose();
  store?.close();
});

describe('startGeneration streams a reply as events', () => {
  it('sends the model, the rendered prompt, each piece with its token count, then the counts and speed', async () => {
    open();
    const { generationId } = await api.startGeneration({ model: fileA(), prompt: 'Tell me', system: 'Be brief.', maxTokens: 4, temperature: 0.7, topK: 20, topP: 0.9, minP: 0.05, seed: 11 });
    await lab.playground.settled(generationId);
    const got = mine(generationId);
    expect(got.map((e) => (e.type === 'generationText' ? `text ${e.text} ${e.completionTokens}` : `${e.status}`))).toEqual([
      'running', 'running', 'text Once 1', 'text  upon 2', 'text  a 3', 'text  time 4', 'completed',
    ]);
    expect(got[0]).toEqual({ type: 'generation', generationId, model: 'a.gguf', status: 'running' });
    expect(got[1]).toMatchObject({ status: 'running', promptForm: 'template', promptTokens: 4, renderedPrompt: '<|system|>Be brief.<|user|>Tell me<|assistant|>' });
    const end = got.at(-1) as Extract<PlaygroundEvent, { type: 'generation' }>;
    expect(end).toMatchObject({ status: 'completed', text: 'Once upon a time', promptTokens: 4, completionTokens: 4, stopReason: 'maxTokens', seed: 11 });
    expect(end.tokensPerSecond).toBe(tokensPerSecond(4, end.ms!));
    expect(end.firstTokenMs).toBeLessThanOrEqual(end.ms!);
    // The sampling settings reached the port as given.
    const req = made[0]!.requests[0]!;
    expect([req.params, req.seed, req.system, req.prompt]).toEqual([{ temperature: 0.7, maxTokens: 4, topK: 20, topP: 0.9, minP: 0.05 }, 11, 'Be brief.', 'Tell me']);
  });

  it('says a plain-completion prompt is plain, and an endpoint\'s is the server\'s', async () => {
    open();
    const b = await api.startGeneration({ model: fileB(), prompt: 'Tell me', maxTokens: 4 });
    await lab.playground.settled(b.generationId);
    expect(mine(b.generationId)[1]).toMatchObject({ promptForm: 'plain', renderedPrompt: 'Tell me' });
    expect(made[0]!.requests[0]!.seed).toBe(0);
    const e = await api.startGeneration({ model: 'openai:http://127.0.0.1:9/v1#qwen', prompt: 'JSON please', maxTokens: 8, jsonSchema: { type: 'object' } });
    await lab.playground.settled(e.generationId);
    const got = mine(e.generationId);
    expect(got[0]).toMatchObject({ model: 'qwen @ http://127.0.0.1:9/v1' });
    expect(got[1]).toEqual({ type: 'generation', generationId: e.generationId, model: 'qwen @ http://127.0.0.1:9/v1', status: 'running', promptForm: 'server' });
    expect(got[2]).toMatchObject({ type: 'generationText', text: '{"a":1}' });
    expect((got[2] as { completionTokens?: number }).completionTokens).toBeUndefined();
    expect(got.at(-1)).toMatchObject({ status: 'completed', completionTokens: 6, promptTokens: 11 });
  });
});

describe('one generation per model, cancellable', () => {
  it('answers BUSY for the same model while one runs, and runs another model beside it', async () => {
    gated = true;
    open();
    const first = await api.startGeneration({ model: fileA(), prompt: 'x', maxTokens: 4 });
    const busy = await rejectionOf(ApiError, api.startGeneration({ model: fileA(), prompt: 'y', maxTokens: 4 }));
    expect([busy.code, busy.field, busy.message]).toEqual(['BUSY', 'model', 'startGeneration: a generation with a.gguf is running; cancel it or wait for it']);
    const other = await api.startGeneration({ model: fileB(), prompt: 'z', maxTokens: 4 });
    while (made.length < 2) await new Promise((r) => setTimeout(r, 1));
    for (let i = 0; i < 4; i++) await made[1]!.step();
    await lab.playground.settled(other.generationId);
    expect(mine(other.generationId).at(-1)).toMatchObject({ status: 'completed', text: 'Once upon a time' });
    for (let i = 0; i < 4; i++) await made[0]!.step();
    await lab.playground.settled(first.generationId);
    // Free again once it ended.
    const again = await api.startGeneration({ model: fileA(), prompt: 'y', maxTokens: 4 });
    expect(again.generationId).not.toBe(first.generationId);
  });

  it('holds its model file as the lab\'s jobs do: a run on it meanwhile is BUSY naming the generation, and a generation on a file a run holds is BUSY', async () => {
    gated = true;
    open({ checkModel: async () => ({}) }); // the runner's check of a model file (the files here are names only)
    const first = await api.startGeneration({ model: fileA(), prompt: 'x', maxTokens: 4 });
    const run = { workflowText: readFileSync(path.join(ROOT, 'examples/gsm8k-single.yaml'), 'utf8'), dataset: 'gsm8k', split: 'test', seed: 0, limit: 1, models: { default: fileA() } };
    const busy = await rejectionOf(ApiError, api.startRun(run));
    expect([busy.code, busy.message]).toEqual(['BUSY', `startRun: model ${fileA()} is in use by playground generation ${first.generationId}; wait for it or cancel it`]);
    for (let i = 0; i < 4; i++) await made[0]!.step();
    await lab.playground.settled(first.generationId);
    // Released at its end: the lab's own rule now holds the file for nobody.
    const held = lab.runner.holdModelFile(fileA(), 'test', 'experiment e1');
    const refused = await rejectionOf(ApiError, api.startGeneration({ model: fileA(), prompt: 'y', maxTokens: 4 }));
    expect([refused.code, refused.field, refused.message]).toEqual(['BUSY', 'model', `startGeneration: model ${fileA()} is in use by experiment e1; wait for it or cancel it`]);
    held();
    const again = await api.startGeneration({ model: fileA(), prompt: 'y', maxTokens: 4 });
    for (let i = 0; i < 4; i++) await made[0]!.step();
    await lab.playground.settled(again.generationId);
    expect(mine(again.generationId).at(-1)).toMatchObject({ status: 'completed' });
  });

  it('cancels a generation mid-stream: the pieces so far, then cancelled', async () => {
    gated = true;
    open();
    const { generationId } = await api.startGeneration({ model: fileA(), prompt: 'x', maxTokens: 4 });
    while (made.length < 1) await new Promise((r) => setTimeout(r, 1));
    await made[0]!.step();
    await made[0]!.step();
    while (mine(generationId).filter((e) => e.type === 'generationText').length < 2) await new Promise((r) => setTimeout(r, 1));
    const cancelling = api.cancelGeneration({ generationId });
    await made[0]!.step();
    await expect(cancelling).resolves.toEqual({ cancelled: true });
    const got = mine(generationId);
    expect(got.filter((e) => e.type === 'generationText').map((e) => (e as { text: string }).text)).toEqual(['Once', ' upon']);
    expect(got.at(-1)).toMatchObject({ type: 'generation', status: 'cancelled', message: 'cancelled' });
    await expect(api.cancelGeneration({ generationId })).resolves.toEqual({ cancelled: false });
  });

  it('keeps the model loaded for the next generation with it, and unloads it for another model', async () => {
    open();
    for (const model of [fileA(), fileA()]) await lab.playground.settled((await api.startGeneration({ model, prompt: 'x', maxTokens: 4 })).generationId);
    expect(made.length).toBe(1);
    await lab.playground.settled((await api.startGeneration({ model: fileB(), prompt: 'x', maxTokens: 4 })).generationId);
    expect(made.length).toBe(2);
    await new Promise((r) => setTimeout(r, 5));
    expect([made[0]!.disposed, made[1]!.disposed]).toEqual([true, false]);
    await lab.dispose();
    expect(made[1]!.disposed).toBe(true);
  });
});

describe('startGeneration refuses what it must', () => {
  it('a file that is not a GGUF, by name, before it runs', async () => {
    open();
    const err = await rejectionOf(ApiError, api.startGeneration({ model: path.join(models(), 'bad.gguf'), prompt: 'x', maxTokens: 4 }));
    expect([err.code, err.field]).toEqual(['BAD_REQUEST', 'model']);
    expect(err.message).toBe(`startGeneration: ${path.join(models(), 'bad.gguf')}: not a GGUF file (bad magic)`);
    expect(events).toEqual([]);
  });

  it('on a confined host: a file outside the model folders, and an endpoint that would be sent a key', async () => {
    open({ modelRoots: { folders: [] } });
    const outside = await rejectionOf(ApiError, api.startGeneration({ model: '/elsewhere/m.gguf', prompt: 'x', maxTokens: 4 }));
    expect([outside.code, outside.field]).toEqual(['FORBIDDEN', 'model']);
    const keyed = await rejectionOf(ApiError, api.startGeneration({ model: 'openai:https://api.example.org/v1#m&key=HOME', prompt: 'x', maxTokens: 4 }));
    expect([keyed.code, keyed.field]).toEqual(['FORBIDDEN', 'model']);
    const ok = await api.startGeneration({ model: 'openai:https://api.example.org/v1#m', prompt: 'x', maxTokens: 4 });
    await lab.playground.settled(ok.generationId);
    expect(mine(ok.generationId).at(-1)).toMatchObject({ status: 'completed' });
  });

  it('a bad endpoint reference, naming the model field', async () => {
    open();
    const err = await rejectionOf(ApiError, api.startGeneration({ model: 'openai:ftp://x#m', prompt: 'x', maxTokens: 4 }));
    expect([err.code, err.field]).toEqual(['BAD_REQUEST', 'model']);
  });

  it('a schema that is not draft-07, or that the grammar of a local file cannot enforce, naming the jsonSchema field and where in it', async () => {
    open();
    const nonsense = await rejectionOf(ApiError, api.startGeneration({ model: fileA(), prompt: 'x', maxTokens: 4, jsonSchema: { type: 'nonsense' } }));
    expect([nonsense.code, nonsense.field]).toEqual(['BAD_REQUEST', 'jsonSchema']);
    expect(nonsense.message).toMatch(/^startGeneration: jsonSchema: keyword "type" at \/type must be equal to one of the allowed values/);
    const ref = await rejectionOf(ApiError, api.startGeneration({ model: fileA(), prompt: 'x', maxTokens: 4, jsonSchema: { $ref: '#/nope' } }));
    expect([ref.code, ref.field, ref.message]).toEqual(['BAD_REQUEST', 'jsonSchema', 'startGeneration: jsonSchema: at $ref: $ref "#/nope": the decoding grammar only follows references to "#/$defs/<name>"']);
    expect(events).toEqual([]);
    // An endpoint enforces the schema its own way: only the draft-07 check applies.
    const ok = await api.startGeneration({ model: 'openai:https://api.example.org/v1#m', prompt: 'x', maxTokens: 4, jsonSchema: { allOf: [{ type: 'object' }] } });
    await lab.playground.settled(ok.generationId);
    expect(mine(ok.generationId).at(-1)).toMatchObject({ status: 'completed' });
  });

  it('reports a failure once running as its failed event', async () => {
    open({ createProvider: async () => { throw new ModelError('MODEL_LOAD_FAILED', 'Could not load a.gguf: out of memory', 'default'); } });
    const { generationId } = await api.startGeneration({ model: fileA(), prompt: 'x', maxTokens: 4 });
    await lab.playground.settled(generationId);
    expect(mine(generationId).map((e) => (e.type === 'generation' ? [e.status, e.message] : e.type))).toEqual([
      ['running', undefined], ['failed', 'Could not load a.gguf: out of memory'],
    ]);
  });
});
