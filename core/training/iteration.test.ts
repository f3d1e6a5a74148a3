import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RolloutSummary } from '../rollouts/groups.ts';
import type { AdvantageRow } from '../store/improve.ts';
import type { ExperimentCall } from '../store/types.ts';
import type { Task } from '../tasks/types.ts';
import type { RunRecord } from '../results/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import {
  heldoutResult,
  iterationMetrics,
  iterationTasks,
  roleIterationMetrics,
  roleReward,
  roleStepBatches,
  rungMeans,
  sampledTaskList,
  trainRef,
  versionFile,
} from './iteration.ts';
import { checkLoopOptions, loopHyper } from './loop.ts';

const task = (id: string): Task => ({ id, index: 0, input: { q: id }, expected: id.toUpperCase() }) as Task;
const call = (runId: string, role: string, completion: string, ids?: { p: number[]; c: number[] }, extra: Partial<ExperimentCall> = {}) =>
  ({ runId, role, completion, completionTokens: completion.length, promptTokenIds: ids?.p, completionTokenIds: ids?.c, ...extra }) as unknown as ExperimentCall;
const row = (runId: string, role: string, advantage: number, mode: 'ladder' | 'flow' = 'ladder') => ({ runId, role, mode, advantage }) as unknown as AdvantageRow;
const ladder = (reward: number, rungs: [number, number, number, number, number]) => {
  const [format, validity, completion, correctness, credit] = rungs;
  return { reward, format, validity, completion, correctness, credit };
};
const runRec = (score: number, ladders: Record<string, ReturnType<typeof ladder>>) => ({ score, ladder: ladders }) as unknown as RunRecord;

describe('which tasks an iteration samples', () => {
  const tasks = ['t0', 't1', 't2', 't3', 't4'].map(task);

  it('iteration k takes the next tasks, wrapping around', () => {
    expect(iterationTasks(tasks, 1, 2).map((t) => t.id)).toEqual(['t0', 't1']);
    expect(iterationTasks(tasks, 2, 2).map((t) => t.id)).toEqual(['t2', 't3']);
    expect(iterationTasks(tasks, 3, 2).map((t) => t.id)).toEqual(['t4', 't0']);
    expect(iterationTasks(tasks, 2, 7).map((t) => t.id)).toEqual(['t2', 't3', 't4', 't0', 't1', 't2', 't3']);
    expect(() => iterationTasks([], 1, 2)).toThrow(/no training tasks/);
  });

  it('a group of K samples per task is consecutive; held-out samples of one keep the task id', () => {
    expect(sampledTaskList([task('a'), task('b')], 3).map((t) => [t.taskIndex, t.taskId])).toEqual([
      [0, 'a#r0'], [1, 'a#r1'], [2, 'a#r2'], [3, 'b#r0'], [4, 'b#r1'], [5, 'b#r2'],
    ]);
    expect(sampledTaskList([task('a')], 1)[0]).toEqual({ taskIndex: 0, taskId: 'a#r0', input: { q: 'a' }, expected: 'A' });
    expect(sampledTaskList([task('a'), task('b')], 1, true).map((t) => t.taskId)).toEqual(['a', 'b']);
    expect(sampledTaskList([task('a')], 2, true).map((t) => t.taskId)).toEqual(['a#r0', 'a#r1']);
  });
});

describe('per-role step batches', () => {
  const calls = [
    call('r1', 'planner', 'p1', { p: [1, 11], c: [5, 6] }),
    call('r1', 'solver', 's1', { p: [1, 22], c: [7] }),
    call('r2', 'planner', 'p2', { p: [1, 11], c: [8] }),
    call('r2', 'planner', 'p2b', { p: [1, 11], c: [9] }),
    call('r3', 'planner', 'p3', { p: [1, 11], c: [4] }),
    call('r1', 'planner', 'untracked'),
  ];
  const rows = [row('r1', 'planner', 0.5), row('r2', 'planner', 0), row('r1', 'planner', 9, 'flow'), row('r1', 'solver', -1)];

  it('each role trains on its own recorded calls with its run\'s ladder advantage; runs without one are left out', () => {
    const b = roleStepBatches(calls, rows, ['planner', 'solver', 'critic']);
    expect(b.get('planner')).toEqual({
      samples: [
        { promptTokens: [1, 11], completionTokens: [5, 6], advantage: 0.5 },
        { promptTokens: [1, 11], completionTokens: [8], advantage: 0 },
        { promptTokens: [1, 11], completionTokens: [9], advantage: 0 },
      ],
      signal: 1,
    });
    expect(b.get('solver')).toEqual({ samples: [{ promptTokens: [1, 22], completionTokens: [7], advantage: -1 }], signal: 1 });
    expect(b.get('critic')).toEqual({ samples: [], signal: 0 });
  });
});

describe('versions and metrics', () => {
  it('a version file is <dir>/<loop>/<role>/iter-<kkk>.gguf with the role made file-safe', () => {
    expect(versionFile('/v', 'tl-1', 'planner', 7)).toBe(path.join('/v', 'tl-1', 'planner', 'iter-007.gguf'));
    expect(versionFile('/v', 'tl-1', 'a/b c', 12)).toBe(path.join('/v', 'tl-1', 'a_b_c', 'iter-012.gguf'));
    expect(trainRef('solver')).toBe('train:solver');
  });

  const runs = [
    runRec(1, { planner: ladder(0.8, [1, 1, 1, 1, 0]) }),
    runRec(0, { planner: ladder(0.2, [1, 0, 0, 0, 0]), solver: ladder(0.4, [1, 1, 0, 0, 0]) }),
  ];

  it('rewards and rungs are means over the runs that have the role\'s ladder', () => {
    expect(roleReward(runs, 'planner')).toBeCloseTo(0.5, 12);
    expect(roleReward(runs, 'solver')).toBeCloseTo(0.4, 12);
    expect(roleReward(runs, 'critic')).toBe(0);
    expect(rungMeans(runs, 'planner')).toEqual({ format: 1, validity: 0.5, completion: 0.5, correctness: 0.5, credit: 0 });
  });

  it('a role\'s metrics carry its step\'s loss, KL and train tokens per second', () => {
    const summary = { roles: { planner: { zeroSpreadGroups: 2 } } } as unknown as RolloutSummary;
    const batch = { samples: [{}, {}, {}] as never[], signal: 2 };
    expect(roleIterationMetrics(runs, 'planner', summary, batch, { loss: -0.3, kl: 0.01, tokens: 100, ms: 500 }, '/m.gguf')).toEqual({
      reward: expect.closeTo(0.5, 12), rungs: { format: 1, validity: 0.5, completion: 0.5, correctness: 0.5, credit: 0 },
      samples: 3, signalSamples: 2, zeroSpreadGroups: 2, trainTokens: 100, path: '/m.gguf', loss: -0.3, kl: 0.01, trainTokensPerSecond: 200,
    });
    const idle = roleIterationMetrics(runs, 'solver', summary, { samples: [], signal: 0 }, undefined, '/s.gguf');
    expect(idle).toEqual({ reward: expect.closeTo(0.4, 12), rungs: { format: 1, validity: 1, completion: 0, correctness: 0, credit: 0 }, samples: 0, signalSamples: 0, zeroSpreadGroups: 0, trainTokens: 0, path: '/s.gguf' });
  });

  it('an iteration\'s tokens are the recorded completion ids (else the call\'s count), its seconds split by clock marks', () => {
    const calls = [call('r1', 'planner', 'abc', { p: [1], c: [1, 2, 3] }), call('r2', 'solver', 'hello')];
    const m = iterationMetrics(4, 'exp-4', runs, calls, {}, { start: 1000, sampled: 3000, trained: 4000, end: 4500 });
    expect(m).toEqual({
      iteration: 4, experimentId: 'exp-4', score: 0.5, roles: {}, sampledTokens: 8, sampleTokensPerSecond: 4,
      seconds: { sampling: 2, training: 1, writeReload: 0.5, total: 3.5 },
    });
  });

  it('a held-out result: mean score, samples, role rewards, the first three error-free completions per role', () => {
    const calls = ['a', 'b', 'c', 'd'].map((t, i) => call(`r${i}`, 'planner', t, undefined, i === 1 ? { error: 'TIMEOUT' } as Partial<ExperimentCall> : {}));
    expect(heldoutResult('exp-h', runs, calls, ['planner', 'solver'])).toEqual({
      experimentId: 'exp-h', score: 0.5, samples: 2, roles: { planner: expect.closeTo(0.5, 12), solver: expect.closeTo(0.4, 12) }, examples: { planner: ['a', 'c', 'd'], solver: [] },
    });
  });
});

describe('loop options', () => {
  const { graph } = parseWorkflow('name: w\nroles: { planner: { kind: planner } }\nnodes:\n  - { id: a, role: planner }\n', { tools: { get: () => undefined } });
  const ok = { roles: ['planner'], graph, temperature: 1, trainTasks: [task('t')] };

  it('refuses what cannot train, naming it', () => {
    expect(() => checkLoopOptions(ok)).not.toThrow();
    expect(() => checkLoopOptions({ ...ok, roles: [] })).toThrow('train-loop: no role to train');
    expect(() => checkLoopOptions({ ...ok, roles: ['ghost'] })).toThrow('train-loop: the workflow has no role "ghost" (roles: planner)');
    expect(() => checkLoopOptions({ ...ok, temperature: 0 })).toThrow(/temperature > 0/);
    expect(() => checkLoopOptions({ ...ok, trainTasks: [] })).toThrow('train-loop: no training tasks');
  });

  it('hyper-parameters stored with every experiment and version', () => {
    const o = { lr: 3e-4, kl: 0.02, temperature: 1, group: 4, tasksPerIteration: 2, seed: 7, dataset: { name: 'learn-team' } } as Parameters<typeof loopHyper>[0];
    expect(loopHyper(o, 'tl-x')).toEqual({ lr: 3e-4, kl: 0.02, temperature: 1, group: 4, tasksPerIteration: 2, maxGradNorm: null, seed: 7, dataset: 'learn-team', loopId: 'tl-x' });
  });
});
