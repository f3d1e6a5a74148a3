/**
 * The lab host with the real tiny model (stories260K.gguf, node-llama-cpp on CPU) and the real
 * GSM8K data of the shared folder. Skipped, saying why, where they are absent.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabEvent } from '../core/api/index.ts';
import { main } from '../cli/main.ts';
import { gsm8kTest as DATA, haveShared, labPerTest, noteSkip, shared as SHARED, tinyModel as MODEL } from '../test/fixtures.ts';
import { createLabHost } from './index.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const have = haveShared;
if (!have) noteSkip('host/labHost.model.test', 'the model-dependent lab tests', `${MODEL} or ${DATA}`);
const TEAM = readFileSync(path.join(ROOT, 'examples/gsm8k-team.yaml'), 'utf8');

const t = labPerTest('host-model', (h) =>
  createLabHost({ store: h.store, dbFile: path.join(h.dir, 'lab.db'), modelDir: path.join(h.dir, 'models'), examplesDir: path.join(ROOT, 'examples'), sharedDir: SHARED, emit: (e) => h.events.push(e) }),
);

/** Resolves with the first event matching `pred` (already emitted or still to come). */
function nextEvent(pred: (e: LabEvent) => boolean): Promise<LabEvent> {
  return new Promise((resolve) => {
    const found = t.events.find(pred);
    if (found) return resolve(found);
    const timer = setInterval(() => {
      const e = t.events.find(pred);
      if (e) {
        clearInterval(timer);
        resolve(e);
      }
    }, 5);
  });
}

describe.skipIf(!have)('lab runs with the tiny real model', () => {
  it('runs 2 GSM8K tasks: running -> node events -> run events -> completed; the store holds 2 runs', async () => {
    const { experimentId } = await t.api.startRun({ workflowText: TEAM, dataset: 'gsm8k', split: 'test', limit: 2, seed: 0, models: { default: MODEL } });
    await t.lab.runner.settled(experimentId);
    const mine = t.events.filter((e) => 'experimentId' in e && e.experimentId === experimentId);
    expect(mine[0]).toEqual({ type: 'experiment', experimentId, status: 'running', done: 0, total: 2 });
    expect(mine.at(-1)).toEqual({ type: 'experiment', experimentId, status: 'completed', done: 2, total: 2 });
    const firstRun = mine.findIndex((e) => e.type === 'run');
    expect(mine.slice(1, firstRun).length).toBeGreaterThan(0);
    expect(mine.slice(1, firstRun).every((e) => e.type === 'node')).toBe(true);
    expect(mine.some((e) => e.type === 'node' && e.nodeId === 'plan' && e.phase === 'started')).toBe(true);
    expect(mine.some((e) => e.type === 'node' && e.nodeId === 'plan' && e.phase === 'finished' && e.status === 'ok')).toBe(true);
    expect(mine.filter((e) => e.type === 'run').map((e) => e.type === 'run' && [e.taskIndex, e.done, e.total])).toEqual([[0, 1, 2], [1, 2, 2]]);
    const runs = t.store.listRuns(experimentId);
    expect(runs).toHaveLength(2);
    expect(t.store.getRunEvents(runs[0]!.runId).length).toBeGreaterThan(0);
    expect(t.store.getExperiment(experimentId).status).toBe('completed');
  });

  it('cancelRun mid-way leaves a cancelled experiment that `flowlab resume` finishes', async () => {
    const { experimentId } = await t.api.startRun({ workflowText: TEAM, dataset: 'gsm8k', split: 'test', limit: 5, seed: 3, models: { default: MODEL } });
    await nextEvent((e) => e.type === 'run' && e.experimentId === experimentId);
    await expect(t.api.cancelRun({ experimentId })).resolves.toEqual({ cancelled: true });
    const exp = t.store.getExperiment(experimentId);
    expect(exp.status).toBe('cancelled');
    const stored = t.store.listRuns(experimentId).length;
    expect(stored).toBeGreaterThanOrEqual(1);
    expect(stored).toBeLessThan(5);
    expect(t.store.pendingTasks(experimentId)).toHaveLength(5 - stored);
    expect(t.events.at(-1)).toMatchObject({ type: 'experiment', experimentId, status: 'cancelled', total: 5 });

    const io = { out: '', err: '', isTTY: false, stdout: (s: string) => void (io.out += s), stderr: (s: string) => void (io.err += s) };
    const code = await main(['resume', experimentId, '--db', path.join(t.dir, 'lab.db'), '--json'], io);
    expect(io.err).toMatch(new RegExp(`Resuming ${experimentId}.*${5 - stored} task\\(s\\) left`));
    expect(code).toBe(0);
    expect(t.store.listRuns(experimentId)).toHaveLength(5);
    expect(t.store.getExperiment(experimentId).status).toBe('completed');
  });

  it('inject marks the experiment and its runs simulated', async () => {
    const { experimentId } = await t.api.startRun({ workflowText: TEAM, dataset: 'gsm8k', split: 'test', limit: 2, seed: 0, models: { default: MODEL }, inject: ['solver=error@1'] });
    await t.lab.runner.settled(experimentId);
    const exp = t.api.getExperiment({ id: experimentId });
    expect(exp.kind).toBe('blame-eval');
    expect(exp.config).toMatchObject({ simulated: true, inject: ['solver=error@1'] });
    const runs = t.store.listRuns(experimentId);
    expect(runs.map((r) => r.simulated)).toEqual([true, true]);
    const solve = t.store.getRunEvents(runs[0]!.runId).find((e) => e.nodeId === 'solve')!;
    expect([solve.simulated, solve.fault, solve.status]).toEqual([true, 'error', 'failed']);
    expect(t.events.some((e) => e.type === 'node' && e.nodeId === 'solve' && e.phase === 'finished' && e.simulated === true)).toBe(true);
    expect(t.events.some((e) => e.type === 'node' && e.nodeId === 'plan' && e.phase === 'finished' && e.simulated === true)).toBe(false);
  });

  it('testModel generates with the model; listModels and addModel read real headers', async () => {
    const out = await t.api.testModel({ path: MODEL, prompt: 'Once upon a time', maxTokens: 12 });
    expect(out.text.startsWith(', there was a little girl')).toBe(true);
    expect(out.promptTokens).toBeGreaterThan(0);
    expect(out.completionTokens).toBeGreaterThan(0);
    expect(out.completionTokens).toBeLessThanOrEqual(12);
    mkdirSync(path.join(t.dir, 'models'));
    copyFileSync(MODEL, path.join(t.dir, 'models/stories260K.gguf'));
    const [entry] = await t.api.listModels();
    expect(entry).toMatchObject({ fileName: 'stories260K.gguf', source: 'folder', sizeBytes: 1185376, info: { architecture: 'llama', parameters: 292800, fileType: 'F32', contextLength: 2048, hasChatTemplate: false } });
    await expect(t.api.addModel({ path: MODEL })).resolves.toMatchObject({ path: MODEL, source: 'added', info: { architecture: 'llama' } });
    const missing = await t.api.testModel({ path: path.join(t.dir, 'nope.gguf'), prompt: 'x' }).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 'BAD_REQUEST', field: 'path', message: `testModel: Model file not found: ${path.join(t.dir, 'nope.gguf')}` });
  });
});
