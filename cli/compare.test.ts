import { describe, expect, it } from 'vitest';
import { asExperimentId, asRoleName, asRunId } from '../core/ids.ts';
import type { RunRecord } from '../core/results/index.ts';
import { summarizeRuns } from '../core/experiments/summary.ts';
import { compareRuns, formatCompare } from './commands/compare.ts';
import { formatReport } from './format.ts';

const run = (taskId: string, score: number, h: Record<string, number>, seed = 1): RunRecord => ({
  runId: asRunId(`x/${taskId}`), experimentId: asExperimentId('x'), taskIndex: 0, taskId, status: 'completed', score, correct: score === 1,
  seed, promptTokens: 0, completionTokens: 0, startedAt: 0, endedAt: 0, failures: {},
  ladder: Object.fromEntries(Object.entries(h).map(([role, reward]) => [role, { role: asRoleName(role), reward } as never])),
});

describe('flowlab compare (paired statistics)', () => {
  it('pairs by task, computes deltas, the sign test and the bootstrap interval by hand', () => {
    const a = ['t0', 't1', 't2', 't3', 't4'].map((t, i) => run(t, i < 1 ? 1 : 0, { solver: 0.2 }));
    const b = [...['t0', 't1', 't2', 't3'].map((t) => run(t, 1, { solver: 0.5, extra: 1 })), run('t9', 1, { solver: 1 })];
    const r = compareRuns('A', a, 'B', b, 7);
    expect(r.pairs).toBe(4);
    expect([r.unpairedA, r.unpairedB]).toEqual([1, 1]);
    // score: A = [1, 0, 0, 0], B = [1, 1, 1, 1] -> diffs [0, 1, 1, 1]: +3 / -0 / =1, p = 2 * 0.5^3 = 0.25.
    expect(r.score).toMatchObject({ a: 0.25, b: 1, delta: 0.75, signTest: { positive: 3, negative: 0, ties: 1, p: 0.25 } });
    expect(r.score.ci.low).toBeGreaterThanOrEqual(0.25);
    expect(r.score.ci.high).toBe(1);
    expect(Object.keys(r.roles)).toEqual(['solver']); // "extra" exists only in B
    expect(r.roles.solver!.delta).toBeCloseTo(0.3, 12);
    expect(r.seedsMatch).toBe(true);
  });
});

describe('flowlab compare and the run table: the constant guard', () => {
  const ans = (taskId: string, answer: string, expected: string): RunRecord => ({ ...run(taskId, answer === expected ? 1 : 0, {}), answer, expected });
  // Labels weather:now, weather:now, search:facts, math:add: the best constant is weather:now, 2/4 = 50%; 3 classes (tools).
  const labels = ['weather:now', 'weather:now', 'search:facts', 'math:add'];
  const tool = (l: string) => l.split(':')[0]!;
  it('compare: each side carries its best constant and distinct answers; a delta between two constants says so', () => {
    const a = labels.map((l, i) => ans(`t${i}`, 'math:add', l));
    const b = labels.map((l, i) => ans(`t${i}`, 'weather:now', l));
    const r = compareRuns('A', a, 'B', b, 0, tool);
    // A right once (t3), B right twice (t0, t1): +0.25, a difference between the constants math:add and weather:now.
    expect(r.score).toMatchObject({ a: 0.25, b: 0.5, delta: 0.25 });
    expect(r.guard.a).toMatchObject({ bestConstant: { answer: 'weather:now', accuracy: 0.5 }, distinctAnswers: 1, classes: 3, constant: { answer: 'math:add', share: 1 } });
    expect(r.guard.note).toBe('both constant');
    const text = formatCompare(r);
    expect(text).toContain('Guard (paired runs): A best constant 50.0% · 1 answer · CONSTANT "math:add" 100.0%; B best constant 50.0% · 1 answer · CONSTANT "weather:now" 100.0%.');
    expect(text).toContain('Both sides are CONSTANT: the delta is a difference between two constant answers, not between policies.');
    const varied = compareRuns('A', a, 'B', labels.map((l, i) => ans(`t${i}`, l, l)), 0, tool);
    expect(varied.guard.note).toBe('one constant');
    expect(formatCompare(varied)).toContain('A is CONSTANT: its accuracy is a constant policy\'s.');
  });

  it('the run table prints the best constant policy, the distinct answers and the CONSTANT flag', () => {
    const runs = labels.map((l, i) => ans(`t${i}`, 'search:facts', l));
    const text = formatReport(summarizeRuns('e', runs, { tasksPlanned: 4, wallSeconds: 1, status: 'completed', classOf: tool }), 'Run');
    expect(text).toMatch(/accuracy[\s│]+25\.0% CONSTANT/);
    expect(text).toMatch(/best constant policy[\s│]+50\.0% \(always "weather:now"\)/);
    expect(text).toMatch(/distinct answers[\s│]+1 \(3 classes\)/);
    expect(text).toContain('CONSTANT "search:facts" 100.0%: the answers collapsed; the accuracy is a constant policy\'s.');
  });

  it('a run where no task gave an answer says so, not that the answers collapsed', () => {
    const runs = labels.map((l, i): RunRecord => ({ ...run(`t${i}`, 0, {}), status: 'failed', answer: undefined, expected: l }));
    const text = formatReport(summarizeRuns('e', runs, { tasksPlanned: 4, wallSeconds: 1, status: 'completed', classOf: tool }), 'Run');
    expect(text).toContain('CONSTANT "(none)" 100.0%: no run gave an answer; the accuracy is that of answering nothing.');
    expect(text).not.toContain('collapsed');
  });
});
