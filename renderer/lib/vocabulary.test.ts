import { describe, expect, it } from 'vitest';
import { plannedRuns, runTally, startLiveRun, tallyText } from './liveRun.ts';
import { experimentContext, kindLabel, modelsLabel, modelsOfOuterLoop, outcomeText, rolloutGroupOf, runTaskLabel } from './vocabulary.ts';

describe('the CLI\'s words for the views', () => {
  it('kinds as `flowlab ls` prints them: a blame-eval says its faults are SIMULATED', () => {
    expect(kindLabel('blame-eval')).toBe('blame-eval (SIMULATED faults)');
    expect(['run', 'rollouts', 'import', 'mass'].map(kindLabel)).toEqual(['run', 'rollouts', 'import', 'mass']);
  });

  it('tasks: the index, or task/rollout in a group of G (run 5 of G = 4 is task 1, rollout 1)', () => {
    expect(runTaskLabel(5, 0)).toBe('5');
    expect(runTaskLabel(5, 4)).toBe('1/1');
    expect(runTaskLabel(0, 8)).toBe('0/0');
    expect(runTaskLabel(15, 8)).toBe('1/7');
    expect(rolloutGroupOf({ kind: 'rollouts', config: { rollouts: { group: 8 } } })).toBe(8);
    // Only a rollouts experiment has groups; a bad or missing size is none.
    expect(rolloutGroupOf({ kind: 'run', config: { rollouts: { group: 8 } } })).toBe(0);
    expect(rolloutGroupOf({ kind: 'rollouts', config: { rollouts: { group: 0 } } })).toBe(0);
    expect(rolloutGroupOf({ kind: 'rollouts', config: null })).toBe(0);
    expect(rolloutGroupOf(undefined)).toBe(0);
  });

  it('outcomes: status then grade, a failed run graded wrong', () => {
    expect(outcomeText({ status: 'failed', correct: false })).toBe('failed · wrong');
    expect(outcomeText({ status: 'completed', correct: false })).toBe('completed · wrong');
    expect(outcomeText({ status: 'completed', correct: true })).toBe('completed · correct');
  });

  it("an outer loop's models: its champion runs' experiments (<prefix>-t<i>-r<j>), not its judge pairs or another loop's", () => {
    const experiments = [
      { id: 'rsi-a-c1-shared-t0-r0', models: ['stories260K.gguf'] },
      { id: 'rsi-a-c1-shared-t1-r5', models: ['stories260K.gguf'] },
      { id: 'rsi-a-c1-shared-t0-p3', models: [] },
      { id: 'rsi-a-c2-self-t0-r0', models: ['iter-001.gguf'] },
      { id: 'rsi-a-c1-shared-t0-r0x', models: ['nope.gguf'] },
      { id: 'rsi-ab-c1-shared-t0-r0', models: ['other.gguf'] },
    ];
    expect(modelsOfOuterLoop(['rsi-a-c1-shared', 'rsi-a-c2-self'], experiments)).toEqual(['iter-001.gguf', 'stories260K.gguf']);
    expect(modelsLabel(modelsOfOuterLoop(['rank-t'], experiments))).toBe('-');
  });

  it('models: base names joined, `-` when none recorded, in show\'s first line', () => {
    expect(modelsLabel(['judge.gguf', 'tiny.gguf'])).toBe('judge.gguf, tiny.gguf');
    expect(modelsLabel([])).toBe('-');
    expect(modelsLabel(undefined)).toBe('-');
    expect(experimentContext({ kind: 'blame-eval', workflowName: 'team', dataset: 'gsm8k', split: 'test', models: ['tiny.gguf'] })).toBe('blame-eval (SIMULATED faults) · workflow team · dataset gsm8k/test · models tiny.gguf');
  });

  it('the live tally plans runs as `flowlab run` counts them: 3 tasks × G = 2 rollouts are 6 runs, not 3 tasks', () => {
    expect(plannedRuns({ kind: 'rollouts', limit: 3, group: 2 })).toBe(6);
    expect(plannedRuns({ kind: 'run', limit: 3, inject: ['solver=wrong@1'], runs: 10 })).toBe(10);
    expect(plannedRuns({ kind: 'run', limit: 3, inject: ['solver=wrong@1'] })).toBe(3);
    expect(plannedRuns({ limit: 3 })).toBe(3);
    expect(tallyText(runTally({ ...startLiveRun('e', plannedRuns({ kind: 'rollouts', limit: 3, group: 2 }), 2), done: 1, runsCorrect: 1 }))).toBe('1 / 6 runs · ✓ 1 correct · ✗ 0 wrong · ⚠ 0 failed · ⊘ 0 cancelled');
  });
});
