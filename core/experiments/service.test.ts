/**
 * The experiment service with the scripted (simulated) provider and a toy dataset in memory:
 * event order, cancel and resume, halting on a model that fails mid-run, load failures,
 * SIMULATED faults, rollouts advantages, and the recorded config.
 */
import { describe, expect, it } from 'vitest';
import { ModelError } from '../model/errors.ts';
import { ScriptedProvider, type Script } from '../model/scripted.ts';
import type { ModelConfig, ModelPort } from '../model/config.ts';
import type { ModelProvider } from '../model/provider.ts';
import { openStore } from '../store/index.ts';
import type { Dataset, Grader } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { startExperiment } from './service.ts';
import { experimentDigest, sha256Of } from '../repro/index.ts';
import { ExperimentSpecError, type ExperimentEvent, type ServiceDeps } from './spec.ts';

const YAML = `
name: toy
roles: { s: { kind: executor } }
nodes:
  - { id: solve, role: s, prompt: "{{q}}", inputs: { q: task.question }, output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } } }
answer: solve.answer
`;
const grader: Grader = { grade: (a, t) => ({ score: Number(a) === Number(t.expected) ? 1 : 0, correct: Number(a) === Number(t.expected), extracted: String(a), expected: t.expected }) };
/** Six tasks `i+1?`, expected i+1. */
const toy: Dataset = {
  name: 'toy',
  splits: ['test'],
  grader,
  load: ({ limit, offset = 0 }) => Array.from({ length: 6 }, (_, i) => ({ id: `toy/test/${i}`, index: i, input: { question: `${i}+1` }, expected: String(i + 1) })).slice(offset, offset + (limit ?? 6)),
};
/** Right for even i, wrong (0) for odd i. */
const halfRight: Script = (r) => {
  const i = Number(r.prompt.split('+')[0]);
  return JSON.stringify({ answer: i % 2 ? 0 : i + 1 });
};
const MODELS: ModelConfig = { models: { default: '/m/toy.gguf' }, roleModels: { s: 'default' }, gpu: false };

function setup(create: (cfg: ModelConfig) => Promise<ModelProvider> = async () => new ScriptedProvider(halfRight)) {
  const store = openStore(':memory:');
  const tools = defaultTools();
  const { graph } = parseWorkflow(YAML, { tools });
  const port: ModelPort = { create, fingerprint: (c) => ({ ...c, fingerprints: { default: 'fp-1' } }) };
  const deps: ServiceDeps = { store, models: port, tools, datasets: () => toy };
  const events: ExperimentEvent[] = [];
  const spec = { kind: 'run' as const, workflow: { graph, text: YAML, file: '/w/toy.yaml' }, dataset: 'toy', split: 'test', limit: 4, seed: 7, models: MODELS };
  return { store, deps, events, spec, graph, onEvent: (e: ExperimentEvent) => events.push(e) };
}

const shape = (events: ExperimentEvent[]) =>
  events.map((e) => (e.type === 'node' ? `${e.nodeId}:${e.phase}` : e.type === 'run' ? `run${e.taskIndex}:${e.done}/${e.total}:${e.correctRuns}` : e.type === 'finished' ? `finished:${e.status}` : e.type));

describe('startExperiment: run', () => {
  it('records the experiment with its planned tasks and config, then emits started, node, run and finished events in order', async () => {
    const { store, deps, events, spec, onEvent } = setup();
    const h = await startExperiment({ ...spec, offset: 1, dataDir: '/data' }, deps, { onEvent });
    const out = await h.done;
    expect(shape(events)).toEqual([
      'started',
      'solve:started', 'solve:finished', 'run0:1/4:0',
      'solve:started', 'solve:finished', 'run1:2/4:1',
      'solve:started', 'solve:finished', 'run2:3/4:1',
      'solve:started', 'solve:finished', 'run3:4/4:2',
      'finished:completed',
    ]);
    expect(out).toMatchObject({ experimentId: h.experimentId, kind: 'run', status: 'completed', report: { runs: 4, tasksPlanned: 4, accuracy: 0.5 } });
    const exp = store.getExperiment(h.experimentId);
    expect(exp).toMatchObject({ kind: 'run', status: 'completed', dataset: 'toy', split: 'test', limit: 4, seed: 7, workflowYaml: YAML });
    expect(exp.config).toEqual({ workflowFile: '/w/toy.yaml', offset: 1, dataDir: '/data', models: { ...MODELS, fingerprints: { default: 'fp-1' } } });
    expect(store.listTasks(h.experimentId).map((t) => [t.taskIndex, t.taskId])).toEqual([[0, 'toy/test/1'], [1, 'toy/test/2'], [2, 'toy/test/3'], [3, 'toy/test/4']]);
    // offset 1: task index 0 is toy/test/1 (odd: wrong), so run 1 is the first correct one.
    expect(store.listRuns(h.experimentId).map((r) => r.correct)).toEqual([false, true, false, true]);
  });

  it('notes a split shorter than the limit, and refuses an offset past its end (NO_TASKS, nothing recorded)', async () => {
    const { store, deps, events, spec, onEvent } = setup();
    await (await startExperiment({ ...spec, limit: 10 }, deps, { onEvent })).done;
    expect(events[0]).toEqual({ type: 'note', message: 'Note: toy/test has only 6 task(s) from offset 0; running those.' });
    const err = await startExperiment({ ...spec, offset: 6 }, deps).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExperimentSpecError);
    expect(err).toMatchObject({ code: 'NO_TASKS', field: 'offset', message: 'no tasks: toy/test has no task at offset 6' });
    expect(store.listExperiments()).toHaveLength(1);
  });

  it('cancel mid-run: the run in flight is dropped, the experiment is cancelled, and a resume finishes exactly the rest', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const held: Script = async (r) => {
      if (++calls === 3) await gate; // hold the third task's call
      return halfRight(r);
    };
    const { store, deps, events, spec, onEvent } = setup(async () => new ScriptedProvider(held));
    const h = await startExperiment(spec, deps, { onEvent });
    while (!events.some((e) => e.type === 'node' && e.runId.endsWith('/2') && e.phase === 'started')) await new Promise((r) => setTimeout(r, 1));
    h.cancel();
    release();
    const out = await h.done;
    expect(out.status).toBe('cancelled');
    expect(store.getExperiment(h.experimentId).status).toBe('cancelled');
    expect(store.listRuns(h.experimentId).map((r) => r.taskIndex)).toEqual([0, 1]);
    expect(events.slice(-2)).toEqual([
      { type: 'run', experimentId: h.experimentId, runId: `${h.experimentId}/2`, taskIndex: 2, done: 2, total: 4, status: 'cancelled', correct: false, correctRuns: 1 },
      { type: 'finished', experimentId: h.experimentId, status: 'cancelled', done: 2, total: 4 },
    ]);

    const resumed: ExperimentEvent[] = [];
    const r = await startExperiment({ kind: 'resume', experimentId: h.experimentId }, deps, { onEvent: (e) => resumed.push(e) });
    expect(resumed[0]).toMatchObject({ type: 'started', resumed: true, done: 2, total: 4 });
    const out2 = await r.done;
    expect(out2).toMatchObject({ status: 'completed', report: { runs: 4, accuracy: 0.5 } });
    expect(store.listRuns(h.experimentId).map((x) => x.taskIndex)).toEqual([0, 1, 2, 3]);
    // Nothing pending: a second resume runs nothing and says so.
    const again = await startExperiment({ kind: 'resume', experimentId: h.experimentId }, deps);
    expect(await again.done).toMatchObject({ nothingPending: true, status: 'completed' });
  });

  it('halts on a model that fails to load mid-run: failed, the reason on halted and finished, tasks stay pending', async () => {
    const failing: Script = () => {
      throw new ModelError('MODEL_LOAD_FAILED', 'Failed to load model /m/toy.gguf', '/m/toy.gguf');
    };
    const { store, deps, events, spec, onEvent } = setup(async () => new ScriptedProvider(failing));
    const h = await startExperiment(spec, deps, { onEvent });
    const out = await h.done;
    expect(out).toMatchObject({ status: 'failed', halted: true });
    expect(out.message).toMatch(/^MODEL_LOAD_FAILED: Failed to load model \/m\/toy.gguf \(task 0, node solve\)/);
    expect(shape(events).slice(-2)).toEqual(['halted', 'finished:failed']);
    expect(events.at(-1)).toMatchObject({ type: 'finished', status: 'failed', message: out.message });
    expect(store.getExperiment(h.experimentId).status).toBe('failed');
    expect(store.pendingTasks(h.experimentId)).toHaveLength(4);
  });

  it('a provider that fails to load refuses the start (MODEL_LOAD with the cause), records nothing and disposes it', async () => {
    let disposed = 0;
    const cause = new Error('Not a GGUF file: /m/toy.gguf');
    const { store, deps, spec } = setup(async () => Object.assign(new ScriptedProvider(halfRight), { load: async () => { throw cause; }, dispose: async () => void disposed++ }));
    const err = await startExperiment(spec, deps).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'MODEL_LOAD', field: 'models', message: cause.message, cause });
    expect(disposed).toBe(1);
    expect(store.listExperiments()).toEqual([]);
  });
});

describe('startExperiment: blame-eval and rollouts', () => {
  it('blame-eval injects SIMULATED faults, labels node events, records inject and scores blame', async () => {
    const { store, deps, events, spec, onEvent } = setup();
    const h = await startExperiment({ ...spec, kind: 'blame-eval', inject: ['s=error@1'], runs: 3 }, deps, { onEvent });
    const out = await h.done;
    expect(store.getExperiment(h.experimentId).config).toMatchObject({ inject: ['s=error@1'], simulated: true });
    expect(store.listRuns(h.experimentId).map((r) => [r.taskIndex, r.simulated, r.status])).toEqual([[0, true, 'failed'], [1, true, 'failed'], [2, true, 'failed']]);
    expect(events.filter((e) => e.type === 'node' && e.phase === 'finished').every((e) => e.type === 'node' && e.simulated === true)).toBe(true);
    expect(out.blame?.inject).toEqual(['s=error@1']);
    expect(out.blame?.report.byRole.s).toMatchObject({ injected: 3, blamed: 3, precision: 1, recall: 1 });
  });

  it('refuses fault specs naming unknown roles or nodes, with the field', async () => {
    const { deps, spec } = setup();
    await expect(startExperiment({ ...spec, kind: 'blame-eval', inject: ['s=error', 'ghost=error'] }, deps)).rejects.toMatchObject({ code: 'UNKNOWN_ROLE', field: 'inject.1' });
    await expect(startExperiment({ ...spec, kind: 'blame-eval', inject: ['node:nope=error'] }, deps)).rejects.toMatchObject({ code: 'UNKNOWN_NODE', field: 'inject.0' });
    await expect(startExperiment({ ...spec, kind: 'blame-eval', inject: ['s=explode'] }, deps)).rejects.toMatchObject({ code: 'BAD_FAULT', field: 'inject.0' });
  });

  it('rollouts plan G runs per task, sample on-policy, and store group advantages', async () => {
    const seen: Array<{ temperature?: number; topK?: number }> = [];
    const { store, deps, spec } = setup(async (cfg) => {
      // Deterministic scheduler: one sequence per decode, so what shares a batch never depends on timing (was 'mixed').
      expect([cfg.sequences, cfg.batching]).toEqual([4, 'isolated']);
      return new ScriptedProvider((r) => {
        seen.push({ temperature: r.params.temperature, topK: r.params.topK });
        return halfRight(r);
      });
    });
    const h = await startExperiment({ ...spec, kind: 'rollouts', limit: 2, group: 3, temperature: 0.5, mode: 'multi-agent' }, deps);
    const out = await h.done;
    expect(store.listTasks(h.experimentId)).toHaveLength(6);
    expect(seen.every((s) => s.temperature === 0.5 && s.topK === 0)).toBe(true);
    expect(store.getExperiment(h.experimentId).config).toMatchObject({ rollouts: { group: 3, temperature: 0.5, mode: 'multi-agent', learningRoles: ['s'] }, models: { sequences: 4, batching: 'isolated' } });
    expect(out.rollouts?.summary).toMatchObject({ groups: 2, trajectories: 6 });
    expect(store.improve.advantagesOf(h.experimentId).length).toBeGreaterThan(0);
    expect(store.repro.find(h.experimentId)).toMatchObject({ kind: 'experiment', repeatability: 'exact', fingerprint: { seed: 7, decode: { batching: 'isolated', sequences: 4 } } });
  });

  it('records a fingerprint when an experiment starts and its output digest when it completes; a re-run gives the same digest', async () => {
    const { store, deps, spec } = setup();
    deps.models.environment = () => ({ code: { flowlab: '0.1.0', commit: 'abc' }, native: { 'node-llama-cpp': '3.21.1' } });
    const a = await startExperiment(spec, deps);
    await a.done;
    const rec = store.repro.find(a.experimentId)!;
    expect(rec).toMatchObject({ kind: 'experiment', repeatability: 'exact' });
    expect(rec.fingerprint).toMatchObject({
      schema: 1, kind: 'experiment', seed: 7, models: { default: 'fp-1' },
      inputs: { workflow: sha256Of(YAML), experimentKind: 'run', dataset: 'toy', split: 'test' },
      code: { flowlab: '0.1.0', commit: 'abc' }, native: { 'node-llama-cpp': '3.21.1' },
    });
    expect(rec.outputDigest).toBe(experimentDigest(store, a.experimentId));
    const b = await startExperiment(spec, deps);
    await b.done;
    // Same inputs, same outputs: same digest (ids and timings are not part of it).
    expect(store.repro.find(b.experimentId)!.outputDigest).toBe(rec.outputDigest);
    expect(store.repro.find(b.experimentId)!.fingerprintDigest).toBe(rec.fingerprintDigest);
  });

  it("a model config with batching 'mixed' (the bench's timing-ordered baseline) is recorded as not exactly repeatable", async () => {
    const { store, deps, spec } = setup();
    const h = await startExperiment({ ...spec, kind: 'rollouts', limit: 1, group: 2, temperature: 0.5, mode: 'multi-agent', models: { ...MODELS, batching: 'mixed' } }, deps);
    await h.done;
    expect(store.repro.find(h.experimentId)?.repeatability).toBe('not guaranteed: mixed decode batches');
  });
});
