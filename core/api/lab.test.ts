import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rejectionOf, runRecord } from '../../test/fixtures.ts';
import { asExperimentId, asRunId } from '../ids.ts';
import { computeWorkflowHash, openStore, type Store } from '../store/index.ts';
import { ModelError } from '../model/index.ts';
import {
  ApiError,
  createHandlers,
  isLabEvent,
  LAB_METHODS,
  type LabEvent,
  type LabHost,
  type StartRunRequest,
} from './index.ts';

const EXP = asExperimentId('exp-lab-1');

/** A LabHost that records every call and answers canned data. */
function fakeLab(over: Partial<LabHost> = {}): LabHost & { calls: [string, unknown][] } {
  const calls: [string, unknown][] = [];
  const rec = <T>(name: string, payload: unknown, value: T): T => {
    calls.push([name, payload]);
    return value;
  };
  return {
    calls,
    listExamples: () => rec('listExamples', undefined, [{ file: 'examples/a.yaml', name: 'a', text: 'name: a\n' }]),
    listDatasets: () => rec('listDatasets', undefined, [{ name: 'gsm8k', splits: ['test'], describe: 'math', available: true }]),
    listModels: async () => rec('listModels', undefined, [{ path: '/m/tiny.gguf', fileName: 'tiny.gguf', sizeBytes: 10, source: 'folder' as const }]),
    addModel: async (p) => rec('addModel', p, { path: p.path, fileName: 'x.gguf', sizeBytes: 1, source: 'added' as const }),
    testModel: async (p) => rec('testModel', p, { text: 'hi', promptTokens: 2, completionTokens: 1, ms: 3 }),
    startRun: async (p) => rec('startRun', p, { experimentId: 'exp-new' }),
    cancelRun: (p) => rec('cancelRun', p, { cancelled: true }),
    resumeRun: (p) => rec('resumeRun', p, { experimentId: p.experimentId, pending: 0 }),
    activeRuns: () => rec('activeRuns', undefined, [{ experimentId: 'exp-new', done: 1, total: 2, startedAt: 5 }]),
    startTrainLoop: (p) => rec('startTrainLoop', p, { loopId: 'tl-1' }),
    cancelTrainLoop: (p) => rec('cancelTrainLoop', p, { cancelled: p.loopId === 'tl-1' }),
    listWorkflowFiles: () => rec('listWorkflowFiles', undefined, { folder: '/w', files: [] }),
    readWorkflowFile: (p) => rec('readWorkflowFile', p, { name: p.name, text: 'name: a\n', sizeBytes: 8, modifiedAt: 1 }),
    saveWorkflowFile: (p) => rec('saveWorkflowFile', p, { name: p.name, sizeBytes: p.text.length, modifiedAt: 2 }),
    startEvolve: (p) => rec('startEvolve', p, { jobId: `evo-${p.dataset}` }),
    startRank: (p) => rec('startRank', p, { jobId: p.loopId ?? 'rank-x' }),
    startRsi: (p) => rec('startRsi', p, { jobId: p.loopId ?? 'rsi-x' }),
    cancelMass: (p) => rec('cancelMass', p, { cancelled: p.jobId === 'rk' }),
    distillCard: (p) => rec('distillCard', p, { id: 'card-1', role: p.role, title: 't', appliesWhen: 'w', advice: 'a', sourceRuns: [], teacher: 'x', shots: 1, onlySuccesses: false, simulated: false, createdAt: 1, uses: 0 }),
    startDownload: (p) => rec('startDownload', p, { downloadId: 'dl-1' }),
    cancelDownload: (p) => rec('cancelDownload', p, { cancelled: p.downloadId === 'dl-1' }),
    listStudyPlans: () => rec('listStudyPlans', undefined, [{ name: 'laptop.yaml', text: 'name: laptop\n' }]),
    startStudy: (p) => rec('startStudy', p, { studyId: p.planName ? `study-${p.planName}` : 'study-pasted' }),
    cancelStudy: (p) => rec('cancelStudy', p, { cancelled: p.studyId === 'study-laptop.yaml' }),
    listJobKinds: () => rec('listJobKinds', undefined, [{ name: 'count', family: 'toy', describe: 'a toy', startable: true, resumable: true }]),
    listJobs: () => rec('listJobs', undefined, []),
    startJob: (p) => rec('startJob', p, { kind: p.kind, id: 'count-1' }),
    cancelJob: (p) => rec('cancelJob', p, { cancelled: p.id === 'count-1' }),
    resumeJob: (p) => rec('resumeJob', p, { kind: p.kind, id: p.id, pending: 2 }),
    startGeneration: (p) => rec('startGeneration', p, { generationId: `gen-${p.maxTokens}` }),
    cancelGeneration: (p) => rec('cancelGeneration', p, { cancelled: p.generationId === 'gen-8' }),
    forkRun: (p) => rec('forkRun', p, { runId: 'fork-1/0', experimentId: 'fork-1', parentRunId: p.runId, nodeId: p.nodeId, attempt: 1, intervention: 'output', status: 'completed' as const, correct: true, parentCorrect: false, recorded: {}, live: {}, modelsLoaded: 0 }),
    ...over,
  };
}

const RUN: StartRunRequest = {
  workflowText: 'name: x\n',
  dataset: 'gsm8k',
  split: 'test',
  limit: 2,
  seed: 0,
  models: { default: '/models/tiny.gguf', roles: { solver: 'C:\\models\\b.gguf' } },
  inject: ['solver=error@1'],
};

let store: Store;
beforeEach(() => {
  store = openStore(':memory:');
  const yaml = 'name: demo\n';
  store.createExperiment({
    id: EXP, kind: 'run', workflowName: 'demo', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml),
    dataset: 'gsm8k', split: 'test', seed: 1, config: null, tasks: [{ taskIndex: 0, taskId: 't0', input: {} }],
  });
});
afterEach(() => store.close());

const rejection = (p: Promise<unknown>): Promise<ApiError> => rejectionOf(ApiError, p);

describe('lab methods over a fake LabHost', () => {
  it('delegates every lab method with its validated payload', async () => {
    const lab = fakeLab();
    const api = createHandlers({ store, version: '1', lab });
    await expect(api.listExamples()).resolves.toEqual([{ file: 'examples/a.yaml', name: 'a', text: 'name: a\n' }]);
    await expect(api.listDatasets({})).resolves.toMatchObject([{ name: 'gsm8k', available: true }]);
    await expect(api.listModels()).resolves.toMatchObject([{ fileName: 'tiny.gguf', source: 'folder' }]);
    await expect(api.addModel({ path: '/m/x.gguf' })).resolves.toMatchObject({ path: '/m/x.gguf', source: 'added' });
    await expect(api.testModel({ path: '/m/x.gguf', prompt: 'Once', maxTokens: 8 })).resolves.toEqual({ text: 'hi', promptTokens: 2, completionTokens: 1, ms: 3 });
    await expect(api.startRun(RUN)).resolves.toEqual({ experimentId: 'exp-new' });
    await expect(api.cancelRun({ experimentId: EXP })).resolves.toEqual({ cancelled: true });
    await expect(api.resumeRun({ experimentId: EXP })).resolves.toEqual({ experimentId: EXP, pending: 0 });
    await expect(api.activeRuns()).resolves.toEqual([{ experimentId: 'exp-new', done: 1, total: 2, startedAt: 5 }]);
    await expect(api.startTrainLoop({ workflowText: 'name: x\n', dataset: 'learn-word', models: { default: '/m/x.gguf' }, iterations: 2 })).resolves.toEqual({ loopId: 'tl-1' });
    await expect(api.cancelTrainLoop({ loopId: 'tl-1' })).resolves.toEqual({ cancelled: true });
    await expect(api.listWorkflowFiles()).resolves.toEqual({ folder: '/w', files: [] });
    await expect(api.readWorkflowFile({ name: 'a.yaml' })).resolves.toMatchObject({ name: 'a.yaml', text: 'name: a\n' });
    await expect(api.saveWorkflowFile({ name: 'b.yml', text: 'name: b\n', overwrite: true })).resolves.toEqual({ name: 'b.yml', sizeBytes: 8, modifiedAt: 2 });
    await expect(api.startEvolve({ dataset: 'learn-tool', model: '/m/x.gguf', iterations: 2 })).resolves.toEqual({ jobId: 'evo-learn-tool' });
    await expect(api.startRank({ dataset: 'learn-tool', model: '/m/x.gguf', loopId: 'rk' })).resolves.toEqual({ jobId: 'rk' });
    await expect(api.startRsi({ dataset: 'learn-tool', model: '/m/x.gguf', cycles: 1 })).resolves.toEqual({ jobId: 'rsi-x' });
    await expect(api.cancelMass({ jobId: 'rk' })).resolves.toEqual({ cancelled: true });
    await expect(api.distillCard({ experimentId: EXP, role: 'solver', shots: 2 })).resolves.toMatchObject({ id: 'card-1', role: 'solver' });
    await expect(api.startDownload({ source: 'hf:o/r/m.gguf', sha256: 'ab'.repeat(32), sizeBytes: 10, fileName: 'mine.gguf' })).resolves.toEqual({ downloadId: 'dl-1' });
    await expect(api.cancelDownload({ downloadId: 'dl-1' })).resolves.toEqual({ cancelled: true });
    await expect(api.listStudyPlans()).resolves.toEqual([{ name: 'laptop.yaml', text: 'name: laptop\n' }]);
    await expect(api.startStudy({ planName: 'laptop.yaml', dryRun: true, threads: 1 })).resolves.toEqual({ studyId: 'study-laptop.yaml' });
    await expect(api.cancelStudy({ studyId: 'study-laptop.yaml' })).resolves.toEqual({ cancelled: true });
    store.saveRun(runRecord(EXP, 0, { runId: asRunId(`${EXP}/0`) }), []);
    await expect(api.forkRun({ runId: `${EXP}/0`, nodeId: 'solve', output: '{}' })).resolves.toMatchObject({ runId: 'fork-1/0', parentRunId: `${EXP}/0` });
    await expect(rejection(api.forkRun({ runId: `${EXP}/0`, nodeId: 'solve', output: '{}', seed: 2 }))).resolves.toMatchObject({ code: 'BAD_REQUEST', field: 'output' });
    await expect(rejection(api.forkRun({ runId: `${EXP}/0`, nodeId: 'solve', seed: 2, roleModel: { role: 'solver', path: '/m/x.gguf' } }))).resolves.toMatchObject({ code: 'BAD_REQUEST', field: 'output' });
    await expect(rejection(api.forkRun({ runId: `${EXP}/0`, nodeId: 'solve', roleModel: { role: 'solver', path: 'relative.gguf' } }))).resolves.toMatchObject({ code: 'BAD_REQUEST', field: 'roleModel.path' });
    await expect(rejection(api.forkRun({ runId: 'nope/0', nodeId: 'solve', seed: 2 }))).resolves.toMatchObject({ code: 'NOT_FOUND' });
    await expect(api.listJobKinds()).resolves.toEqual([{ name: 'count', family: 'toy', describe: 'a toy', startable: true, resumable: true }]);
    await expect(api.listJobs()).resolves.toEqual([]);
    await expect(api.startJob({ kind: 'count', spec: { to: 3 } })).resolves.toEqual({ kind: 'count', id: 'count-1' });
    await expect(rejection(api.startJob({ kind: '', spec: {} }))).resolves.toMatchObject({ code: 'BAD_REQUEST', field: 'kind' });
    await expect(api.cancelJob({ kind: 'count', id: 'count-1' })).resolves.toEqual({ cancelled: true });
    await expect(api.resumeJob({ kind: 'count', id: 'count-1' })).resolves.toEqual({ kind: 'count', id: 'count-1', pending: 2 });
    await expect(api.startGeneration({ model: '/m/x.gguf', prompt: 'Once', maxTokens: 8, seed: 3 })).resolves.toEqual({ generationId: 'gen-8' });
    await expect(api.cancelGeneration({ generationId: 'gen-8' })).resolves.toEqual({ cancelled: true });
    expect(lab.calls.map(([m]) => m)).toEqual([...LAB_METHODS]);
    expect(lab.calls.find(([m]) => m === 'startRun')![1]).toEqual(RUN);
    expect(lab.calls.find(([m]) => m === 'startDownload')![1]).toEqual({ source: 'hf:o/r/m.gguf', sha256: 'ab'.repeat(32), sizeBytes: 10, fileName: 'mine.gguf' });
  });

  it('returns a Promise from every lab method, even for a bad payload', () => {
    const api = createHandlers({ store, version: '1', lab: fakeLab() }) as unknown as Record<string, (p?: unknown) => unknown>;
    for (const m of LAB_METHODS) {
      const out = api[m]!(42);
      expect(out).toBeInstanceOf(Promise);
      (out as Promise<unknown>).catch(() => {});
    }
  });

  it('answers UNAVAILABLE when the host has no lab', async () => {
    const api = createHandlers({ store, version: '1' });
    const err = await rejection(api.listModels());
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toMatch(/^listModels: this host cannot run the lab/);
  });

  it('cancelRun of an unknown experiment is NOT_FOUND before the lab is asked', async () => {
    const lab = fakeLab();
    const api = createHandlers({ store, version: '1', lab });
    const err = await rejection(api.cancelRun({ experimentId: 'nope' }));
    expect([err.code, err.method]).toEqual(['NOT_FOUND', 'cancelRun']);
    expect(lab.calls).toEqual([]);
  });

  it('passes the LabHost ApiErrors through and maps core errors', async () => {
    const api = createHandlers({
      store,
      version: '1',
      lab: fakeLab({
        startRun: async () => {
          throw new ApiError('BUSY', 'startRun: model /m/a.gguf is in use by exp-2', 'startRun', 'models.default');
        },
        testModel: async (p) => {
          throw new ModelError('MODEL_NOT_FOUND', `Model file not found: ${p.path}`, p.path);
        },
        listExamples: () => {
          throw new RangeError('disk on fire');
        },
      }),
    });
    expect((await rejection(api.startRun(RUN))).toData()).toEqual({
      code: 'BUSY', message: 'startRun: model /m/a.gguf is in use by exp-2', method: 'startRun', field: 'models.default',
    });
    const missing = await rejection(api.testModel({ path: '/m/gone.gguf', prompt: 'x' }));
    expect([missing.code, missing.message]).toEqual(['BAD_REQUEST', 'testModel: Model file not found: /m/gone.gguf']);
    const internal = await rejection(api.listExamples());
    expect([internal.code, internal.message]).toEqual(['INTERNAL', 'listExamples: disk on fire']);
  });
});

describe('lab payload validation', () => {
  let api: Record<string, (p?: unknown) => Promise<unknown>>;
  let lab: ReturnType<typeof fakeLab>;
  beforeEach(() => {
    lab = fakeLab();
    api = createHandlers({ store, version: '1', lab }) as unknown as typeof api;
  });
  const run = (over: Record<string, unknown>) => ({ ...RUN, ...over });

  it.each([
    ['listExamples', { all: true }, 'all', /listExamples: payload: unknown field\(s\) "all"/],
    ['listDatasets', 'x', undefined, /listDatasets: payload: expected an object, received string/],
    ['listModels', [1], undefined, /listModels: payload: expected an object, received array/],
    ['activeRuns', { x: 1 }, 'x', /activeRuns: payload: unknown field\(s\) "x"/],
    ['addModel', {}, 'path', /addModel: payload field "path": missing \(expected string\)/],
    ['addModel', { path: 'models/tiny.gguf' }, 'path', /addModel: payload field "path": must be an absolute path/],
    ['addModel', { path: '/a\u0000b.gguf' }, 'path', /addModel: payload field "path": must not contain a NUL character/],
    ['addModel', { path: '/' + 'x'.repeat(5000) }, 'path', /addModel: payload field "path": must be at most 4096 characters/],
    ['testModel', { path: '/m.gguf' }, 'prompt', /testModel: payload field "prompt": missing \(expected string\)/],
    ['testModel', { path: '/m.gguf', prompt: '' }, 'prompt', /testModel: payload field "prompt": must not be empty/],
    ['testModel', { path: '/m.gguf', prompt: 'x', maxTokens: 257 }, 'maxTokens', /testModel: payload field "maxTokens": must be at most 256/],
    ['testModel', { path: '/m.gguf', prompt: 'x', maxTokens: 1.5 }, 'maxTokens', /testModel: payload field "maxTokens": must be an integer from 1 to 256/],
    ['startRun', undefined, undefined, /startRun: payload: expected an object, received undefined/],
    ['startRun', run({ workflowText: 7 }), 'workflowText', /startRun: payload field "workflowText": expected string, received number/],
    ['startRun', run({ limit: 0 }), 'limit', /startRun: payload field "limit": must be at least 1/],
    ['startRun', run({ limit: 10001 }), 'limit', /startRun: payload field "limit": must be at most 10000/],
    ['startRun', run({ limit: '5' }), 'limit', /startRun: payload field "limit": expected number, received string/],
    ['startRun', run({ seed: -1 }), 'seed', /startRun: payload field "seed": must be at least 0/],
    ['startRun', run({ dataset: '' }), 'dataset', /startRun: payload field "dataset": must not be empty/],
    ['startRun', run({ split: 'x'.repeat(101) }), 'split', /startRun: payload field "split": must be at most 100 characters/],
    ['startRun', run({ models: { default: 'tiny.gguf' } }), 'models.default', /startRun: payload field "models.default": must be an absolute path/],
    ['startRun', run({ models: { roles: { solver: './b.gguf' } } }), 'models.roles.solver', /startRun: payload field "models.roles.solver": must be an absolute path/],
    ['startRun', run({ models: { gpu: true } }), 'models.gpu', /startRun: payload field "models": unknown field\(s\) "gpu"/],
    ['startRun', run({ inject: 'solver=error' }), 'inject', /startRun: payload field "inject": expected array, received string/],
    ['startRun', run({ inject: Array(33).fill('a=error') }), 'inject', /startRun: payload field "inject": must have at most 32 entries/],
    ['startRun', run({ threads: 0 }), 'threads', /startRun: payload field "threads": must be at least 1/],
    ['startRun', run({ parallel: 0 }), 'parallel', /startRun: payload field "parallel": must be at least 1/],
    ['startRun', run({ parallel: 1025 }), 'parallel', /startRun: payload field "parallel": must be at most 1024/],
    ['startRank', { dataset: 'learn-tool', model: '/m/x.gguf', parallel: 0 }, 'parallel', /startRank: payload field "parallel": must be at least 1/],
    ['startRsi', { dataset: 'learn-tool', model: '/m/x.gguf', parallel: 1025 }, 'parallel', /startRsi: payload field "parallel": must be at most 1024/],
    ['startEvolve', { dataset: 'learn-tool', model: '/m/x.gguf', parallel: 1.5 }, 'parallel', /startEvolve: payload field "parallel": must be an integer from 1 to 1024/],
    ['startRun', run({ extra: 1 }), 'extra', /startRun: payload: unknown field\(s\) "extra"/],
    ['cancelRun', {}, 'experimentId', /cancelRun: payload field "experimentId": missing \(expected string\)/],
    ['cancelRun', { experimentId: 'x'.repeat(201) }, 'experimentId', /cancelRun: payload field "experimentId": must be at most 200 characters/],
  ])('%s(%j) is rejected as BAD_REQUEST naming field %s', async (method, payload, field, message) => {
    const err = await rejection(api[method]!(payload));
    expect(err.code).toBe('BAD_REQUEST');
    expect(err.method).toBe(method);
    expect(err.field).toBe(field);
    expect(err.message).toMatch(message);
    expect(lab.calls).toEqual([]);
  });

  it('accepts a run with only per-role models, no inject and an offset', async () => {
    const req = { workflowText: 'name: x\n', dataset: 'gsm8k', split: 'test', limit: 1, offset: 3, seed: 9, models: { roles: { a: '/a.gguf' } } };
    await expect(api.startRun!(req)).resolves.toEqual({ experimentId: 'exp-new' });
  });
});

describe('ApiError wire form (Electron IPC keeps only the message)', () => {
  it('carries the field when there is one, and round-trips through Electron\'s prefix', () => {
    const err = new ApiError('BAD_REQUEST', 'startRun: payload field "models.default": must be an absolute path', 'startRun', 'models.default');
    expect(err.toWire()).toBe('startRun: payload field "models.default": must be an absolute path [BAD_REQUEST models.default]');
    const back = ApiError.fromWire(new Error(`Error invoking remote method 'flowlab:startRun': Error: ${err.toWire()}`));
    expect(back.toData()).toEqual(err.toData());
    expect(ApiError.fromWire(new ApiError('BUSY', 'startRun: busy', 'startRun').toWire()).toData()).toEqual({ code: 'BUSY', message: 'startRun: busy', method: 'startRun' });
  });

  it('round-trips its plain-data form; malformed data becomes INTERNAL', () => {
    const err = new ApiError('NOT_FOUND', 'cancelRun: no experiment x', 'cancelRun');
    expect(ApiError.fromData(err.toData()).toData()).toEqual(err.toData());
    expect(ApiError.fromData({ code: 'WHAT', message: 'm' }).toData()).toEqual({ code: 'INTERNAL', message: 'm' });
    expect(ApiError.fromData(null).message).toMatch(/^malformed error: null/);
  });
});

describe('isLabEvent', () => {
  const good: LabEvent[] = [
    { type: 'experiment', experimentId: 'e', status: 'running', done: 0, total: 2 },
    { type: 'experiment', experimentId: 'e', status: 'failed', done: 1, total: 2, message: 'boom' },
    { type: 'node', experimentId: 'e', runId: 'e/0', nodeId: 'plan', attempt: 1, phase: 'started' },
    { type: 'node', experimentId: 'e', runId: 'e/0', nodeId: 'plan', attempt: 1, phase: 'finished', status: 'failed', failureClass: 'execution', simulated: true },
    { type: 'run', experimentId: 'e', runId: 'e/0', taskIndex: 0, done: 1, total: 2, status: 'completed', correct: false },
  ];
  it('accepts every well-formed event', () => {
    for (const e of good) expect(isLabEvent(e)).toBe(true);
  });
  it('rejects junk and near misses', () => {
    for (const bad of [
      null, 'x', [], {}, { type: 'other', experimentId: 'e' },
      { ...good[0], status: 'paused' },
      { ...good[0], done: -1 },
      { ...good[2], phase: 'middle' },
      { ...good[3], failureClass: 'nope' },
      { ...good[4], correct: 'yes' },
      { ...good[4], experimentId: 3 },
    ]) {
      expect(isLabEvent(bad)).toBe(false);
    }
  });
});

