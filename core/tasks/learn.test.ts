import { describe, expect, it } from 'vitest';
import { DatasetError } from './errors.ts';
import { LEARN_SIZES, LEARN_TOOLS, learnGrader, learnTask, mentionsWord } from './learn.ts';
import { datasetNames, getDataset } from './registry.ts';
import type { Task } from './types.ts';

const grade = (answer: unknown, task: Task) => learnGrader.grade(answer, task);

describe('the learn task family', () => {
  it('is registered: learn (mixed), learn-word, learn-json, learn-tool, learn-team', () => {
    expect(datasetNames()).toEqual(expect.arrayContaining(['learn', 'learn-word', 'learn-json', 'learn-tool', 'learn-team']));
    const mixed = getDataset('learn').load({ split: 'train', limit: 6 });
    expect(mixed.map((t) => t.input.kind)).toEqual(['word', 'json', 'tool', 'word', 'json', 'tool']);
    expect(mixed.map((t) => t.id)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `learn/train/${i}`));
  });

  it('is deterministic and procedural: the same split and index give the same task, anywhere', () => {
    const a = getDataset('learn-tool').load({ split: 'heldout', offset: 10, limit: 5 });
    const b = getDataset('learn-tool').load({ split: 'heldout', offset: 10, limit: 5 });
    expect(a).toEqual(b);
    expect(a[0]).toEqual(learnTask('tool', 'heldout', 10));
    // Known values pin the generator (a change of seed or templates is a change of dataset).
    expect(learnTask('word', 'train', 0)).toEqual({ id: 'learn-word/train/0', index: 0, input: { kind: 'word', prompt: expect.any(String), target: 'happy' }, expected: 'happy' });
    expect(getDataset('learn-word').load({ split: 'train', limit: 3 }).map((t) => t.input.prompt)).toEqual([
      'Jack found a red hat near the beach.',
      'Lily found a small box near the garden.',
      'Jack and Max played in the beach.',
    ]);
  });

  it('splits never share a prompt; sizes, offsets and limits behave like file datasets', () => {
    for (const name of ['learn-word', 'learn-json', 'learn-tool', 'learn-team']) {
      const ds = getDataset(name);
      const key = (t: Task) => JSON.stringify({ ...t.input, kind: undefined });
      const train = new Set(ds.load({ split: 'train' }).map(key));
      const heldout = ds.load({ split: 'heldout' });
      expect(train.size).toBeGreaterThan(name === 'learn-json' ? 8 : 100);
      if (name !== 'learn-json') expect(heldout.filter((t) => train.has(key(t)))).toEqual([]);
    }
    const ds = getDataset('learn-word');
    expect(ds.load({ split: 'train' })).toHaveLength(LEARN_SIZES.train);
    expect(ds.load({ split: 'heldout', offset: 498 })).toHaveLength(2);
    expect(ds.load({ split: 'heldout', offset: 600 })).toEqual([]);
    expect(() => ds.load({ split: 'test' })).toThrow(DatasetError);
    expect(() => ds.load({ split: 'train', limit: -1 })).toThrow(/limit must be a non-negative integer/);
  });

  it('word: 1 when the text says the target as a whole word (any case), else 0', () => {
    const t = learnTask('word', 'train', 3);
    expect(t.input.prompt).not.toMatch(/happy/i);
    expect(grade(' He was very happy.', t)).toMatchObject({ score: 1, correct: true, extracted: 'happy' });
    expect(grade('Happy days!', t).score).toBe(1);
    expect(grade('"happy"', t).score).toBe(1);
    expect(grade('She was unhappy.', t).score).toBe(0);
    expect(grade('They were happyish and happier.', t).score).toBe(0);
    expect(grade('', t)).toMatchObject({ score: 0, correct: false, extracted: null });
    expect(grade(undefined, t)).toMatchObject({ score: 0, reason: 'there is no answer' });
    expect(grade({ text: 'so happy' }, t).score).toBe(1);
    expect(mentionsWord('Ça va, Héllo happy', 'héllo')).toBe(true);
    expect(mentionsWord('xhappy', 'happy')).toBe(false);
  });

  it('json: the object continuing the prompt\'s prefix (or a whole object) must have n equal to the number', () => {
    const t = learnTask('json', 'train', 0);
    const n = t.input.number as number;
    expect(t.input.prompt).toMatch(new RegExp(`Number: ${n}\\nJSON: \\{"n":$`));
    expect(t.expected).toBe(String(n));
    expect(grade(` ${n}}`, t)).toMatchObject({ score: 1, extracted: String(n) });
    expect(grade(` ${n}} and more text {`, t).score).toBe(1);
    expect(grade(`{"n": ${n}}`, t).score).toBe(1);
    expect(grade({ n }, t).score).toBe(1);
    expect(grade(` ${n + 1}}`, t)).toMatchObject({ score: 0, extracted: String(n + 1) });
    expect(grade(` "${n}"}`, t).score).toBe(0); // a string is not the number
    expect(grade(` ${n}`, t)).toMatchObject({ score: 0, extracted: null }); // never closed
    expect(grade(`{"m": ${n}}`, t)).toMatchObject({ score: 0, extracted: null });
    expect(grade('the number', t).score).toBe(0);
  });

  it('tool: the tool field, or the first word of the text, must name the tool the request needs', () => {
    const tasks = getDataset('learn-tool').load({ split: 'train', limit: 60 });
    expect(new Set(tasks.map((t) => t.expected))).toEqual(new Set(LEARN_TOOLS));
    const calc = tasks.find((t) => t.expected === 'calculator')!;
    expect(calc.input.prompt).toMatch(/^Tools: (calculator|weather|search), (calculator|weather|search), (calculator|weather|search)\.\nRequest: .+\nTool:$/);
    expect(calc.input.request).toMatch(/\d/);
    expect(grade(' calculator', calc)).toMatchObject({ score: 1, extracted: 'calculator' });
    expect(grade('Calculator.', calc).score).toBe(1);
    expect(grade('"calculator"', calc).score).toBe(1);
    expect(grade({ tool: 'calculator' }, calc).score).toBe(1);
    expect(grade(' weather, then calculator', calc)).toMatchObject({ score: 0, extracted: 'weather' });
    expect(grade('calc', calc).score).toBe(0);
    expect(grade({ tool: 'search' }, calc).score).toBe(0);
    expect(grade(42, calc).score).toBe(0);
  });

  it('team: a story start for the planner and a tool request for the solver; graded on the tool', () => {
    const t = learnTask('team', 'heldout', 7);
    expect(t.input).toMatchObject({ kind: 'team', target: 'happy', story: expect.any(String), request: expect.any(String), tools: expect.any(String) });
    expect(grade(t.expected, t).score).toBe(1);
    expect(grade('nothing', t).score).toBe(0);
    expect(grade('x', { ...t, input: { prompt: 'p' } })).toMatchObject({ score: 0, reason: expect.stringContaining('no learn kind') });
  });
});
