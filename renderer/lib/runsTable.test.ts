import { describe, expect, it } from 'vitest';
import { asExperimentId } from '../../core/ids.ts';
import { experimentNumbers, experimentOptionLabel, pickerLabel, taskLabel, visibleRows } from './runsTable.ts';

describe('the Runs table helpers', () => {
  it('names a task by its index, and task/rollout in a rollout group', () => {
    expect(taskLabel({ taskIndex: 7 })).toBe('7');
    expect(taskLabel({ taskIndex: 7, rollout: { task: 1, index: 3 } })).toBe('1/3');
  });

  it('labels two experiments of one workflow and dataset apart (the pickers showed identical labels)', () => {
    const a = experimentOptionLabel({ id: asExperimentId('exp-20261203-101500-ab12'), kind: 'run', workflowName: 'gsm8k-team', dataset: 'gsm8k', createdAt: Date.UTC(2026, 11, 3, 10, 15) });
    const b = experimentOptionLabel({ id: asExperimentId('exp-20261203-101501-cd34'), kind: 'blame-eval', workflowName: 'gsm8k-team', dataset: 'gsm8k', createdAt: Date.UTC(2026, 11, 3, 10, 15) });
    expect(a).toBe('gsm8k-team / gsm8k · run · 2026-12-03 10:15 · exp-20261203-101500-ab12');
    expect(b).toBe('gsm8k-team / gsm8k · blame-eval (SIMULATED faults) · 2026-12-03 10:15 · exp-20261203-101501-cd34');
  });

  it('starts the Trace and Ladder pickers\' labels with what tells experiments apart (they read alike for 30 characters)', () => {
    const e = (id: string, s: number) => ({ id: asExperimentId(id), workflowName: 'gsm8k-team', createdAt: Date.UTC(2026, 11, 3, 10, 15, s) });
    const a = pickerLabel(e('exp-20261203-101500-ab12', 0), '0.0%', 1);
    const b = pickerLabel(e('exp-20261203-101501-cd34', 1), '0.0%', 2);
    expect(a).toBe('#1 gsm8k-team · 12-03 10:15:00 · 0.0% · exp-20261203-101500-ab12');
    expect(a.slice(0, 28)).not.toBe(b.slice(0, 28));
    // Made in the same second (MASS steps, a seeded lab): the closed select's ~26 characters still differ.
    const c = pickerLabel(e('exp-20261203-101500-ef56', 0), '0.0%', 3);
    expect(a.slice(0, 20)).not.toBe(c.slice(0, 20));
  });

  it('numbers experiments from the oldest, so a new one renumbers none (the list comes newest first)', () => {
    const ids = (...xs: string[]) => xs.map((id) => ({ id: asExperimentId(id) }));
    expect([...experimentNumbers(ids('c', 'b', 'a'))]).toEqual([['c', 3], ['b', 2], ['a', 1]]);
    expect(experimentNumbers(ids('d', 'c', 'b', 'a')).get('a')).toBe(1);
  });

  it('shows the rows under the viewport and a margin, within the result', () => {
    // 28 px rows, 560 px viewport scrolled to 2,800 px: rows 100..119 visible, 10 more each side.
    expect(visibleRows(2800, 560, 28, 100_000)).toEqual({ first: 90, last: 129 });
    expect(visibleRows(0, 560, 28, 5)).toEqual({ first: 0, last: 4 });
    expect(visibleRows(0, 560, 28, 0)).toEqual({ first: 0, last: -1 });
  });
});
