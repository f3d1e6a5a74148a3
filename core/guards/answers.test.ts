import { describe, expect, it } from 'vitest';
import { answerGuard, constantFlag, deltaGuardNote, guardNote } from './answers.ts';
import { accuracyByNovelty } from './novelty.ts';

const tool = (label: string) => label.split(':')[0]!;
const runs = (pairs: Array<[string | undefined, string]>) => pairs.map(([answer, expected]) => ({ answer, expected }));

describe('answerGuard', () => {
  it('a constant policy: one answer to every task is CONSTANT with share 1, beside the best constant from the labels', () => {
    // Labels: weather:today x3, search:facts x2, math:add x1 (n = 6): the best constant is weather:today, 3/6.
    const g = answerGuard(runs([['math:add', 'weather:today'], ['math:add', 'weather:today'], ['math:add', 'weather:today'], ['math:add', 'search:facts'], ['math:add', 'search:facts'], ['math:add', 'math:add']]), tool);
    expect(g.bestConstant).toEqual({ answer: 'weather:today', accuracy: 0.5 });
    expect(g.bestConstantClass).toEqual({ class: 'weather', accuracy: 0.5 });
    expect(g.distinctAnswers).toBe(1);
    expect(g.classes).toBe(3);
    expect(g.constant).toEqual({ reason: 'one-answer', answer: 'math:add', share: 1 });
    expect(constantFlag(g)).toBe('CONSTANT "math:add" 100.0%');
    expect(guardNote(g)).toBe('best constant 50.0% · 1 answer · CONSTANT "math:add" 100.0%');
  });

  it('fewer distinct answers than classes is CONSTANT with the top answer and its share', () => {
    // 3 classes; answers: search:facts x3, math:add x1 -> 2 distinct < 3 classes; top share 3/4.
    const g = answerGuard(runs([['search:facts', 'weather:now'], ['search:facts', 'search:facts'], ['search:facts', 'math:add'], ['math:add', 'math:add']]), tool);
    expect(g.distinctAnswers).toBe(2);
    expect(g.constant).toEqual({ reason: 'fewer-than-classes', answer: 'search:facts', share: 0.75 });
    expect(constantFlag(g)).toBe('CONSTANT "search:facts" 75.0% (2 answers < 3 classes)');
    // Best constant: math:add 2/4 (ties broken by name, math:add < search:facts < weather:now).
    expect(g.bestConstant).toEqual({ answer: 'math:add', accuracy: 0.5 });
  });

  it('a varied policy is not flagged; missing answers count as one value (none)', () => {
    const g = answerGuard(runs([['weather:now', 'weather:now'], [undefined, 'search:word'], ['math:add', 'math:add'], [' weather:now ', 'weather:today']]), tool);
    expect(g.distinctAnswers).toBe(3);
    expect(g.topAnswer).toEqual({ answer: 'weather:now', share: 0.5 });
    expect(g.constant).toBeUndefined();
    expect(constantFlag(g)).toBe('');
    expect(guardNote(g)).toBe('best constant 25.0% · 3 answers');
  });

  it('without classOf: classes are the distinct labels only when labels repeat (n/2 or fewer), else only one answer counts', () => {
    // 4 runs, 2 distinct labels (<= 4/2): classes 2; 1 answer -> one-answer.
    expect(answerGuard(runs([['x', 'a'], ['x', 'a'], ['x', 'b'], ['x', 'b']])).classes).toBe(2);
    // Open answers (GSM8K-like): 4 distinct labels in 4 runs -> no classes; 2 distinct answers -> not flagged.
    const open = answerGuard(runs([['1', '10'], ['1', '11'], ['2', '12'], ['2', '13']]));
    expect(open.classes).toBeUndefined();
    expect(open.constant).toBeUndefined();
    expect(open.bestConstant).toEqual({ answer: '10', accuracy: 0.25 });
  });

  it('one run, or none, is never CONSTANT; no label gives no best constant', () => {
    expect(answerGuard(runs([['a', 'b']])).constant).toBeUndefined();
    const none = answerGuard([]);
    expect(none).toEqual({ runs: 0, labelled: 0, bestConstant: null, distinctAnswers: 0, topAnswer: null });
    expect(guardNote(none)).toBe('best constant - · 0 answers');
  });

  it('deltaGuardNote names a difference between constants', () => {
    const c = { constant: { reason: 'one-answer' as const, answer: 'x', share: 1 } };
    expect(deltaGuardNote(c, c)).toBe('both constant');
    expect(deltaGuardNote(c, {})).toBe('one constant');
    expect(deltaGuardNote({}, undefined)).toBe('');
  });
});

describe('accuracyByNovelty', () => {
  it('splits accuracy by the task novelty, each part with its guard; undefined with one kind only', () => {
    const novelty = (id: string) => (id === 'x' ? undefined : Number(id.slice(1)) % 4 === 3 ? 'new-wording' : 'in-template');
    const r = (taskId: string, answer: string, expected: string) => ({ taskId, answer, expected, correct: answer === expected });
    const runs = [r('t0', 'a', 'a'), r('t1', 'b', 'b'), r('t2', 'a', 'b'), r('t3', 'a', 'b'), r('t7', 'a', 'a'), r('x', 'a', 'a')];
    const by = accuracyByNovelty(runs, novelty)!;
    // in-template t0 t1 t2: 2 of 3 right; new-wording t3 t7: 1 of 2, both answered "a": CONSTANT; x has no novelty: left out.
    expect(Object.keys(by)).toEqual(['in-template', 'new-wording']);
    expect(by['in-template']).toMatchObject({ runs: 3, accuracy: 2 / 3 });
    expect(by['in-template']!.guard.constant).toBeUndefined();
    expect(by['new-wording']).toMatchObject({ runs: 2, accuracy: 0.5, guard: { distinctAnswers: 1, constant: { answer: 'a', share: 1 } } });
    expect(accuracyByNovelty(runs.slice(0, 3), novelty)).toBeUndefined();
  });
});
