/**
 * The lab host without a model: a scripted (simulated) provider stands in for node-llama-cpp, and
 * a three-task GSM8K file is written to a temp folder. Model-dependent tests: labHost.model.test.ts.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, type StartRunRequest } from '../core/api/index.ts';
import { ModelError, ScriptedProvider, type Script } from '../core/model/index.ts';
import { createLabHost, type LabHostHandle, type ModelHeader } from './index.ts';
import { labPerTest, relab, writeGsm8kTasks, type LabTest } from '../test/fixtures.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SINGLE = readFileSync(path.join(ROOT, 'examples/gsm8k-single.yaml'), 'utf8');
const TEAM = readFileSync(path.join(ROOT, 'examples/gsm8k-team.yaml'), 'utf8');

/** Every scripted call waits for this before answering (set by a test to hold a run). */
let gate: Promise<void>;

const answer4: Script = async (req) => {
  await gate;
  return req.jsonSchema ? '{"answer": 4}' : 'think';
};

/** A lab over the test's folder: scripted provider, model checks and headers faked from the file name. */
function labOver(h: LabTest, script: Script = answer4, over: Partial<Parameters<typeof createLabHost>[0]> = {}): LabHostHandle {
  return createLabHost({
    store: h.store,
    dbFile: path.join(h.dir, 'lab.db'),
    modelDir: path.join(h.dir, 'models'),
    examplesDir: path.join(ROOT, 'examples'),
    dataDir: path.join(h.dir, 'data'),
    emit: (e) => h.events.push(e),
    createProvider: async () => new ScriptedProvider(script),
    checkModel: async (file) => {
      if (file.includes('missing')) throw new Error(`Model file not found: ${file}`);
    },
    readHeader: async (file): Promise<ModelHeader> => {
      if (file.endsWith('junk.gguf')) throw new Error(`Not a GGUF file: ${file} (expected the magic "GGUF" at the start, found bytes 6a756e6b)`);
      return { architecture: 'llama', fileType: 'F32', hasChatTemplate: false, parameters: 292800, contextLength: 2048 };
    },
    ...over,
  });
}

const t = labPerTest('host', (h) => {
  writeGsm8kTasks(path.join(h.dir, 'data'));
  gate = Promise.resolve();
  return labOver(h);
});

/** Swaps in a new lab over the same folder and store (the previous one is not disposed). */
function makeLab(script: Script = answer4, over: Partial<Parameters<typeof createLabHost>[0]> = {}): void {
  relab(t, labOver(t, script, over));
}

const run = (over: Partial<StartRunRequest> = {}): StartRunRequest => ({
  workflowText: SINGLE,
  dataset: 'gsm8k',
  split: 'test',
  limit: 3,
  seed: 1,
  models: { default: path.join(t.dir, 'models/tiny.gguf') },
  ...over,
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => new Error('expected a rejection'), (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('startRun (scripted provider)', () => {
  it('records the experiment like `flowlab run` and streams its progress', async () => {
    const { experimentId } = await t.api.startRun(run());
    await t.lab.runner.settled(experimentId);
    const exp = t.api.getExperiment({ id: experimentId });
    expect(exp).toMatchObject({ kind: 'run', status: 'completed', workflowName: 'gsm8k-single', dataset: 'gsm8k', split: 'test', limit: 3, seed: 1, runsDone: 3, runsCorrect: 2 });
    expect(exp.workflowYaml).toBe(SINGLE);
    expect(exp.config).toEqual({
      offset: 0,
      dataDir: path.join(t.dir, 'data'),
      models: { models: { default: path.join(t.dir, 'models/tiny.gguf') }, roleModels: { solver: 'default' }, gpu: false, fingerprints: { default: 'missing' } },
      source: 'lab',
    });
    expect(t.events[0]).toEqual({ type: 'experiment', experimentId, status: 'running', done: 0, total: 3 });
    expect(t.events.at(-1)).toEqual({ type: 'experiment', experimentId, status: 'completed', done: 3, total: 3 });
    // The one `job` event beside them (host/jobs.ts RunningJobs): running 0/3 right after the experiment's, completed just before its end.
    const jobs = t.events.filter((e) => e.type === 'job');
    expect(jobs[0]).toEqual({ type: 'job', kind: 'run', id: experimentId, status: 'running', done: 0, total: 3 });
    expect(jobs.at(-1)).toEqual({ type: 'job', kind: 'run', id: experimentId, status: 'completed', done: 3, total: 3, summary: '2 correct of 3 runs' });
    expect(t.events.indexOf(jobs[0]!)).toBe(1);
    expect(t.events.indexOf(jobs.at(-1)!)).toBe(t.events.length - 2);
    const shape = t.events.filter((e) => e.type !== 'job').map((e) => (e.type === 'node' ? `${e.nodeId}:${e.phase}` : e.type === 'run' ? `run${e.taskIndex}:${e.done}/${e.total}` : e.type === 'experiment' ? e.status : e.type));
    expect(shape).toEqual([
      'running',
      'solve:started', 'solve:finished', 'run0:1/3',
      'solve:started', 'solve:finished', 'run1:2/3',
      'solve:started', 'solve:finished', 'run2:3/3',
      'completed',
    ]);
    expect(t.events.filter((e) => e.type === 'run').map((e) => e.type === 'run' && e.correct)).toEqual([true, false, true]);
    expect(await t.api.activeRuns()).toEqual([]);
  });

  it('honours offset and per-role models', async () => {
    const solverModel = path.join(t.dir, 'models/solver.gguf');
    const { experimentId } = await t.api.startRun(run({ offset: 1, limit: 5, models: { roles: { solver: solverModel } } }));
    await t.lab.runner.settled(experimentId);
    const exp = t.api.getExperiment({ id: experimentId });
    expect(exp.tasksPlanned).toBe(2);
    expect(exp.config?.models).toEqual({ models: { 'role:solver': solverModel }, roleModels: { solver: 'role:solver' }, gpu: false, fingerprints: { 'role:solver': 'missing' } });
    expect(t.api.listRuns({ experimentId }).map((r) => r.taskId)).toEqual(['gsm8k/test/1', 'gsm8k/test/2']);
  });

  it('marks injected runs simulated (kind blame-eval, config.simulated)', async () => {
    const { experimentId } = await t.api.startRun(run({ inject: ['solver=error@1'], limit: 2 }));
    await t.lab.runner.settled(experimentId);
    const exp = t.api.getExperiment({ id: experimentId });
    expect(exp.kind).toBe('blame-eval');
    expect(exp.config).toMatchObject({ inject: ['solver=error@1'], simulated: true });
    expect(t.api.listRuns({ experimentId }).map((r) => [r.status, r.simulated])).toEqual([['failed', true], ['failed', true]]);
    const finished = t.events.filter((e) => e.type === 'node' && e.phase === 'finished');
    expect(finished.every((e) => e.type === 'node' && e.simulated === true && e.failureClass === 'execution')).toBe(true);
  });

  it('cancels: the run in flight is dropped, the experiment is cancelled and resumable', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const { experimentId } = await t.api.startRun(run());
    expect(await t.api.activeRuns()).toEqual([{ experimentId, done: 0, total: 3, startedAt: expect.any(Number) }]);
    const cancelling = t.api.cancelRun({ experimentId });
    open();
    await expect(cancelling).resolves.toEqual({ cancelled: true });
    const exp = t.store.getExperiment(experimentId);
    expect(exp.status).toBe('cancelled');
    expect(t.store.pendingTasks(experimentId)).toHaveLength(3);
    const family = t.events.filter((e) => e.type !== 'job');
    expect(family.at(-2)).toEqual({ type: 'run', experimentId, runId: `${experimentId}/0`, taskIndex: 0, done: 0, total: 3, status: 'cancelled', correct: false });
    expect(family.at(-1)).toEqual({ type: 'experiment', experimentId, status: 'cancelled', done: 0, total: 3 });
    expect(t.events.at(-2)).toEqual({ type: 'job', kind: 'run', id: experimentId, status: 'cancelled', done: 0, total: 3 });
    await expect(t.api.cancelRun({ experimentId })).resolves.toEqual({ cancelled: false });
    expect(await t.api.activeRuns()).toEqual([]);
    // Resumable: the store lets another process claim it.
    expect(t.store.claimExperiment(experimentId).status).toBe('running');
  });

  it('refuses a second experiment on a model file in use (BUSY), then accepts it once the first ends', async () => {
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const first = await t.api.startRun(run());
    const err = await rejection(t.api.startRun(run()));
    expect(err.code).toBe('BUSY');
    expect(err.message).toContain(`model ${path.join(t.dir, 'models/tiny.gguf')} is in use by experiment ${first.experimentId}`);
    // Another model file may run beside it.
    const other = await t.api.startRun(run({ models: { default: path.join(t.dir, 'models/other.gguf') } }));
    open();
    await t.lab.runner.settled(first.experimentId);
    await t.lab.runner.settled(other.experimentId);
    const again = await t.api.startRun(run({ limit: 1 }));
    await t.lab.runner.settled(again.experimentId);
    expect(t.store.getExperiment(again.experimentId).status).toBe('completed');
  });

  it('reports a failing experiment as failed with its message', async () => {
    makeLab(answer4, { createProvider: async () => ({ ...new ScriptedProvider(answer4), name: 'x', generate: async () => { throw new Error('x'); }, modelsLoaded: () => 0, dispose: async () => { throw new Error('dispose fails too'); } }) });
    const { experimentId } = await t.api.startRun(run({ limit: 1 }));
    await t.lab.runner.settled(experimentId);
    // A throwing model is a failed node (infrastructure), not a failed experiment.
    expect(t.store.getExperiment(experimentId).status).toBe('completed');
    expect(t.store.listRuns(experimentId)[0]!.status).toBe('failed');
  });
});

describe('startRun: a model that breaks mid-run', () => {
  it('halts the experiment: failed with the reason, its tasks stay pending for `flowlab resume`', async () => {
    makeLab(async () => {
      throw new ModelError('MODEL_LOAD_FAILED', 'Failed to load model /m/tiny.gguf', '/m/tiny.gguf');
    });
    const { experimentId } = await t.api.startRun(run());
    await t.lab.runner.settled(experimentId);
    expect(t.store.getExperiment(experimentId).status).toBe('failed');
    expect(t.store.pendingTasks(experimentId)).toHaveLength(3);
    const end = t.events.at(-1)!;
    expect(end).toMatchObject({ type: 'experiment', experimentId, status: 'failed', done: 0, total: 3 });
    expect(end.type === 'experiment' && end.message).toContain('MODEL_LOAD_FAILED: Failed to load model /m/tiny.gguf');
  });
});

describe('startRun refuses what cannot start, with a clear message and field', () => {
  it.each<[string, Partial<StartRunRequest>, string, string | undefined, RegExp]>([
    ['an invalid workflow', { workflowText: 'name: bad\nroles: { a: { kind: planner } }\nnodes:\n  - { id: x, role: ghost }\n' }, 'BAD_REQUEST', 'workflowText', /^startRun: the workflow has \d+ issues?: <workflow>:4:.*ghost/],
    ['YAML that does not parse', { workflowText: 'name: [oops\n' }, 'BAD_REQUEST', 'workflowText', /startRun: the workflow has 1 issue: <workflow>:\d+.*\[YAML_SYNTAX\]/],
    ['an unknown dataset', { dataset: 'mnist' }, 'BAD_REQUEST', 'dataset', /startRun: unknown dataset 'mnist'; known datasets: (\S+, )*gsm8k, /],
    ['an unknown split', { split: 'dev' }, 'BAD_REQUEST', 'split', /startRun: gsm8k has no split 'dev'/],
    ['an offset past the split', { offset: 3 }, 'BAD_REQUEST', 'offset', /startRun: no tasks: gsm8k\/test has no task at offset 3/],
    ['a role without a model', { models: {} }, 'BAD_REQUEST', 'models.default', /startRun: role "solver" has no model/],
    ['a model for an unknown role', { models: { roles: { ghost: '/m/a.gguf' } } }, 'BAD_REQUEST', 'models.roles.ghost', /role "ghost", which the workflow does not have \(roles: solver\)/],
    ['a missing model file', { models: { default: '/nowhere/missing.gguf' } }, 'BAD_REQUEST', 'models.default', /^startRun: Model file not found: \/nowhere\/missing.gguf$/],
    ['a missing per-role model file', { models: { default: '/m/a.gguf', roles: { solver: '/nowhere/missing-b.gguf' } } }, 'BAD_REQUEST', 'models.roles.solver', /missing-b.gguf/],
    ['a malformed fault spec', { inject: ['solver=explode'] }, 'BAD_REQUEST', 'inject.0', /startRun: bad --inject "solver=explode": unknown kind "explode"/],
    ['a fault on an unknown role', { inject: ['solver=error', 'ghost=error@0.5'] }, 'BAD_REQUEST', 'inject.1', /inject "ghost=error@0.5" names role "ghost"/],
    ['a fault on an unknown node', { inject: ['node:nope=error'] }, 'BAD_REQUEST', 'inject.0', /names node "nope"/],
  ])('%s', async (_what, over, code, field, message) => {
    const err = await rejection(t.api.startRun(run(over)));
    expect([err.code, err.method, err.field]).toEqual([code, 'startRun', field]);
    expect(err.message).toMatch(message);
    expect(t.store.listExperiments()).toEqual([]);
    expect(t.events).toEqual([]);
  });

  it('dataset files absent: UNAVAILABLE naming where it looked', async () => {
    makeLab(answer4, { dataDir: path.join(t.dir, 'nodata') });
    const err = await rejection(t.api.startRun(run()));
    expect([err.code, err.field]).toEqual(['UNAVAILABLE', 'dataset']);
    expect(err.message).toContain(path.join(t.dir, 'nodata'));
  });

  it('a model that fails to load: nothing recorded, the model is free again', async () => {
    let fail = true;
    makeLab(answer4, {
      createProvider: async () => Object.assign(new ScriptedProvider(answer4), {
        load: async () => {
          if (fail) throw new Error('Failed to load model /m/x.gguf');
        },
      }),
    });
    const err = await rejection(t.api.startRun(run()));
    expect([err.code, err.field, err.message]).toEqual(['BAD_REQUEST', 'models', 'startRun: Failed to load model /m/x.gguf']);
    expect(t.store.listExperiments()).toEqual([]);
    fail = false;
    const { experimentId } = await t.api.startRun(run({ limit: 1 }));
    await t.lab.runner.settled(experimentId);
  });

  it('after dispose, startRun is UNAVAILABLE', async () => {
    await t.lab.dispose();
    expect((await rejection(t.api.startRun(run()))).code).toBe('UNAVAILABLE');
  });
});

describe('examples, datasets and the model catalogue', () => {
  it('lists the shipped examples with their names and text', async () => {
    const examples = await t.api.listExamples();
    expect(examples.map((e) => [e.file, e.name])).toEqual(expect.arrayContaining([
      ['examples/gsm8k-single.yaml', 'gsm8k-single'],
      ['examples/gsm8k-team.yaml', 'gsm8k-team'],
    ]));
    expect(examples.find((e) => e.name === 'gsm8k-team')!.text).toBe(TEAM);
  });

  it('lists an examples folder that is missing as empty', async () => {
    makeLab(answer4, { examplesDir: path.join(t.dir, 'none') });
    expect(await t.api.listExamples()).toEqual([]);
  });

  it('lists datasets with availability', async () => {
    const all = await t.api.listDatasets();
    const named = (list: typeof all, name: string) => list.find((d) => d.name === name);
    expect(all.map((d) => d.name)).toEqual([...all.map((d) => d.name)].sort());
    expect(named(all, 'gsm8k')).toEqual({ name: 'gsm8k', splits: ['test', 'train', 'test_socratic'], describe: 'GSM8K grade-school math (numeric final answer)', available: true });
    // The procedural learn families (core/tasks/learn.ts, learnDesign.ts, learnDesignZones.ts) need no files.
    expect(all.filter((d) => d.name.startsWith('learn')).map((d) => [d.name, d.available])).toEqual(['learn', 'learn-design', 'learn-design-judge', 'learn-design-ood', 'learn-errand', 'learn-json', 'learn-judge', 'learn-team', 'learn-tool', 'learn-unit', 'learn-word'].map((n) => [n, true]));
    // The code datasets (core/tasks/code.ts) are listed too, with their splits.
    expect(all.filter((d) => ['humaneval', 'mbpp'].includes(d.name)).map((d) => [d.name, d.splits])).toEqual([['humaneval', ['test']], ['mbpp', ['test', 'train', 'validation', 'prompt', 'all']]]);
    makeLab(answer4, { dataDir: path.join(t.dir, 'nodata') });
    const nodata = await t.api.listDatasets();
    const [gsm, learn] = [named(nodata, 'gsm8k'), named(nodata, 'learn')];
    expect(gsm!.available).toBe(false);
    expect(learn!.available).toBe(true);
    expect(gsm!.message).toContain(path.join(t.dir, 'nodata'));
  });

  it('lists folder models with metadata, errors for unreadable ones, and remembers added ones next to the db', async () => {
    mkdirSync(path.join(t.dir, 'models'));
    writeFileSync(path.join(t.dir, 'models/b.gguf'), 'GGUF....');
    writeFileSync(path.join(t.dir, 'models/junk.gguf'), 'junk');
    writeFileSync(path.join(t.dir, 'models/notes.txt'), 'x');
    const elsewhere = path.join(t.dir, 'elsewhere.gguf');
    writeFileSync(elsewhere, 'GGUF');
    const list = await t.api.listModels();
    expect(list.map((m) => [m.fileName, m.source, !!m.info, m.error ?? null])).toEqual([
      ['b.gguf', 'folder', true, null],
      ['junk.gguf', 'folder', false, expect.stringContaining('Not a GGUF file')],
    ]);
    expect(list[0]!.info).toEqual({ architecture: 'llama', fileType: 'F32', hasChatTemplate: false, parameters: 292800, contextLength: 2048 });

    await expect(t.api.addModel({ path: elsewhere })).resolves.toMatchObject({ path: elsewhere, source: 'added', sizeBytes: 4 });
    await expect(t.api.addModel({ path: elsewhere })).resolves.toMatchObject({ source: 'added' }); // no duplicate
    await expect(t.api.addModel({ path: path.join(t.dir, 'models/b.gguf') })).resolves.toMatchObject({ source: 'folder' });
    const junk = await rejection(t.api.addModel({ path: path.join(t.dir, 'models/junk.gguf') }));
    expect([junk.code, junk.field]).toEqual(['BAD_REQUEST', 'path']);
    expect(junk.message).toMatch(/^addModel: Not a GGUF file: /);

    expect(JSON.parse(readFileSync(path.join(t.dir, 'lab.db.models.json'), 'utf8'))).toEqual({ version: 1, added: [elsewhere] });
    makeLab(); // a new host over the same db sees the added model
    expect((await t.api.listModels()).map((m) => [m.fileName, m.source])).toEqual([['b.gguf', 'folder'], ['junk.gguf', 'folder'], ['elsewhere.gguf', 'added']]);
  });
});
