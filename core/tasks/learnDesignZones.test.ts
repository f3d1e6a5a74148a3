import { describe, expect, it } from 'vitest';
import { getDataset } from './registry.ts';
import { learnDesignClass } from './learnDesign.ts';
import { learnZoneTask } from './learnDesignZones.ts';
import type { Grade } from './types.ts';

/** A grade the dataset's (synchronous) grader gave; these families' graders never answer with a promise. */
function now(g: Grade | Promise<Grade>): Grade {
  if (g instanceof Promise) throw new Error('expected a synchronous grade');
  return g;
}

describe('the learn-design zones', () => {
  it('are registered with one split, balanced classes and every (tool, argument)', () => {
    for (const name of ['learn-design-ood', 'learn-errand']) {
      const ds = getDataset(name);
      expect(ds.splits).toEqual(['test']);
      const tasks = ds.load({ split: 'test' });
      expect(tasks).toHaveLength(300);
      expect(tasks[0]!.id).toBe(`${name}/test/0`);
      const counts: Record<string, number> = {};
      for (const t of tasks) counts[learnDesignClass(t)] = (counts[learnDesignClass(t)] ?? 0) + 1;
      expect(counts).toEqual({ weather: 100, search: 100, math: 100 });
      expect(new Set(tasks.map((t) => t.expected)).size).toBe(10);
      expect(() => ds.load({ split: 'train' })).toThrow(/valid splits: test/);
    }
  });

  it('never repeats a learn-design request, and are graded by the learn-design grader', () => {
    const base = getDataset('learn-design');
    const seen = new Set([...base.load({ split: 'train' }), ...base.load({ split: 'heldout' })].map((t) => t.input.request));
    for (const name of ['learn-design-ood', 'learn-errand']) {
      const tasks = getDataset(name).load({ split: 'test' });
      expect(tasks.filter((t) => seen.has(t.input.request))).toEqual([]);
      const t = tasks[0]!;
      expect(now(getDataset(name).grader.grade(t.expected, t)).correct).toBe(true);
      expect(now(getDataset(name).grader.grade('search:story', { ...t, expected: 'weather:today' })).score).toBe(0);
    }
  });

  it('is deterministic: known tasks pin the generators', () => {
    expect(learnZoneTask('ood', 0)).toEqual(getDataset('learn-design-ood').load({ split: 'test', limit: 1 })[0]);
    const show = (name: string) => getDataset(name).load({ split: 'test', limit: 3 }).map((t) => [t.input.request, t.expected]);
    expect(show('learn-design-ood')).toMatchInlineSnapshot(`
      [
        [
          "Tell me the weather in Nairobi tomorrow.",
          "weather:tomorrow",
        ],
        [
          "Tell me some facts on the fox.",
          "search:facts",
        ],
        [
          "Please multiply 45 with 48.",
          "math:multiply",
        ],
      ]
    `);
    expect(show('learn-errand')).toMatchInlineSnapshot(`
      [
        [
          "My washing is outside in Nairobi now. Should I bring it in?",
          "weather:now",
        ],
        [
          "My child wants a bedtime story with a fox in it.",
          "search:story",
        ],
        [
          "Each of 3 kids gets 6 sweets. How many sweets in all?",
          "math:multiply",
        ],
      ]
    `);
  });
});
