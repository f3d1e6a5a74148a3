/**
 * The one job model through the lab host (issue 28, part 3): every family — an experiment run,
 * a train loop, a MASS evolve, a study, a model download — announces each job with the one `job`
 * event (its registered kind, the family's own id), `running` first and `completed` /
 * `cancelled` last, beside its own detail events; `listJobs` lists it while it runs and
 * `cancelJob({kind, id})` stops it. No model: the scripted provider of labHost.test.ts (answers
 * 4), the SIMULATED provider of core/mass/rsi.fixture.ts, the seed provider and fake trainer of
 * core/training/killed.fixture.ts, a loopback HTTP server for the download.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobEvent, LabEvent } from '../core/api/index.ts';
import { scripted } from '../core/mass/rsi.fixture.ts';
import { ScriptedProvider, type ModelConfig, type ModelProvider } from '../core/model/index.ts';
import { FakeTrainer, SeedProvider } from '../core/training/killed.fixture.ts';
import { fakeModelFile, labHostOptions, labPerTest, REPO_ROOT, writeGsm8kTasks } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';
import { JOB_PROGRESS_EVERY_MS, RunningJobs } from './jobs.ts';

/** While set, every model call (and the download's second half) waits for it. */
let gate: Promise<void> | null = null;
let open: () => void = () => {};
const hold = () => {
  gate = new Promise((r) => (open = r));
};
const release = () => {
  open();
  gate = null;
};

/** The provider of the test's family. */
let providerOf: (cfg: ModelConfig) => ModelProvider;
const answers4 = new ScriptedProvider(async () => '{"answer": 4}');

let model: string;
const t = labPerTest('job-events', (h) => {
  writeGsm8kTasks(path.join(h.dir, 'data'));
  model = fakeModelFile(h.dir);
  gate = null;
  return createLabHost({
    ...labHostOptions(h), dataDir: path.join(h.dir, 'data'),
    createProvider: async (cfg) => {
      const inner = providerOf(cfg);
      return { name: inner.name, modelsLoaded: () => 0, dispose: () => inner.dispose(), generate: async (r) => (await gate, inner.generate(r)) };
    },
    loadTrainer: async () => new FakeTrainer(),
    llamaBinary: () => ({ ok: true }) as never,
    downloads: { allowPrivateHosts: true },
  });
});

// A loopback file server: 64 KiB, the second half sent once the gate opens.
const BODY = Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 31) % 251));
let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-length': BODY.length });
    res.write(BODY.subarray(0, 1024));
    void (gate ?? Promise.resolve()).then(() => res.end(BODY.subarray(1024)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => {
  server.closeAllConnections();
  server.close(() => resolve());
}));

const jobEvents = (kind: string, id: string) => t.events.filter((e): e is JobEvent => e.type === 'job' && e.kind === kind && e.id === id);
const closed = (kind: string, id: string) => jobEvents(kind, id).find((e) => e.status !== 'running');

/** Starts a held job; checks it is listed while it runs; lets it finish; returns its `job` events (running first, completed last). */
async function runsToTheEnd(kind: string, start: () => Promise<string>): Promise<JobEvent[]> {
  hold();
  const id = await start();
  await expect.poll(async () => (await t.api.listJobs()).map((j) => [j.kind, j.id, j.status])).toEqual([[kind, id, 'running']]);
  const listed = (await t.api.listJobs())[0]!;
  expect(listed.startedAt).toBeGreaterThan(Date.now() - 60_000);
  release();
  await expect.poll(() => closed(kind, id), { timeout: 30_000 }).toBeDefined();
  const mine = jobEvents(kind, id);
  expect(mine.map((e) => e.status)).toEqual([...mine.slice(0, -1).map(() => 'running'), 'completed']);
  expect(await t.api.listJobs()).toEqual([]);
  return mine;
}

/** Starts a held job, cancels it through `cancelJob({kind, id})`; it closes `cancelled` and leaves the list. */
async function isCancelled(kind: string, start: () => Promise<string>): Promise<string> {
  hold();
  const id = await start();
  await expect.poll(async () => (await t.api.listJobs()).map((j) => `${j.kind}:${j.id}`)).toEqual([`${kind}:${id}`]);
  const cancelling = t.api.cancelJob({ kind, id });
  release();
  await expect(cancelling).resolves.toEqual({ cancelled: true });
  expect(jobEvents(kind, id).at(-1)).toMatchObject({ type: 'job', kind, id, status: 'cancelled' });
  expect(await t.api.listJobs()).toEqual([]);
  await expect(t.api.cancelJob({ kind, id })).resolves.toEqual({ cancelled: false });
  return id;
}

/** The index of the first event matching `p`. */
const at = (p: (e: LabEvent) => boolean) => t.events.findIndex(p);

describe('every family announces its jobs with the one job event, listed while they run, cancelled by kind and id', () => {
  it('an experiment run: kind `run`, its experiment id, runs done of tasks', async () => {
    providerOf = () => answers4;
    const SINGLE = readFileSync(path.join(REPO_ROOT, 'examples/gsm8k-single.yaml'), 'utf8');
    const start = async () => (await t.api.startRun({ workflowText: SINGLE, dataset: 'gsm8k', split: 'test', limit: 3, seed: 1, models: { default: model } })).experimentId;
    const events = await runsToTheEnd('run', start);
    const id = events[0]!.id;
    expect(events[0]).toEqual({ type: 'job', kind: 'run', id, status: 'running', done: 0, total: 3 });
    // 2+2, 1+2, 2*2 answered 4: two correct.
    expect(events.at(-1)).toEqual({ type: 'job', kind: 'run', id, status: 'completed', done: 3, total: 3, summary: '2 correct of 3 runs' });
    // Inside the family's own pair: after its `running`, before its `completed`.
    expect(at((e) => e === events[0])).toBe(at((e) => e.type === 'experiment' && e.status === 'running') + 1);
    expect(at((e) => e === events.at(-1))).toBe(at((e) => e.type === 'experiment' && e.status === 'completed') - 1);
    const cancelled = await isCancelled('run', start);
    expect(t.store.getExperiment(cancelled).status).toBe('cancelled');
  });

  it('a train loop: kind `train-loop`, its loop id, iterations done of planned', async () => {
    providerOf = (cfg) => new SeedProvider(cfg);
    const LEARN = readFileSync(path.join(REPO_ROOT, 'examples/workshop-learn.yaml'), 'utf8');
    const start = async () => (await t.api.startTrainLoop({ workflowText: LEARN, dataset: 'learn-team', roles: ['planner', 'solver'], models: { default: model }, iterations: 1, group: 2, limit: 2, heldout: 0 })).loopId;
    const events = await runsToTheEnd('train-loop', start);
    const id = events[0]!.id;
    expect(events[0]).toEqual({ type: 'job', kind: 'train-loop', id, status: 'running', done: 0, total: 1 });
    expect(events.at(-1)).toMatchObject({ type: 'job', kind: 'train-loop', id, status: 'completed', done: 1, total: 1, summary: expect.stringMatching(/^iteration 1: score \d\.\d{3}$/) });
    expect(t.events.filter((e) => e.type === 'trainLoop' && e.loopId === id).map((e) => e.type === 'trainLoop' && e.status)).toEqual(['running', 'completed']);
    await isCancelled('train-loop', start);
  }, 60_000);

  it('a MASS evolve: kind `evolve`, its job id, steps done of planned and the last progress line', async () => {
    providerOf = (cfg) => scripted(cfg.models['default'] ?? '');
    const events = await runsToTheEnd('evolve', async () => (await t.api.startEvolve({ dataset: 'learn-tool', model, iterations: 1, id: 'evo-a' })).jobId);
    expect(events[0]).toEqual({ type: 'job', kind: 'evolve', id: 'evo-a', status: 'running' });
    expect(events.at(-1)).toMatchObject({ type: 'job', kind: 'evolve', id: 'evo-a', status: 'completed', done: 1, total: 1, summary: expect.stringMatching(/^task 0: done, 1 version\(s\), champion /) });
    await isCancelled('evolve', async () => (await t.api.startEvolve({ dataset: 'learn-tool', model, iterations: 1, id: 'evo-b' })).jobId);
  }, 60_000);

  it('a study: kind `study`, its study id, cells done of cells', async () => {
    providerOf = (cfg) => scripted(cfg.models['default'] ?? '');
    const plan = (limit: number) => `name: tiny${limit}\nbaseline: single\nconditions:\n  - { id: single, kind: single-agent, workflow: single-agent.yaml }\nzones:\n  - { id: id, kind: in-distribution, dataset: learn-design, split: heldout, limit: ${limit} }\nseeds: [0]\nmodels:\n  - { id: m, model: ${model}, threads: 1 }\n`;
    const events = await runsToTheEnd('study', async () => (await t.api.startStudy({ planText: plan(2) })).studyId);
    const id = events[0]!.id;
    expect(events[0]).toEqual({ type: 'job', kind: 'study', id, status: 'running' });
    expect(events.at(-1)).toMatchObject({ type: 'job', kind: 'study', id, status: 'completed', done: 1, total: 1, summary: expect.stringMatching(/^Status: completed\. CSV and HTML: /) });
    await isCancelled('study', async () => (await t.api.startStudy({ planText: plan(3) })).studyId);
  }, 60_000);

  it('a model download: kind `download`, its download id, bytes done of total, the file name', async () => {
    const events = await runsToTheEnd('download', async () => (await t.api.startDownload({ source: `${base}/a.gguf`, sizeBytes: BODY.length })).downloadId);
    const id = events[0]!.id;
    expect(events[0]).toEqual({ type: 'job', kind: 'download', id, status: 'running', done: 0, total: BODY.length, summary: 'a.gguf' });
    expect(events.at(-1)).toEqual({ type: 'job', kind: 'download', id, status: 'completed', done: BODY.length, total: BODY.length, summary: 'a.gguf' });
    const cancelled = await isCancelled('download', async () => (await t.api.startDownload({ source: `${base}/b.gguf` })).downloadId);
    expect(jobEvents('download', cancelled).at(-1)!.message).toBe('Cancelled. Start the same download again to resume where it stopped.');
  });
});

describe('RunningJobs (host/jobs.ts)', () => {
  it('throttles progress to one event per window, leading and trailing; closing is sent at once and ends the timer', async () => {
    const sent: JobEvent[] = [];
    const jobs = new RunningJobs((e) => sent.push(e));
    const report = jobs.open({ kind: 'k', id: 'a', cancel: async () => ({ cancelled: true }), progress: { total: 10 } });
    for (let done = 1; done <= 5; done++) report.progress({ done });
    // Only `running` at open (0 of 10 not said: no done yet); the five updates wait for the window's end.
    expect(sent).toEqual([{ type: 'job', kind: 'k', id: 'a', status: 'running', total: 10 }]);
    await new Promise((r) => setTimeout(r, JOB_PROGRESS_EVERY_MS + 50));
    expect(sent.at(-1)).toEqual({ type: 'job', kind: 'k', id: 'a', status: 'running', done: 5, total: 10 });
    expect(sent).toHaveLength(2);
    report.progress({ done: 6, summary: 'x'.repeat(500) });
    report.close('failed', 'y'.repeat(2500));
    expect(sent).toHaveLength(3);
    expect(sent[2]).toEqual({ type: 'job', kind: 'k', id: 'a', status: 'failed', done: 6, total: 10, summary: 'x'.repeat(400), message: 'y'.repeat(2000) });
    await new Promise((r) => setTimeout(r, JOB_PROGRESS_EVERY_MS + 50));
    expect(sent).toHaveLength(3);
    expect(jobs.list()).toEqual([]);
  });

  it('lists jobs oldest first; cancel goes to the job\'s family; a second open of one kind and id throws', async () => {
    const jobs = new RunningJobs(() => {});
    const cancelled: string[] = [];
    jobs.open({ kind: 'run', id: 'e1', cancel: async () => (cancelled.push('e1'), { cancelled: true }) });
    jobs.open({ kind: 'download', id: 'e1', cancel: async () => (cancelled.push('dl'), { cancelled: true }), progress: { done: 3, total: 9 } });
    expect(jobs.list().map((j) => [j.kind, j.id, j.done, j.total])).toEqual([['run', 'e1', undefined, undefined], ['download', 'e1', 3, 9]]);
    expect(() => jobs.open({ kind: 'run', id: 'e1', cancel: async () => ({ cancelled: true }) })).toThrow('RunningJobs.open: run:e1 is running already');
    await expect(jobs.cancel('download', 'e1')).resolves.toEqual({ cancelled: true });
    await expect(jobs.cancel('study', 'e1')).resolves.toEqual({ cancelled: false });
    expect(cancelled).toEqual(['dl']);
  });
});
