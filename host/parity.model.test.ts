/**
 * The two faces of one experiment service: a hint-card run, a role-LoRA run and a role-version
 * run started from the lab API (the browser host's LabHost behind createHandlers) behave exactly
 * as the same `flowlab run` commands: the same stored experiment config (but for `workflowFile`,
 * which only a file has, and `source: 'lab'`), the same completions per node and call with the
 * same seeds, the same card uses. Uses the tiny real model (stories260K.gguf) and the GSM8K data;
 * skipped, saying why, where they are absent.
 */
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers, type FlowlabApi, type StartRunRequest } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { main } from '../cli/main.ts';
import { makeLoraAdapter, readLoraBase, writeGguf } from '../models/gguf/index.ts';
import { haveShared, shared, tinyModel } from '../test/cli.ts';
import { createLabHost, type LabHostHandle } from './index.ts';

if (!haveShared) console.log(`[host/parity.model.test] skipping the CLI/lab parity tests: ${tinyModel} or the GSM8K data is absent (set FLOWLAB_SHARED to the shared folder)`);

const ROOT = path.resolve(import.meta.dirname, '..');
const WORKFLOW = path.join(ROOT, 'examples/gsm8k-team.yaml');
const TEAM = readFileSync(WORKFLOW, 'utf8');
const DATA = path.join(shared, 'data');

let dir: string;
let db: string;
let store: Store;
let lab: LabHostHandle;
let api: FlowlabApi;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'flowlab-parity-'));
  db = path.join(dir, 'parity.db');
  store = openStore(db);
  lab = createLabHost({ store, dbFile: db, modelDir: path.join(dir, 'models'), examplesDir: path.join(ROOT, 'examples'), sharedDir: shared, emit: () => {} });
  api = createHandlers({ store, version: 't', lab });
});
afterAll(async () => {
  await lab?.dispose();
  store?.close();
});

/** `flowlab run` of the team workflow on 2 GSM8K tasks, seed 3, plus `extra` flags; returns the experiment id. */
async function cliRun(extra: string[]): Promise<string> {
  const io = { out: '', err: '', isTTY: false, stdout: (s: string) => void (io.out += s), stderr: (s: string) => void (io.err += s) };
  const code = await main(['run', WORKFLOW, '--dataset', 'gsm8k', '--limit', '2', '--seed', '3', '--model', tinyModel, '--data-dir', DATA, '--db', db, '--json', ...extra], io);
  expect(code, io.err).toBe(0);
  return JSON.parse(io.out).experimentId as string;
}

/** The same run through the lab API, plus `extra` request fields; resolves once it has ended. */
async function labRun(extra: Partial<StartRunRequest>): Promise<string> {
  const { experimentId } = await api.startRun({ workflowText: TEAM, dataset: 'gsm8k', split: 'test', limit: 2, seed: 3, models: { default: tinyModel }, ...extra });
  await lab.runner.settled(experimentId);
  expect(store.getExperiment(experimentId).status).toBe('completed');
  return experimentId;
}

/** What must match: the experiment record, every model call (no timings), the card uses per task. */
function observed(id: string) {
  const exp = store.getExperiment(id);
  const { workflowFile: _f, source: _s, ...config } = exp.config!;
  const calls = store.getExperimentCalls(id).map((c) => ({ task: c.taskIndex, node: c.nodeId, attempt: c.attempt, call: c.callIndex, role: c.role, modelRef: c.modelRef, model: c.model, system: c.system, prompt: c.prompt, params: c.params, seed: c.seed, completion: c.completion }));
  const uses = store.improve.listCards().map((card) => [card.id, store.improve.usesOf(card.id).filter((runId) => runId.startsWith(`${id}/`)).map((runId) => Number(runId.slice(id.length + 1))).sort()]);
  return { kind: exp.kind, workflowYaml: exp.workflowYaml, dataset: exp.dataset, split: exp.split, limit: exp.limit, seed: exp.seed, tasks: store.listTasks(id).map((t) => t.taskId), config, calls, uses };
}

/** Runs both faces and checks they observed the same; returns the lab side for further checks. */
async function same(flags: string[], request: Partial<StartRunRequest>) {
  const fromCli = observed(await cliRun(flags));
  const labId = await labRun(request);
  const fromLab = observed(labId);
  expect(fromLab).toEqual(fromCli);
  expect(store.getExperiment(labId).config?.source).toBe('lab');
  expect(fromLab.calls.length).toBeGreaterThan(0);
  return fromLab;
}

describe.skipIf(!haveShared)('the lab API and the CLI run the same experiment (tiny real model)', () => {
  it('hint cards: --cards <id> --card-budget 64 == cards: [id], cardBudget: 64 (same config, prompts, completions, card uses)', async () => {
    const id = 'card-20250101-000000-pari';
    store.improve.saveCard({
      id, role: 'solver', title: 'Write one expression', appliesWhen: 'a word problem', advice: 'Combine the quantities in a single arithmetic expression.', sourceRuns: [],
      teacher: 'hand-written', shots: 0, onlySuccesses: true, simulated: false, createdAt: 1_700_000_000_000,
    });
    const seen = await same(['--cards', id, '--card-budget', '64'], { cards: [id], cardBudget: 64 });
    expect(seen.config).toMatchObject({ cards: { selection: [id], ids: [id], budgetTokens: 64 } });
    expect(seen.calls.filter((c) => c.role === 'solver').every((c) => c.system?.includes('Write one expression'))).toBe(true);
    // Each face's two runs used the card once per task.
    expect(store.improve.usesOf(id)).toHaveLength(4);
  });

  it('role LoRA: --role-lora solver=zero.gguf@0.5 == roleLora: {solver: [{path, scale: 0.5}]}', async () => {
    const zero = path.join(dir, 'zero.gguf');
    await writeGguf(zero, makeLoraAdapter(await readLoraBase(tinyModel), { rank: 4 }));
    const seen = await same(['--role-lora', `solver=${zero}@0.5`], { roleLora: { solver: [{ path: zero, scale: 0.5 }] } });
    expect(seen.config).toMatchObject({ models: { roleModels: { solver: 'role:solver', planner: 'default' }, loras: { 'role:solver': [{ path: zero, scale: 0.5 }] } } });
    expect(new Set(seen.calls.filter((c) => c.role === 'solver').map((c) => c.modelRef))).toEqual(new Set(['role:solver']));
  });

  it('role version: --role-version solver=<id> == roleVersions: {solver: id}', async () => {
    const file = path.join(dir, 'solver-v1.gguf');
    copyFileSync(tinyModel, file);
    const v = store.weights.save({ role: 'solver', basePath: tinyModel, path: file, hyper: {}, metrics: {} });
    const seen = await same(['--role-version', `solver=${v.id}`], { roleVersions: { solver: v.id } });
    expect(seen.config).toMatchObject({ roleVersions: [`solver=${v.id}`], models: { models: { 'role:solver': file }, roleModels: { solver: 'role:solver' } } });
    expect(new Set(seen.calls.filter((c) => c.role === 'solver').map((c) => c.model))).toEqual(new Set(['solver-v1.gguf']));
  });

  it('a lab experiment with hint cards replays with the CLI: every node matches', async () => {
    const labId = await labRun({ cards: 'all', cardBudget: 64 });
    const io = { out: '', err: '', isTTY: false, stdout: (s: string) => void (io.out += s), stderr: (s: string) => void (io.err += s) };
    expect(await main(['replay', labId, '--db', db, '--json'], io), io.err).toBe(0);
    expect(JSON.parse(io.out).mismatched).toBe(0);
  });
});
