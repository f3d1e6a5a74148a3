import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../core/api/client.ts';
import { flowlabCommand, shellWord } from './commands.ts';
import { experimentChartData, failureRatesPerTask } from './experimentChart.ts';
import { filterExperiments, filterOptions, groupExperiments, hasLearningSignal, memberLabel, rolloutsCandidates, type ListedExperiment } from './experimentGroups.ts';

const exp = (id: string, over: Partial<ListedExperiment> = {}): ListedExperiment => ({
  id: id as ListedExperiment['id'], workflowName: 'gsm8k-team', dataset: 'gsm8k', split: 'test', kind: 'run', status: 'completed', createdAt: 0, runsDone: 4, runsCorrect: 1, tasksPlanned: 4, models: ['tiny.gguf'], ...over,
});
const loop = (id: string, iteration: number, createdAt: number, over: Partial<ListedExperiment> = {}) =>
  exp(id, { kind: 'rollouts', workflowName: 'learn-word', dataset: 'learn-word', split: 'train', createdAt, group: { kind: 'train-loop', id: 'tl-1', iteration }, ...over });

// Newest first, as listExperiments answers: a 3-iteration loop between two standalone runs.
const LIST = [
  exp('exp-new', { createdAt: 50 }),
  loop('exp-it3', 3, 40, { runsDone: 4, runsCorrect: 2, status: 'running' }),
  loop('exp-it2', 2, 30, { runsDone: 4, runsCorrect: 0 }),
  loop('exp-it1', 1, 20, { runsDone: 4, runsCorrect: 1, models: ['iter-0.gguf'] }),
  exp('exp-old', { createdAt: 10, workflowName: 'gsm8k-single', models: ['other.gguf'] }),
];

describe('groupExperiments', () => {
  it('puts a train loop\'s 3 iterations under one entry, in the place of its newest, with totals', () => {
    const entries = groupExperiments(LIST);
    expect(entries.map((e) => e.key)).toEqual(['exp-new', 'train-loop:tl-1', 'exp-old']);
    const g = entries[1]!;
    if (g.type !== 'group') throw new Error('not a group');
    expect(g.members.map((m) => m.id)).toEqual(['exp-it3', 'exp-it2', 'exp-it1']);
    expect(g.group).toMatchObject({ label: 'train loop tl-1', experiments: 3, runsDone: 12, runsCorrect: 3, tasksPlanned: 12, status: 'running', createdAt: 40, models: ['iter-0.gguf', 'tiny.gguf'] });
    expect(g.group.accuracy).toBeCloseTo(0.25, 10);
  });

  it('names a member by its place: iteration, held-out phase, study cell', () => {
    expect(memberLabel(LIST[2]!)).toBe('iteration 2');
    expect(memberLabel(exp('e', { group: { kind: 'train-loop', id: 'tl-1', phase: 'heldout-before' } }))).toBe('held-out before');
    expect(memberLabel(exp('st-a-0000abcd.base.id.s0.m', { group: { kind: 'study', id: 'st-a-0000abcd' } }))).toBe('cell base.id.s0.m');
  });
});

describe('filters', () => {
  it('filters by workflow, dataset, kind (a group kind too) and model', () => {
    const ids = (f: Partial<Record<'workflow' | 'dataset' | 'kind' | 'model', string>>) => filterExperiments(LIST, { workflow: '', dataset: '', kind: '', model: '', ...f }).map((e) => e.id);
    expect(ids({ workflow: 'gsm8k-single' })).toEqual(['exp-old']);
    expect(ids({ dataset: 'learn-word' })).toEqual(['exp-it3', 'exp-it2', 'exp-it1']);
    expect(ids({ kind: 'train-loop' })).toEqual(['exp-it3', 'exp-it2', 'exp-it1']);
    expect(ids({ kind: 'run' })).toEqual(['exp-new', 'exp-old']);
    expect(ids({ model: 'other.gguf' })).toEqual(['exp-old']);
    expect(ids({ model: 'tiny.gguf', kind: 'rollouts' })).toEqual(['exp-it3', 'exp-it2']);
  });

  it('offers each distinct value once, sorted', () => {
    expect(filterOptions(LIST)).toEqual({
      workflow: ['gsm8k-single', 'gsm8k-team', 'learn-word'],
      dataset: ['gsm8k', 'learn-word'],
      kind: ['rollouts', 'run', 'train-loop'],
      model: ['iter-0.gguf', 'other.gguf', 'tiny.gguf'],
    });
  });
});

const run = (failures: Partial<RunRecord['failures']>) => ({ failures: { wiring: 0, execution: 0, cascade: 0, infrastructure: 0, ...failures } as RunRecord['failures'], simulated: false });

describe('experimentChartData', () => {
  it('draws one accuracy series per workflow + dataset, null at the other series\' points, in the table\'s order', () => {
    const d = experimentChartData(groupExperiments(LIST), () => [run({}), run({ execution: 2 })]);
    // Newest first, as the table lists them (the chart drew oldest first, unlike the table).
    expect(d.labels).toEqual([
      ['gsm8k-team / gsm8k', 'run · 01-01 00:00', 'exp-new'],
      ['loop learn-word / learn-word', 'train loop tl-1'],
      ['gsm8k-single / gsm8k', 'run · 01-01 00:00', 'exp-old'],
    ]);
    expect(d.series.map((s) => [s.label, s.data])).toEqual([
      ['accuracy % · gsm8k-team / gsm8k', [25, null, null]],
      ['accuracy % · learn-word / learn-word', [null, 25, null]],
      ['accuracy % · gsm8k-single / gsm8k', [null, null, 25]],
    ]);
  });

  it('labels two experiments of one workflow on one dataset apart: kind, date and id (both read "gsm8k-team / gsm8k")', () => {
    const d = experimentChartData(groupExperiments([exp('exp-b', { kind: 'blame-eval', createdAt: Date.UTC(2026, 11, 3, 10, 16) }), exp('exp-a', { createdAt: Date.UTC(2026, 11, 3, 10, 15) })]), () => []);
    expect(d.labels).toEqual([
      ['gsm8k-team / gsm8k', 'blame-eval (SIMULATED faults) · 12-03 10:16', 'exp-b'],
      ['gsm8k-team / gsm8k', 'run · 12-03 10:15', 'exp-a'],
    ]);
  });

  it('shows failures per task, so a 9-task and a 5-task experiment compare', () => {
    const nine = Array.from({ length: 9 }, (_, i) => run(i < 3 ? { execution: 4 } : {}));
    const five = Array.from({ length: 5 }, (_, i) => run(i < 3 ? { execution: 1 } : {}));
    expect(failureRatesPerTask(nine).execution).toBe(33.3);
    expect(failureRatesPerTask(five).execution).toBe(60);
    expect(failureRatesPerTask([]).wiring).toBeNull();
    const d = experimentChartData(groupExperiments([exp('a', { runsDone: 9 }), exp('b', { runsDone: 5 })]), (id) => (id === 'a' ? nine : five));
    expect(d.failureRates.execution).toEqual([33.3, 60]);
    expect(d.series).toHaveLength(1);
  });

  it('leaves failure rates unknown while an entry\'s runs load', () => {
    const d = experimentChartData(groupExperiments(LIST), (id) => (id === 'exp-it2' ? undefined : [run({})]));
    expect(d.failureRates.wiring).toEqual([0, null, 0]);
  });
});

describe('rollouts default', () => {
  it('tries standalone rollouts experiments before a train loop\'s iterations', () => {
    const list = [loop('it2', 2, 30), exp('r1', { kind: 'rollouts', createdAt: 5 }), loop('it1', 1, 20)];
    const c = rolloutsCandidates(list);
    expect(c.standalone.map((e) => e.id)).toEqual(['r1']);
    expect(c.iterations.map((e) => e.id)).toEqual(['it2', 'it1']);
  });

  it('a group list with only zero-spread groups has no signal', () => {
    expect(hasLearningSignal({ groups: [{ rollouts: [1, 2], noSignal: true }] })).toBe(false);
    expect(hasLearningSignal({ groups: [{ rollouts: [1, 2], noSignal: true }, { rollouts: [1], noSignal: false }] })).toBe(true);
    expect(hasLearningSignal({ groups: [] })).toBe(false);
  });
});

describe('printed commands', () => {
  it('runs flowlab through npm with the served database, quoted for the shell', () => {
    expect(flowlabCommand(['compare', 'exp-a', 'exp-b'], '/tmp/lab.db')).toBe('npm run flowlab -- compare exp-a exp-b --db /tmp/lab.db');
    expect(flowlabCommand(['run', 'x.yaml', '--model', '<file.gguf>'], "/home/me/my lab's.db")).toBe("npm run flowlab -- run x.yaml --model <file.gguf> --db '/home/me/my lab'\\''s.db'");
    expect(flowlabCommand(['rollouts'])).toBe('npm run flowlab -- rollouts');
    expect(shellWord('a b')).toBe("'a b'");
    expect(shellWord('')).toBe("''");
  });
});
