import { describe, expect, it } from 'vitest';
import { learnJudgeTask } from './learnJudge.ts';
import { createLearnUnitDataset, learnUnitGrader, learnUnitTask, unitMistakeOf, type UnitTaskMeta } from './learnUnit.ts';
import { getDataset } from './registry.ts';
import type { Task } from './types.ts';

/** A learn-unit task written by hand: 63, km asked, mi the other unit. */
const hand: Task = { id: 'learn-unit/heldout/0', index: 0, input: { kind: 'unit', request: 'Give the distance Quito to Oslo in km.', reading: '63' }, expected: '63 km', meta: { quantity: 'distance', value: 63, unit: 'km', other: 'mi', options: ['63 km', '63 mi', '?? km', 'none', 'error'] } };

describe('learn-unit: the solving side of learn-judge', () => {
  it('grades 1 only for the right number in the unit the request names; names every other class', () => {
    const g = (a: unknown) => learnUnitGrader.grade(a, hand);
    expect(g('63 km')).toMatchObject({ score: 1, correct: true, extracted: '63 km' });
    expect(g('"63 km"').score).toBe(1); // JSON text of the decoded string
    expect(g('63 mi')).toMatchObject({ score: 0, reason: 'the right number in the wrong unit (63 mi; the request asks for 63 km)' });
    expect(g('?? km')).toMatchObject({ score: 0, reason: 'wrong (lost-number)' });
    expect(g('62 km').score).toBe(0);
    expect(g(undefined)).toMatchObject({ score: 0, extracted: null, reason: 'wrong (other)' });
    expect(['63 km', '63 mi', '?? km', 'none', 'error', '63 kg', 42, undefined].map((a) => unitMistakeOf(a, hand))).toEqual(['right', 'blind-unit', 'lost-number', 'none', 'error', 'other', 'other', 'other']);
  });

  it('task k is learn-judge pair k: the same request, the right answer as expected, the five offered forms', () => {
    for (const split of ['train', 'heldout'] as const) {
      for (const k of [0, 1, 7]) {
        const t = learnUnitTask(split, k);
        const j = learnJudgeTask(split, 2 * k, 0);
        const jm = j.meta as { right: string; unit: string };
        const m = t.meta as unknown as UnitTaskMeta;
        expect(t.input.request).toBe(j.input.request);
        expect(t.expected).toBe(jm.right);
        expect(t.input.reading).toBe(jm.right.split(' ')[0]);
        expect(m.options).toEqual([jm.right, `${m.value} ${m.other}`, `?? ${m.unit}`, 'none', 'error']);
        expect(new Set([m.unit, m.other])).toEqual(new Set(({ distance: ['km', 'mi'], temperature: ['C', 'F'], weight: ['kg', 'lb'] } as const)[m.quantity]));
        expect(learnUnitGrader.grade(m.options[0], t).score).toBe(1);
        expect(m.options.slice(1).map((o) => learnUnitGrader.grade(o, t).score)).toEqual([0, 0, 0, 0]);
      }
    }
  });

  it('loads by split, offset and limit through the registry; held-out numbers are 60-99, training ones 2-59', () => {
    const d = getDataset('learn-unit');
    expect(d.name).toBe('learn-unit');
    expect(d.load({ split: 'train', offset: 3, limit: 2 }).map((t) => t.id)).toEqual(['learn-unit/train/3', 'learn-unit/train/4']);
    expect(createLearnUnitDataset().load({ split: 'heldout' })).toHaveLength(250);
    const value = (t: Task) => (t.meta as unknown as UnitTaskMeta).value;
    expect(d.load({ split: 'train', limit: 50 }).every((t) => value(t) >= 2 && value(t) <= 59)).toBe(true);
    expect(d.load({ split: 'heldout', limit: 50 }).every((t) => value(t) >= 60 && value(t) <= 99)).toBe(true);
    expect(() => learnUnitTask('train', -1)).toThrow(/non-negative integer/);
  });
});
