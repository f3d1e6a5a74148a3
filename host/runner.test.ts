/**
 * The lab runner's CLI options through the API, without a model (the scripted, simulated
 * provider): hint cards, role versions, role LoRA, rollouts and resume, and the request fields
 * their errors name. Parity with the CLI on the real tiny model: parity.model.test.ts.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, type StartRunRequest } from '../core/api/index.ts';
import { ScriptedProvider, type ModelConfig, type Script } from '../core/model/index.ts';
import { storedModels } from '../core/store/index.ts';
import { labPerTest, writeGsm8kTasks } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SINGLE = readFileSync(path.join(ROOT, 'examples/gsm8k-single.yaml'), 'utf8');

let gate: Promise<void>;
const configs: ModelConfig[] = [];
/** Calls in flight now and the most at once (the `parallel` test). */
const calls = { inFlight: 0, max: 0 };
const answer4: Script = async (req) => {
  calls.max = Math.max(calls.max, ++calls.inFlight);
  await gate;
  calls.inFlight--;
  return req.jsonSchema ? '{"answer": 4}' : 'think';
};

const t = labPerTest('runner', (h) => {
  writeGsm8kTasks(path.join(h.dir, 'data'));
  gate = Promise.resolve();
  configs.length = 0;
  mkdirSync(path.join(h.dir, 'models'));
  for (const f of ['tiny.gguf', 's.gguf']) writeFileSync(path.join(h.dir, 'models', f), `GGUF ${f}`);
  return createLabHost({
    store: h.store, dbFile: path.join(h.dir, 'lab.db'), modelDir: path.join(h.dir, 'models'), examplesDir: path.join(ROOT, 'examples'), dataDir: path.join(h.dir, 'data'),
    emit: (e) => h.events.push(e),
    createProvider: async (cfg) => {
      configs.push(cfg);
      return new ScriptedProvider(answer4);
    },
    checkModel: async () => {},
  });
});

const run = (over: Partial<StartRunRequest> = {}): StartRunRequest => ({ workflowText: SINGLE, dataset: 'gsm8k', split: 'test', limit: 3, seed: 1, models: { default: path.join(t.dir, 'models/tiny.gguf') }, ...over });
const rejection = async (p: Promise<unknown>): Promise<ApiError> => {
  const err = await p.then(() => new Error('expected a rejection'), (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
};

describe('startRun with the CLI options', () => {
  it('hint cards: the chosen cards are recorded and reach the solver prompt; uses are counted', async () => {
    t.store.improve.saveCard({ id: 'card-x', role: 'solver', title: 'Add carefully', appliesWhen: 'sums', advice: 'Add the numbers.', sourceRuns: [], teacher: 't', shots: 0, onlySuccesses: true, simulated: false, createdAt: 1 });
    const { experimentId } = await t.api.startRun(run({ cards: 'all', cardBudget: 64 }));
    await t.lab.runner.settled(experimentId);
    expect(t.store.getExperiment(experimentId).config?.cards).toEqual({ selection: 'all', ids: ['card-x'], budgetTokens: 64 });
    expect(t.store.improve.usesOf('card-x')).toHaveLength(3);
    expect(t.store.getExperimentCalls(experimentId)[0]!.system).toContain('Add carefully');
  });

  it('role versions and role LoRA resolve as the CLI does; contextSize and threads reach the provider', async () => {
    const file = path.join(t.dir, 'v1.gguf');
    writeFileSync(file, 'GGUF');
    const v = t.store.weights.save({ role: 'solver', basePath: file, path: file, hyper: {}, metrics: {} });
    const { experimentId } = await t.api.startRun(run({ roleVersions: { solver: v.id }, roleLora: { solver: [{ path: '/a/zero.gguf', scale: 0.5 }] }, contextSize: 512, threads: 2 }));
    await t.lab.runner.settled(experimentId);
    const exp = t.store.getExperiment(experimentId);
    const config = { roleVersions: exp.config?.roleVersions, models: storedModels(exp)! };
    expect(config.roleVersions).toEqual([`solver=${v.id}`]);
    expect(config.models).toMatchObject({ models: { 'role:solver': file }, roleModels: { solver: 'role:solver' }, loras: { 'role:solver': [{ path: '/a/zero.gguf', scale: 0.5 }] }, contextSize: 512, threads: 2 });
    expect(configs[0]).toMatchObject({ contextSize: 512, threads: 2, loras: { 'role:solver': [{ path: '/a/zero.gguf', scale: 0.5 }] } });
  });

  it('parallel: that many tasks in flight; a local file without it runs one at a time (docs/scale.md)', async () => {
    for (const [parallel, want] of [[3, 3], [undefined, 1]] as const) {
      let open!: () => void;
      gate = new Promise((r) => (open = r));
      Object.assign(calls, { inFlight: 0, max: 0 });
      const { experimentId } = await t.api.startRun(run(parallel === undefined ? {} : { parallel }));
      for (let i = 0; i < 200 && calls.inFlight < want; i++) await new Promise((r) => setTimeout(r, 5));
      open();
      await t.lab.runner.settled(experimentId);
      expect(calls.max).toBe(want);
      expect(t.store.listRuns(experimentId).map((r) => r.taskIndex)).toEqual([0, 1, 2]);
    }
  });

  it('rollouts: G runs per task, advantages stored, config as `flowlab rollouts` writes it', async () => {
    const { experimentId } = await t.api.startRun(run({ kind: 'rollouts', group: 2, temperature: 0.5, limit: 2 }));
    await t.lab.runner.settled(experimentId);
    const exp = t.store.getExperiment(experimentId);
    expect(exp.kind).toBe('rollouts');
    expect(exp.config).toMatchObject({ rollouts: { group: 2, temperature: 0.5, mode: 'multi-agent', learningRoles: ['solver'] }, models: { sequences: 4, batching: 'isolated' }, source: 'lab' });
    expect(t.store.listRuns(experimentId)).toHaveLength(4);
    expect(t.store.improve.advantagesOf(experimentId).length).toBeGreaterThan(0);
  });

  it.each<[string, Partial<StartRunRequest>, string]>([
    ['an unknown card', { cards: ['card-nope'] }, 'cards'],
    ['an unknown weight version', { roleVersions: { solver: 'wv-nope' } }, 'roleVersions.solver'],
    ['a version for an unknown role', { roleVersions: { ghost: 'wv-nope' } }, 'roleVersions.ghost'],
    ['a LoRA for an unknown role', { roleLora: { ghost: [{ path: '/a/x.gguf' }] } }, 'roleLora.ghost'],
    ['online distillation for an unknown role', { distillEvery: 1, distillRoles: ['ghost'] }, 'distillRoles'],
    ['rollouts without a group', { kind: 'rollouts' }, 'group'],
    ['a bad rollouts mode', { kind: 'rollouts', group: 2, mode: 'everyone' }, 'mode'],
  ])('refuses %s, naming the field', async (_what, over, field) => {
    const err = await rejection(t.api.startRun(run(over)));
    expect([err.code, err.method, err.field]).toEqual(['BAD_REQUEST', 'startRun', field]);
    expect(t.store.listExperiments()).toEqual([]);
  });
});

describe('resumeRun', () => {
  it('finishes a cancelled experiment exactly as `flowlab resume` would', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const { experimentId } = await t.api.startRun(run());
    const cancelling = t.api.cancelRun({ experimentId });
    open();
    await cancelling;
    expect(t.store.pendingTasks(experimentId)).toHaveLength(3);
    t.events.length = 0;
    await expect(t.api.resumeRun({ experimentId })).resolves.toEqual({ experimentId, pending: 3 });
    await t.lab.runner.settled(experimentId);
    expect(t.store.getExperiment(experimentId).status).toBe('completed');
    expect(t.store.listRuns(experimentId)).toHaveLength(3);
    expect(t.events[0]).toEqual({ type: 'experiment', experimentId, status: 'running', done: 0, total: 3 });
    expect(t.events.at(-1)).toEqual({ type: 'experiment', experimentId, status: 'completed', done: 3, total: 3 });
    // Nothing left: nothing starts.
    await expect(t.api.resumeRun({ experimentId })).resolves.toEqual({ experimentId, pending: 0 });
    expect(await t.api.activeRuns()).toEqual([]);
  });

  it('resumeJob routes an experiment kind to resumeRun: the same end, and the id checked against the kind', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const { experimentId } = await t.api.startRun(run());
    const cancelling = t.api.cancelRun({ experimentId });
    open();
    await cancelling;
    expect(t.store.pendingTasks(experimentId)).toHaveLength(3);
    expect((await t.api.listJobKinds()).find((k) => k.name === 'run')).toMatchObject({ resumable: true, resumeVia: { method: 'resumeRun', command: 'flowlab resume' } });
    const wrong = await rejection(t.api.resumeJob({ kind: 'rollouts', id: experimentId }));
    expect([wrong.code, wrong.method, wrong.field]).toEqual(['BAD_REQUEST', 'resumeJob', 'kind']);
    expect(wrong.message).toBe(`resumeJob: experiment ${experimentId} is a run experiment, not a rollouts one`);
    const missing = await rejection(t.api.resumeJob({ kind: 'run', id: 'exp-nope' }));
    expect([missing.code, missing.field]).toEqual(['NOT_FOUND', 'id']);
    const loop = await rejection(t.api.resumeJob({ kind: 'train-loop', id: 'loop-nope' }));
    expect([loop.code, loop.field]).toEqual(['NOT_FOUND', 'id']);
    expect(t.store.pendingTasks(experimentId)).toHaveLength(3);
    await expect(t.api.resumeJob({ kind: 'run', id: experimentId })).resolves.toEqual({ kind: 'run', id: experimentId, pending: 3 });
    await t.lab.runner.settled(experimentId);
    expect(t.store.getExperiment(experimentId).status).toBe('completed');
    expect(t.store.listRuns(experimentId)).toHaveLength(3);
  });

  it('refuses an unknown experiment (NOT_FOUND), a moved default for an experiment without one, a changed model file', async () => {
    expect((await rejection(t.api.resumeRun({ experimentId: 'exp-nope' }))).code).toBe('NOT_FOUND');
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const solver = path.join(t.dir, 'models/s.gguf');
    const { experimentId } = await t.api.startRun(run({ models: { roles: { solver } } }));
    const cancelling = t.api.cancelRun({ experimentId });
    open();
    await cancelling;
    const moved = await rejection(t.api.resumeRun({ experimentId, models: { default: '/m/other.gguf' } }));
    expect([moved.code, moved.method, moved.field]).toEqual(['BAD_REQUEST', 'resumeRun', 'models.default']);
    writeFileSync(solver, 'GGUF changed');
    const changed = await rejection(t.api.resumeRun({ experimentId }));
    expect([changed.code, changed.field]).toEqual(['BAD_REQUEST', 'models']);
    expect(changed.message).toContain(`resumeRun: model file for "role:solver" changed since the experiment started: ${solver}`);
    expect(t.store.getExperiment(experimentId).status).toBe('cancelled');
  });
});
