/**
 * A served lab (`flowlab serve`: a confined host, host/modelPaths.ts) must never make the host
 * send an API key from its environment or keychain to a server a page names. An endpoint
 * reference with `key=<ENV>` (`openai:<base>#<model>&key=ENV`, core/model/endpoint.ts) makes the
 * host read `process.env[ENV]` and send it as `Authorization: Bearer`. The witness is a loopback
 * OpenAI-compatible server that records the Authorization header of every request; the test puts
 * a fresh random key in `process.env` and checks, for every way a page can name a model, that a
 * confined host refuses it (FORBIDDEN naming the field, or the payload schema's BAD_REQUEST where
 * a field takes only absolute file paths) and that the witness never receives the key. The
 * unconfined host (the desktop app) is the control: the same run sends the key, so the witness
 * would see a leak. Every call goes through the API handlers the browser host serves.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers, type FlowlabApi, type LabEvent, type StartRunRequest } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { fakeModelFile, labHostOptions, rejectionOf, tempDir, writeGsm8kTasks, type LabTest } from '../test/fixtures.ts';
import { createLabHost, type LabHostHandle } from './index.ts';
import { WorkflowFolder } from './workflowFiles.ts';

const KEY_ENV = 'FLOWLAB_TEST_WITNESS_KEY';

/** A loopback OpenAI-compatible server answering `{"answer": 4}`, recording each request's Authorization header ('' when none). */
interface Witness {
  base: string;
  auth: string[];
  close(): Promise<void>;
}

async function startWitness(): Promise<Witness> {
  const auth: string[] = [];
  const server: Server = createServer((req, res) => {
    auth.push(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.url?.endsWith('/models')) return res.end(JSON.stringify({ object: 'list', data: [{ id: 'm', object: 'model' }] }));
      res.end(JSON.stringify({
        id: 'c1', object: 'chat.completion', created: 0, model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: '{"answer": 4}' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
      }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { base: `http://127.0.0.1:${port}/v1`, auth, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const workflow = (modelPath?: string) =>
  `name: one\n${modelPath ? `models:\n  default: { path: ${JSON.stringify(modelPath)} }\n` : ''}roles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\n    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } }\nanswer: solve.answer\n`;

let dir: string;
let store: Store;
let events: LabEvent[];
let witness: Witness;
let key: string;
const labs: LabHostHandle[] = [];
/** The endpoint reference that sends `$KEY_ENV`, and the same endpoint without a key. */
let keyed: string;
let plain: string;

/** A lab over the test's store: `confined` as `flowlab serve` runs it (no model folders beyond its own), else as the desktop app. */
function lab(confined: boolean): { lab: LabHostHandle; api: FlowlabApi } {
  const t = { dir, store, events } as unknown as LabTest;
  const host = createLabHost({
    ...labHostOptions(t),
    dataDir: path.join(dir, 'data'),
    llamaBinary: () => ({ ok: true }) as never,
    loadTrainer: () => Promise.reject(new Error('no trainer in this test')),
    // The desktop app's lab checks model files for real (a GGUF header read); an endpoint has none to read.
    ...(confined ? { modelRoots: { folders: [] } } : { checkModel: undefined }),
  });
  labs.push(host);
  return { lab: host, api: createHandlers({ store, version: 't', lab: host }) };
}

const run = (over: Partial<StartRunRequest> = {}): StartRunRequest => ({ workflowText: workflow(keyed), dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: {}, ...over });

/** Runs one task on the keyed endpoint in the desktop app (unconfined) and returns the stored experiment and run; the witness log is cleared after. */
async function storedKeyedRun(): Promise<{ experimentId: string; runId: string }> {
  const desktop = lab(false);
  const { experimentId } = await desktop.api.startRun(run());
  await desktop.lab.runner.settled(experimentId);
  const runId = store.listRuns(experimentId)[0]!.runId;
  expect(witness.auth).toContain(`Bearer ${key}`);
  witness.auth.length = 0;
  return { experimentId, runId };
}

/** Expects `p` to be refused with `code` naming `field` (and, for FORBIDDEN, saying why), the witness having received no key. */
async function refused(p: Promise<unknown>, code: 'FORBIDDEN' | 'BAD_REQUEST', field: string): Promise<ApiError> {
  const err = await rejectionOf(ApiError, p);
  expect([err.code, err.field], err.message).toEqual([code, field]);
  if (code === 'FORBIDDEN') expect(err.message).toContain('with key= or keychain=: this served lab does not send API keys');
  else expect(err.message).toContain('must be an absolute path');
  expect(err.message).not.toContain(key);
  return err;
}

beforeEach(async () => {
  dir = tempDir('keys');
  mkdirSync(path.join(dir, 'models'));
  writeGsm8kTasks(path.join(dir, 'data'));
  store = openStore(path.join(dir, 'lab.db'));
  events = [];
  witness = await startWitness();
  key = `sk-witness-${randomBytes(12).toString('hex')}`;
  process.env[KEY_ENV] = key;
  keyed = `openai:${witness.base}#m&key=${KEY_ENV}&retries=0`;
  plain = `openai:${witness.base}#m&retries=0`;
});

afterEach(async () => {
  for (const l of labs.splice(0)) await l.dispose();
  delete process.env[KEY_ENV];
  await witness.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the desktop app (unconfined) keeps sending keys', () => {
  it('a run on a keyed endpoint sends the key from the environment as Authorization: Bearer', async () => {
    await storedKeyedRun(); // asserts the witness saw `Bearer <key>`
    expect(events.some((e) => e.type === 'experiment' && e.status === 'completed')).toBe(true);
  });
});

describe('a served lab refuses a keyed endpoint however a page names it, and the key never leaves', () => {
  afterEach(() => {
    expect(witness.auth.filter((a) => a.includes(key))).toEqual([]);
  });

  it('fields that take a model: the playground by the host rule; the others take absolute file paths only (payload schema)', async () => {
    const { api } = lab(true);
    await refused(api.startGeneration({ model: keyed, prompt: 'x', maxTokens: 4 }), 'FORBIDDEN', 'model');
    const model = fakeModelFile(dir);
    await refused(api.startRun(run({ workflowText: workflow(), models: { default: keyed } })), 'BAD_REQUEST', 'models.default');
    await refused(api.startRun(run({ workflowText: workflow(), models: { default: model, roles: { solver: keyed } } })), 'BAD_REQUEST', 'models.roles.solver');
    await refused(api.resumeRun({ experimentId: 'x', models: { default: keyed } }), 'BAD_REQUEST', 'models.default');
    await refused(api.startTrainLoop({ workflowText: workflow(), dataset: 'gsm8k', models: { default: keyed } }), 'BAD_REQUEST', 'models.default');
    await refused(api.startEvolve({ dataset: 'gsm8k', model: keyed }), 'BAD_REQUEST', 'model');
    await refused(api.startRank({ dataset: 'gsm8k', model: keyed }), 'BAD_REQUEST', 'model');
    await refused(api.startRsi({ dataset: 'gsm8k', model: keyed }), 'BAD_REQUEST', 'model');
    await refused(api.startStudy({ planName: 'laptop.yaml', model: keyed }), 'BAD_REQUEST', 'model');
    await refused(api.forkRun({ runId: 'x/0', nodeId: 'solve', roleModel: { role: 'solver', path: keyed } }), 'BAD_REQUEST', 'roleModel.path');
    await refused(api.distillCard({ experimentId: 'x', role: 'solver', teacher: keyed }), 'BAD_REQUEST', 'teacher');
    expect(witness.auth).toEqual([]);
  });

  it("a workflow document's models: section, sent with startRun or startTrainLoop", async () => {
    const { api } = lab(true);
    await refused(api.startRun(run()), 'FORBIDDEN', 'workflowText');
    await refused(api.startRun(run({ workflowText: workflow(`openai:${witness.base}#m&keychain=openai/me`) })), 'FORBIDDEN', 'workflowText');
    await refused(api.startTrainLoop({ workflowText: workflow(keyed), dataset: 'gsm8k', split: 'test', heldoutSplit: 'test', models: {} }), 'FORBIDDEN', 'workflowText');
    // The key is refused on any endpoint of a cluster reference.
    await refused(api.startRun(run({ workflowText: workflow(`${plain},${witness.base}#m&key=${KEY_ENV}`) })), 'FORBIDDEN', 'workflowText');
    expect(witness.auth).toEqual([]);
  });

  it('a workflow saved through the API and named by a pasted study plan', async () => {
    const { api } = lab(true);
    await api.saveWorkflowFile({ name: 'keyed.yaml', text: workflow(keyed).replace('{{task.question}}', '{{task.request}}') });
    const saved = path.join(WorkflowFolder.beside(path.join(dir, 'lab.db')), 'keyed.yaml');
    const plan = `name: keyed\nbaseline: one\nconditions:\n  - { id: one, kind: single-agent, workflow: ${JSON.stringify(saved)} }\nzones:\n  - { id: id, kind: in-distribution, dataset: learn-design, split: heldout, limit: 1 }\nseeds: [0]\nmodels:\n  - { id: m, model: ${JSON.stringify(fakeModelFile(dir))} }\n`;
    await refused(api.startStudy({ planText: plan, dryRun: false }), 'FORBIDDEN', 'planText');
    await refused(api.startStudy({ planText: plan.replace(/model: ".*"/, `model: ${JSON.stringify(keyed)}`) }), 'FORBIDDEN', 'planText');
    expect(witness.auth).toEqual([]);
  });

  it('a stored run recorded on a keyed endpoint: resumeRun, resumeJob and distillCard', async () => {
    const { experimentId } = await storedKeyedRun();
    const { api } = lab(true);
    await refused(api.resumeRun({ experimentId, force: true }), 'FORBIDDEN', 'experimentId');
    await refused(api.resumeJob({ kind: 'run', id: experimentId }), 'FORBIDDEN', 'experimentId');
    await refused(api.distillCard({ experimentId, role: 'solver' }), 'FORBIDDEN', 'experimentId');
    expect(witness.auth).toEqual([]);
  });

  it('a stored run recorded on a keyed endpoint: forkRun (its live part would call the endpoint)', async () => {
    const { runId } = await storedKeyedRun();
    const { api } = lab(true);
    await refused(api.forkRun({ runId, nodeId: 'solve', seed: 7 }), 'FORBIDDEN', 'runId');
    expect(witness.auth).toEqual([]);
  });

  it("a stored train loop whose plan's model is a keyed endpoint: resumeRun and resumeJob", async () => {
    const plan = {
      workflow: { text: workflow() }, roles: ['solver'], startVersions: {}, models: { models: { default: keyed }, roleModels: { solver: 'default' }, gpu: false }, dataset: 'gsm8k', split: 'test', heldoutSplit: 'test', heldout: 0,
      maxGradNorm: 1, group: 2, iterations: 1, tasksPerIteration: 1, lr: 3e-4, kl: 0.02, temperature: 1, heldoutSamples: 1, heldoutTemperature: 1, seed: 0,
    };
    store.trainLoops.create({ id: 'tl-keyed', iterations: 1, versionsDir: path.join(dir, 'versions'), plan, state: {} });
    const { api } = lab(true);
    await refused(api.resumeRun({ experimentId: 'tl-keyed', force: true }), 'FORBIDDEN', 'experimentId');
    await refused(api.resumeJob({ kind: 'train-loop', id: 'tl-keyed' }), 'FORBIDDEN', 'experimentId');
    expect(witness.auth).toEqual([]);
  });

  it('startJob cannot start a model job: the kinds that load models start through their own methods', async () => {
    const { api } = lab(true);
    const err = await rejectionOf(ApiError, api.startJob({ kind: 'run', spec: { workflow: { text: workflow(keyed) }, dataset: 'gsm8k', models: { models: { default: keyed } } } }));
    expect([err.code, err.message]).toEqual(['BAD_REQUEST', expect.stringContaining('start it with startRun')]);
    expect(witness.auth).toEqual([]);
  });
});

describe('a served lab calls a plain endpoint (no key) a page names, sending no credential', () => {
  it('a run whose workflow names a plain endpoint completes, with no Authorization header', async () => {
    const { lab: host, api } = lab(true);
    const { experimentId } = await api.startRun(run({ workflowText: workflow(plain) }));
    await host.runner.settled(experimentId);
    expect(store.getExperiment(experimentId).status).toBe('completed');
    expect(store.listRuns(experimentId).map((r) => r.correct)).toEqual([true]);
    expect(witness.auth.length).toBeGreaterThan(0);
    expect(new Set(witness.auth)).toEqual(new Set(['']));
  });
});
