/**
 * The lab's resume of a train loop (`resumeRun` given a loop id or one of its experiments'):
 * a real child process runs a loop with the fake trainer and provider of
 * core/training/killed.fixture.ts and is SIGKILLed between a version file's rename and its
 * record; the lab then continues it to its planned iteration with the same loop id and lineage.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers, type FlowlabApi, type LabEvent } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { FakeTrainer, SeedProvider } from '../core/training/killed.fixture.ts';
import { loopDebris } from '../core/training/index.ts';
import { rejectionOf } from '../test/fixtures.ts';
import { createLabHost, type LabHostHandle } from './index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
let dir: string;
let store: Store;
let events: LabEvent[];
let lab: LabHostHandle;
let api: FlowlabApi;
const loopId = 'tl-lab-resume';

beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'flowlab-lab-resume-'));
  const env = { ...process.env, FLOWLAB_TEST_KILL_AT: 'version-file-written@3' };
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'core/training/killed.fixture.ts', 'start', path.join(dir, 'lab.db'), path.join(dir, 'v'), loopId, '3'], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  expect(r.signal).toBe('SIGKILL');
  store = openStore(path.join(dir, 'lab.db'));
  events = [];
  lab = createLabHost({
    store, dbFile: path.join(dir, 'lab.db'), modelDir: dir, examplesDir: path.join(ROOT, 'examples'), dataDir: path.join(dir, 'data'),
    emit: (e) => events.push(e),
    createProvider: async (cfg) => new SeedProvider(cfg),
    loadTrainer: async () => new FakeTrainer(),
  });
  api = createHandlers({ store, version: 't', lab });
});
afterEach(async () => {
  await lab.dispose();
  store.close();
});

describe('resumeRun on a train loop', () => {
  it('continues an interrupted loop from its last complete iteration, by loop id or by an experiment of it', async () => {
    expect(store.trainLoops.get(loopId)).toMatchObject({ status: 'interrupted', done: 1 });
    const anExperiment = store.trainLoops.experimentsOf(loopId).find((e) => e.iteration === 2)!.id;
    await expect(api.resumeRun({ experimentId: anExperiment })).resolves.toEqual({ experimentId: anExperiment, pending: 2, loopId });
    await lab.runner.trainLoopSettled(loopId);
    const loopEvents = events.filter((e) => e.type === 'trainLoop');
    expect(loopEvents.map((e) => [e.status, e.done, e.iterations])).toEqual([['running', 1, 3], ['completed', 3, 3]]);
    expect(events.filter((e) => e.type === 'trainIteration').map((e) => e.iteration)).toEqual([2, 3]);
    const loop = store.trainLoops.get(loopId);
    expect([loop.status, loop.done]).toEqual(['completed', 3]);
    for (const role of ['planner', 'solver']) {
      const chain = store.weights.list({ role }).filter((v) => v.hyper['loopId'] === loopId);
      expect(chain.map((v) => v.iteration)).toEqual([1, 2, 3]);
      chain.slice(1).forEach((v, i) => expect(v.parentId).toBe(chain[i]!.id));
    }
    // The iteration-2 rollouts stored before the kill were trained on, not sampled again.
    expect(store.trainLoops.experimentsOf(loopId).filter((e) => e.iteration === 2).map((e) => e.id)).toEqual([anExperiment]);
    expect(loopDebris(path.join(dir, 'v'), loopId, new Set(store.weights.list().map((v) => v.path)))).toEqual({ temps: [], unrecorded: [] });
    // Done: nothing more to resume.
    await expect(api.resumeRun({ experimentId: loopId })).resolves.toEqual({ experimentId: loopId, pending: 0, loopId });
  });

  it('an unknown id is NOT_FOUND; a loop running here is BUSY', async () => {
    expect((await rejectionOf(ApiError, api.resumeRun({ experimentId: 'tl-nope' }))).code).toBe('NOT_FOUND');
    await api.resumeRun({ experimentId: loopId });
    const busy = await rejectionOf(ApiError, api.resumeRun({ experimentId: loopId }));
    expect([busy.code, busy.message]).toEqual(['BUSY', `resumeRun: train loop ${loopId} is running here`]);
    await lab.runner.trainLoopSettled(loopId);
  });
});
