/**
 * `startTrainLoop` through the lab runner without a model (a scripted provider and a fake
 * trainer): the request fields its errors name, the spec it builds (the CLI's defaults), the
 * model file it holds (BUSY), cancelling, a loop that fails, and where versions go. The loop on
 * the real tiny model, against `flowlab train-loop`: trainLoop.model.test.ts.
 */
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, payloadSchemas, type StartTrainLoopRequest } from '../core/api/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { openStore } from '../core/store/index.ts';
import { getDataset } from '../core/tasks/index.ts';
import type { TrainableModel, Trainer } from '../core/training/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { resolveModels } from '../models/resolve.ts';
import { fakeModelFile, gate, labHostOptions, labPerTest, rejectionOf, REPO_ROOT } from '../test/fixtures.ts';
import { createEventHub, createLabHost, LabRunner, startLabServer, TOKEN_HEADER } from './index.ts';
import { TRAIN_LOOP_DEFAULTS, trainLoopSpecOf } from './trainLoop.ts';

const LEARN = readFileSync(path.join(REPO_ROOT, 'examples/learn-word.yaml'), 'utf8');

let model: string;
/** What the fake trainer's `load` does (default: a model that is never stepped). */
let load: (file: string) => Promise<TrainableModel>;
const fakeModel = (): TrainableModel => ({ dispose: () => {} }) as unknown as TrainableModel;
const trainer: Trainer = { load: (file) => load(file) };

const t = labPerTest('lab-train', (h) => {
  model = fakeModelFile(h.dir);
  load = async () => fakeModel();
  return createLabHost({
    ...labHostOptions(h), dataDir: path.join(h.dir, 'data'),
    createProvider: async () => new ScriptedProvider(async () => 'a happy story'),
    checkModel: async (file) => {
      if (file.endsWith('bad.gguf')) throw new Error(`Model file is not a GGUF: ${file}`);
    },
    loadTrainer: async () => trainer,
  });
});

const req = (over: Partial<StartTrainLoopRequest> = {}): StartTrainLoopRequest => ({ workflowText: LEARN, dataset: 'learn-word', models: { default: model }, iterations: 2, group: 2, limit: 2, heldout: 0, ...over });
const bad = (p: Promise<unknown>) => rejectionOf(ApiError, p);
/** The error `f` throws (the test fails when it throws none). */
const catching = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
};

describe('startTrainLoop request errors name their field', () => {
  it.each<[string, Partial<StartTrainLoopRequest>, string, string, RegExp]>([
    ['an invalid workflow', { workflowText: 'name: x\nsteps: [{ id: a }]\n' }, 'BAD_REQUEST', 'workflowText', /^startTrainLoop: the workflow has \d+ issues?: /],
    ['an unknown role to train', { roles: ['ghost'] }, 'BAD_REQUEST', 'roles', /^startTrainLoop: roles names "ghost", which the workflow does not have \(roles: writer\)$/],
    ['an unknown dataset', { dataset: 'nope' }, 'BAD_REQUEST', 'dataset', /^startTrainLoop: .*nope/],
    ['an unknown training split', { split: 'nope' }, 'BAD_REQUEST', 'split', /^startTrainLoop: learn-word has no split "nope" \(splits: train, heldout\)$/],
    ['an unknown held-out split', { heldout: 2, heldoutSplit: 'nope' }, 'BAD_REQUEST', 'heldoutSplit', /^startTrainLoop: learn-word has no split "nope"/],
    ['no model', { models: {} }, 'BAD_REQUEST', 'models.default', /^startTrainLoop: role "writer" has no model/],
    ['a model for an unknown role', { models: { default: '/m/x.gguf', roles: { ghost: '/m/x.gguf' } } }, 'BAD_REQUEST', 'models.roles.ghost', /^startTrainLoop: a model is chosen for role "ghost"/],
    ['an unknown start version', { roleVersions: { writer: 'v-nope' } }, 'BAD_REQUEST', 'roleVersions.writer', /^startTrainLoop: roleVersions.writer: no weight version v-nope in the database$/],
    ['an invalid model file', { models: { default: '/m/bad.gguf' } }, 'BAD_REQUEST', 'models.default', /^startTrainLoop: Model file is not a GGUF: \/m\/bad.gguf$/],
  ])('%s', async (_what, over, code, field, message) => {
    const err = await bad(t.api.startTrainLoop(req(over)));
    expect([err.code, err.method, err.field]).toEqual([code, 'startTrainLoop', field]);
    expect(err.message).toMatch(message);
    expect(t.events).toEqual([]);
    expect(t.lab.runner.trainLoops()).toEqual([]);
  });

  it('a trainer that cannot load is UNAVAILABLE, and the model file is not kept', async () => {
    const runner = new LabRunner({ store: t.store, emit: (e) => t.events.push(e), modelDir: t.dir, checkModel: async () => {}, loadTrainer: async () => { throw new Error('no TensorFlow.js'); } });
    for (let i = 0; i < 2; i++) {
      const err = await bad(runner.startTrainLoop(req()));
      expect([err.code, err.message]).toEqual(['UNAVAILABLE', 'startTrainLoop: the trainer cannot load: no TensorFlow.js']);
    }
    await runner.dispose();
  });
});

describe('the spec a request maps onto', () => {
  it('has the CLI defaults for every field left out, and the lab folders', () => {
    const { graph } = parseWorkflow(LEARN, { tools: defaultTools() });
    const resolved = resolveModels(graph, { default: model, roles: {}, contextSize: 512 }, (id) => t.store.weights.find(id));
    const minimal = { workflowText: LEARN, dataset: 'learn-word', models: { default: model } };
    const spec = trainLoopSpecOf(minimal, graph, LEARN, resolved, t.store, getDataset('learn-word'), { versionsDir: '/lab/v', dataDir: '/lab/data' });
    const { workflow: _w, models, startVersions, ...rest } = spec;
    expect(rest).toEqual({
      dataset: 'learn-word', dataDir: '/lab/data', split: 'train', heldoutSplit: 'heldout', heldout: 32, group: 8, iterations: 10, tasksPerIteration: 4,
      lr: 3e-4, kl: 0.02, temperature: 1, maxGradNorm: 1, heldoutSamples: 4, heldoutTemperature: 1, seed: 0, versionsDir: '/lab/v',
    });
    expect(models).toEqual(resolved.config);
    expect(models.contextSize).toBe(TRAIN_LOOP_DEFAULTS.contextSize);
    expect(startVersions).toEqual({});
    // The held-out temperature follows the sampling temperature unless given.
    expect(trainLoopSpecOf({ ...minimal, temperature: 0.7 }, graph, LEARN, resolved, t.store, getDataset('learn-word'), { versionsDir: '/v', dataDir: undefined }).heldoutTemperature).toBe(0.7);
    expect(trainLoopSpecOf({ ...minimal, temperature: 0.7, heldoutTemperature: 0 }, graph, LEARN, resolved, t.store, getDataset('learn-word'), { versionsDir: '/v', dataDir: undefined }).heldoutTemperature).toBe(0);
  });

  it('takes the SFT options of `flowlab train-loop` (defaults filled in), and refuses SFT options without a warm start or a mix', () => {
    const { graph } = parseWorkflow(LEARN, { tools: defaultTools() });
    const resolved = resolveModels(graph, { default: model, roles: {}, contextSize: 512 }, (id) => t.store.weights.find(id));
    const of = (over: Partial<StartTrainLoopRequest>) => trainLoopSpecOf({ workflowText: LEARN, dataset: 'learn-word', models: { default: model }, ...over }, graph, LEARN, resolved, t.store, getDataset('learn-word'), { versionsDir: '/v', dataDir: undefined });
    expect(of({}).sft).toBeUndefined();
    expect(of({ warmStart: 4 }).sft).toEqual({ warmStart: 4, mix: false, steps: 2, lr: 1e-3, minScore: 1 });
    expect(of({ sftMix: true, sftSteps: 3, sftLr: 5e-4, sftMinScore: { writer: 0.5 }, sftRoles: ['writer'] }).sft).toEqual({ warmStart: 0, mix: true, steps: 3, lr: 5e-4, minScore: { writer: 0.5 }, roles: ['writer'] });
    for (const field of ['sftMinScore', 'sftRoles'] as const) {
      const err = catching(() => of({ [field]: field === 'sftRoles' ? ['writer'] : 0.5 })) as ApiError;
      expect(err).toBeInstanceOf(ApiError);
      expect([err.code, err.field, err.message]).toEqual(['BAD_REQUEST', field, `startTrainLoop: ${field} needs warmStart > 0 or sftMix`]);
    }
  });

  it('takes --entropy and --sft-pool as the CLI does (the lab took neither; issue 29), 0 being none', () => {
    const { graph } = parseWorkflow(LEARN, { tools: defaultTools() });
    const resolved = resolveModels(graph, { default: model, roles: {}, contextSize: 512 }, (id) => t.store.weights.find(id));
    const of = (over: Partial<StartTrainLoopRequest>) => trainLoopSpecOf({ workflowText: LEARN, dataset: 'learn-word', models: { default: model }, ...over }, graph, LEARN, resolved, t.store, getDataset('learn-word'), { versionsDir: '/v', dataDir: undefined });
    expect(of({ entropy: 0.01 }).entropy).toBe(0.01);
    expect(of({ entropy: 0 })).not.toHaveProperty('entropy');
    expect(of({ warmStart: 2, sftPool: 8 }).sft).toEqual({ warmStart: 2, mix: false, steps: 2, lr: 1e-3, minScore: 1, pool: 8 });
    expect(of({ sftMix: true, sftPool: 0 }).sft).toEqual({ warmStart: 0, mix: true, steps: 2, lr: 1e-3, minScore: 1 });
    expect(of({ sftPool: 0 }).sft).toBeUndefined();
    const err = catching(() => of({ sftPool: 8 })) as ApiError;
    expect([err.code, err.field, err.message]).toEqual(['BAD_REQUEST', 'sftPool', 'startTrainLoop: sftPool needs warmStart > 0 or sftMix']);
    // The payload schema takes both with the CLI's bounds.
    const schema = payloadSchemas.startTrainLoop;
    const base = { workflowText: LEARN, dataset: 'learn-word', models: { default: model } };
    expect(schema.safeParse({ ...base, entropy: 0.05, sftPool: 1000 }).success).toBe(true);
    expect(schema.safeParse({ ...base, entropy: 1.5 }).success).toBe(false);
    expect(schema.safeParse({ ...base, sftPool: 1001 }).success).toBe(false);
    expect(schema.safeParse({ ...base, sftPool: 2.5 }).success).toBe(false);
  });

  it('a start version is the role\'s lineage parent', () => {
    const v = t.store.weights.save({ role: 'writer', basePath: model, path: model, hyper: {}, metrics: {} });
    const { graph } = parseWorkflow(LEARN, { tools: defaultTools() });
    const resolved = resolveModels(graph, { roles: {}, roleVersions: { writer: v.id } }, (id) => t.store.weights.find(id));
    const spec = trainLoopSpecOf({ workflowText: LEARN, dataset: 'learn-word', models: {}, roleVersions: { writer: v.id } }, graph, LEARN, resolved, t.store, getDataset('learn-word'), { versionsDir: '/v', dataDir: undefined });
    expect(spec.startVersions).toEqual({ writer: t.store.weights.get(v.id) });
  });

  it('versions go beside the database, or to the temporary folder for an in-memory one', async () => {
    expect(t.lab.runner.versionsDir).toBe(path.join(t.dir, 'flowlab-versions'));
    const mem = openStore(':memory:');
    const runner = new LabRunner({ store: mem, emit: () => {}, modelDir: t.dir });
    expect(runner.versionsDir).toBe(path.join(tmpdir(), 'flowlab-versions'));
    expect(new LabRunner({ store: mem, emit: () => {}, modelDir: t.dir, versionsDir: '/srv/lab/v' }).versionsDir).toBe('/srv/lab/v');
    mem.close();
  });
});

describe('a running loop', () => {
  it('holds its model file (BUSY for runs and loops) until cancelled; then it is free', async () => {
    const loading = gate();
    load = async () => {
      await loading.wait;
      return fakeModel();
    };
    const { loopId } = await t.api.startTrainLoop(req());
    expect(t.events).toEqual([
      { type: 'trainLoop', loopId, status: 'running', roles: ['writer'], done: 0, iterations: 2 },
      { type: 'job', kind: 'train-loop', id: loopId, status: 'running', done: 0, total: 2 },
    ]);
    expect(t.lab.runner.trainLoops()).toEqual([loopId]);
    const busy = await bad(t.api.startTrainLoop(req()));
    expect([busy.code, busy.field, busy.message]).toEqual(['BUSY', 'models', `startTrainLoop: model ${model} is in use by train loop ${loopId}; wait for it or cancel it`]);
    const run = await bad(t.api.startRun({ workflowText: LEARN, dataset: 'learn-word', split: 'heldout', limit: 1, seed: 0, models: { default: model } }));
    expect([run.code, run.method]).toEqual(['BUSY', 'startRun']);
    const cancelled = t.api.cancelTrainLoop({ loopId });
    loading.open();
    await expect(cancelled).resolves.toEqual({ cancelled: true });
    expect(t.events.at(-1)).toEqual({ type: 'trainLoop', loopId, status: 'cancelled', roles: ['writer'], done: 0, iterations: 2 });
    expect(t.lab.runner.trainLoops()).toEqual([]);
    await expect(t.api.cancelTrainLoop({ loopId })).resolves.toEqual({ cancelled: false });
    const next = await t.api.startTrainLoop(req());
    expect(next.loopId).not.toBe(loopId);
  });

  it('a loop that fails closes with failed and the error\'s message, and frees its file', async () => {
    load = async (file) => {
      throw new Error(`unsupported architecture in ${file}`);
    };
    const { loopId } = await t.api.startTrainLoop(req());
    await t.lab.runner.trainLoopSettled(loopId);
    expect(t.events).toEqual([
      { type: 'trainLoop', loopId, status: 'running', roles: ['writer'], done: 0, iterations: 2 },
      { type: 'job', kind: 'train-loop', id: loopId, status: 'running', done: 0, total: 2 },
      { type: 'job', kind: 'train-loop', id: loopId, status: 'failed', done: 0, total: 2, message: `unsupported architecture in ${model}` },
      { type: 'trainLoop', loopId, status: 'failed', roles: ['writer'], done: 0, iterations: 2, message: `unsupported architecture in ${model}` },
    ]);
    expect(t.lab.runner.trainLoops()).toEqual([]);
    load = async () => fakeModel();
    await expect(t.api.startTrainLoop(req())).resolves.toMatchObject({ loopId: expect.stringMatching(/^tl-/) });
  });

  it('dispose stops running loops and refuses new ones', async () => {
    const loading = gate();
    load = async () => {
      await loading.wait;
      return fakeModel();
    };
    const { loopId } = await t.api.startTrainLoop(req());
    const disposed = t.lab.dispose();
    loading.open();
    await disposed;
    expect(t.events.at(-1)).toMatchObject({ type: 'trainLoop', loopId, status: 'cancelled' });
    expect((await bad(t.api.startTrainLoop(req()))).code).toBe('UNAVAILABLE');
  });
});

describe('the browser host serves it', () => {
  it('POST /api/startTrainLoop: a bad field is a 400 naming it; a good request starts the loop; cancelTrainLoop stops it', async () => {
    const loading = gate();
    load = async () => {
      await loading.wait;
      return fakeModel();
    };
    const server = await startLabServer({ api: t.api, subscribe: createEventHub().subscribe, rendererDir: path.join(t.dir, 'no-renderer'), token: 't'.repeat(64) });
    try {
      const post = async (method: string, body: unknown) => {
        const res = await fetch(`http://127.0.0.1:${server.port}/api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', [TOKEN_HEADER]: 't'.repeat(64) }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as { ok: boolean; result?: { loopId?: string; cancelled?: boolean }; error?: { code: string; field?: string; message: string } } };
      };
      const refused = await post('startTrainLoop', req({ lr: 2 }));
      expect([refused.status, refused.body.error?.code, refused.body.error?.field, refused.body.error?.message]).toEqual([400, 'BAD_REQUEST', 'lr', 'startTrainLoop: payload field "lr": must be less than 1']);
      const ok = await post('startTrainLoop', req());
      expect(ok.status).toBe(200);
      const loopId = ok.body.result!.loopId!;
      expect(t.lab.runner.trainLoops()).toEqual([loopId]);
      // The trainer finishes loading only once the cancel has reached the runner.
      const cancel = t.lab.runner.cancelTrainLoop.bind(t.lab.runner);
      t.lab.runner.cancelTrainLoop = (id) => {
        const done = cancel(id);
        loading.open();
        return done;
      };
      const cancelled = post('cancelTrainLoop', { loopId });
      expect((await cancelled).body).toEqual({ ok: true, result: { cancelled: true } });
    } finally {
      await server.close();
    }
  });
});
