import { describe, expect, it } from 'vitest';
import { constantFlag } from '../../core/api/client.ts';
import { experimentGuard, guardSummary } from './experimentGuard.ts';

describe('experimentGuard: the Experiments view\'s guard counts the dataset\'s classes as the CLI does', () => {
  // 18 runs: 6 labels 3 times each (2 per tool); answers: 6 x weather:today, 5 x search:facts, 4 x math:add, 3 x math:multiply.
  const labels = ['weather:today', 'weather:now', 'search:facts', 'search:books', 'math:add', 'math:multiply'].flatMap((l) => [l, l, l]);
  const answers = [...Array(6).fill('weather:today'), ...Array(5).fill('search:facts'), ...Array(4).fill('math:add'), ...Array(3).fill('math:multiply')] as string[];
  const runs = labels.map((expected, i) => ({ expected, answer: answers[i] }));

  it('learn-design: 4 distinct answers against 3 tools is not constant', () => {
    const g = experimentGuard(runs, 'learn-design')!;
    expect(g).toMatchObject({ distinctAnswers: 4, classes: 3 });
    expect(g.constant).toBeUndefined();
    // Best constant: every label 3 of 18 (16.7%); ties go to the first name, math:add.
    expect(guardSummary(g)).toBe('best constant 16.7% · 4 answers');
  });

  it('a dataset without classes counts the 6 repeated labels: the same answers are fewer than its classes', () => {
    const g = experimentGuard(runs, 'toy')!;
    expect(g).toMatchObject({ distinctAnswers: 4, classes: 6 });
    // The top answer, weather:today, is 6 of 18 runs (33.3%).
    expect(constantFlag(g)).toBe('CONSTANT "weather:today" 33.3% (4 answers < 6 classes)');
  });

  it('no run: no guard', () => {
    expect(experimentGuard([], 'learn-design')).toBeNull();
  });
});
