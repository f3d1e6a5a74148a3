import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { roleLadder, runRecord, thrownBy } from '../../../test/fixtures.ts';
import { computeWorkflowHash, openStore, type Store } from '../../store/index.ts';
import { ApiError, createHandlers, type FlowlabApi } from '../index.ts';
import { pointOf } from './learning.ts';

const YAML = 'name: learn\nsteps: []\n';
const LOOP = 'tl-20250101-000000-abcd';
let store: Store;
let api: FlowlabApi;


function experiment(id: string, kind: 'run' | 'rollouts', config: unknown, runs: Array<{ score: number; h: number; format?: number; correctness?: number }>) {
  store.createExperiment({
    id, kind, workflowName: 'learn', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'learn-word', split: 'train', seed: 1, config,
    tasks: runs.map((_, i) => ({ taskIndex: i, taskId: `t${i}`, input: { q: i }, expected: 'x' })),
  });
  runs.forEach((r, i) => {
    const rec = runRecord(id, i, {
      answer: 'x', expected: 'x', score: r.score, correct: r.score === 1, seed: i, promptTokens: 1, completionTokens: 1, startedAt: 1, endedAt: 2,
      ladder: { solver: roleLadder('solver', r.h, { format: r.format ?? 1, correctness: r.correctness ?? r.score }) },
    });
    store.saveRun(rec, []);
  });
}

const hyper = { lr: 0.001, kl: 0.05, temperature: 1, group: 8, loopId: LOOP, mode: 'grpo' };
const rungs = (format: number, correctness: number) => ({ format, validity: 1, completion: 1, correctness, credit: 0 });

beforeEach(() => {
  store = openStore(':memory:');
  api = createHandlers({ store, version: 'test' });
  experiment('exp-before', 'run', { trainLoop: { loopId: LOOP, phase: 'heldout-before' } }, [{ score: 0, h: 0.2 }, { score: 0, h: 0.3 }]);
  experiment('exp-it1', 'rollouts', { trainLoop: { loopId: LOOP, iteration: 1 } }, [{ score: 0, h: 0.4, format: 0.5, correctness: 0 }, { score: 1, h: 0.8, format: 1, correctness: 1 }]);
  experiment('exp-it2', 'rollouts', { trainLoop: { loopId: LOOP, iteration: 2 } }, [{ score: 1, h: 0.9 }]);
  experiment('exp-after', 'run', { trainLoop: { loopId: LOOP, phase: 'heldout-after' } }, [{ score: 1, h: 0.9 }, { score: 0, h: 0.5 }]);
  const v0 = store.weights.save({ id: 'wv-start', role: 'solver', basePath: '/m/base.gguf', path: '/m/base.gguf', hyper: {}, metrics: {}, createdAt: 1 });
  // Iteration 1: an older version without rungs or seconds in its metrics (rungs come from the experiment's ladders).
  store.weights.save({
    id: 'wv-1', role: 'solver', basePath: '/m/base.gguf', path: '/v/iter-001.gguf', parentId: v0.id, experimentId: 'exp-it1', iteration: 1, hyper, createdAt: 2,
    metrics: { reward: 0.6, score: 0.5, loss: 0.7, kl: null, samples: 2, signalSamples: 2, tokens: 40 },
  });
  store.weights.save({
    id: 'wv-2', role: 'solver', basePath: '/m/base.gguf', path: '/v/iter-002.gguf', parentId: 'wv-1', experimentId: 'exp-it2', iteration: 2, hyper, createdAt: 3,
    metrics: { reward: 0.9, score: 1, loss: 0.3, kl: 0.012, samples: 1, signalSamples: 0, tokens: 20, rungs: rungs(1, 1), trainTokensPerSecond: 250, seconds: { sampling: 0.5, training: 0.25, write: 0.1 } },
  });
  store.weights.save({ id: 'wv-p', role: 'planner', basePath: '/m/p.gguf', path: '/v/p-1.gguf', iteration: 1, hyper, createdAt: 4, metrics: { reward: 0.1, kl: [0.02, 0.04] } });
});
afterEach(() => store.close());

describe('listWeightVersions', () => {
  it('lists versions with lineage and parsed hyper-parameters and metrics, optionally one role', () => {
    const all = api.listWeightVersions();
    expect(all.map((v) => v.id)).toEqual(['wv-start', 'wv-1', 'wv-2', 'wv-p']);
    const solver = api.listWeightVersions({ role: 'solver' });
    expect(solver.map((v) => v.id)).toEqual(['wv-start', 'wv-1', 'wv-2']);
    expect(solver[2]).toMatchObject({ parentId: 'wv-1', experimentId: 'exp-it2', iteration: 2, path: '/v/iter-002.gguf', hyper: { lr: 0.001, group: 8 }, metrics: { kl: 0.012 } });
    expect(solver[0]!.parentId).toBeUndefined();
    expect(api.listWeightVersions({ role: 'nobody' })).toEqual([]);
  });
});

describe('getLearningCurves', () => {
  it('gives each role its loop curve in iteration order with rungs, KL, tokens/s, seconds and the held-out before/after', () => {
    const { roles } = api.getLearningCurves();
    expect(roles.map((r) => r.role)).toEqual(['planner', 'solver']);
    const solver = roles.find((r) => r.role === 'solver')!;
    expect(solver.loops).toHaveLength(1); // the start version has no iteration: not a curve point
    const loop = solver.loops[0]!;
    expect(loop.loopId).toBe(LOOP);
    expect(loop.points.map((p) => [p.iteration, p.versionId, p.reward])).toEqual([[1, 'wv-1', 0.6], [2, 'wv-2', 0.9]]);
    // Iteration 1: rungs from the experiment's ladders (format mean of 0.5 and 1, correctness of 0 and 1).
    expect(loop.points[0]!.rungs).toEqual({ format: 0.75, validity: 1, completion: 1, correctness: 0.5, credit: 0 });
    expect(loop.points[0]).toMatchObject({ kl: null, loss: 0.7, tokensPerSecond: null, seconds: { sampling: null, training: null, writeReload: null } });
    expect(loop.points[1]).toMatchObject({ rungs: rungs(1, 1), kl: 0.012, tokensPerSecond: 250, seconds: { sampling: 0.5, training: 0.25, writeReload: 0.1 }, experimentId: 'exp-it2' });
    // Every held-out run answers "x" to a task labelled "x": CONSTANT "x" at share 1, and the best constant (always "x") is right on all.
    const guard = { runs: 2, labelled: 2, bestConstant: { answer: 'x', accuracy: 1 }, distinctAnswers: 1, classes: 1, topAnswer: { answer: 'x', share: 1 }, constant: { reason: 'one-answer', answer: 'x', share: 1 } };
    expect(loop.before).toEqual({ experimentId: 'exp-before', score: 0, reward: 0.25, runs: 2, accuracy: 0, guard });
    expect(loop.after).toEqual({ experimentId: 'exp-after', score: 0.5, reward: 0.7, runs: 2, accuracy: 0.5, guard });
    expect(loop.hyper).toMatchObject({ lr: 0.001, kl: 0.05 });
    const planner = roles.find((r) => r.role === 'planner')!.loops[0]!;
    expect(planner.points[0]!.kl).toBeCloseTo(0.03);
    expect(planner.points[0]!.rungs).toBeNull();
  });

  it('filters by role; a loop without held-out evaluations has null before/after', () => {
    store.weights.save({ id: 'wv-x', role: 'solver', basePath: '/b', path: '/x', iteration: 1, hyper: { loopId: 'tl-other' }, metrics: { reward: 0.2 }, createdAt: 9 });
    const { roles } = api.getLearningCurves({ role: 'solver' });
    expect(roles.map((r) => r.role)).toEqual(['solver']);
    expect(roles[0]!.loops.map((l) => l.loopId)).toEqual([LOOP, 'tl-other']);
    expect(roles[0]!.loops[1]).toMatchObject({ before: null, after: null });
    expect(api.getLearningCurves({ role: 'nobody' })).toEqual({ roles: [] });
  });

  it('pointOf keeps a non-number metric out (null)', () => {
    const p = pointOf({ id: 'v', role: 'r', basePath: '/b', path: '/p', iteration: 3, hyper: {}, metrics: { reward: 'high', kl: Number.NaN }, createdAt: 0 }, () => null);
    expect(p).toMatchObject({ iteration: 3, reward: null, kl: null, experimentId: null });
  });
});

describe('malformed payloads', () => {
  const bad = (fn: () => unknown): ApiError => thrownBy(ApiError, fn);
  it('rejects them naming the field', () => {
    for (const call of [() => api.listWeightVersions({ role: 7 } as never), () => api.getLearningCurves({ role: '' })]) {
      const e = bad(call);
      expect(e.code).toBe('BAD_REQUEST');
      expect(e.field).toBe('role');
    }
    const e = bad(() => api.getLearningCurves({ roles: 'solver' } as never));
    expect(e.code).toBe('BAD_REQUEST');
    expect(e.message).toMatch(/roles/);
  });
});
