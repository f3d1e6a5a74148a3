import { describe, expect, it } from 'vitest';
import { DatasetError } from './errors.ts';
import { LEARN_DESIGN_SIZES, LEARN_DESIGN_TOOLS, learnDesignClass, learnDesignGrader, learnDesignTask, readToolCalls } from './learnDesign.ts';
import { datasetNames, getDataset } from './registry.ts';
import type { Task } from './types.ts';

const grade = (answer: unknown, task: Task) => learnDesignGrader.grade(answer, task);
const task = (expected: string): Task => ({ id: 't', index: 0, input: { kind: 'design', request: 'x' }, expected });

describe('the learn-design task family', () => {
  it('is registered with its splits and a class per task', () => {
    expect(datasetNames()).toContain('learn-design');
    const ds = getDataset('learn-design');
    expect(ds.splits).toEqual(['train', 'heldout']);
    const first = ds.load({ split: 'train', limit: 6 });
    expect(first.map((t) => t.id)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `learn-design/train/${i}`));
    expect(first.map((t) => ds.classOf!(t))).toEqual(['weather', 'search', 'math', 'weather', 'search', 'math']);
    expect(learnDesignClass({ expected: 'search:books' })).toBe('search');
  });

  it('is deterministic: known tasks pin the generator', () => {
    const a = getDataset('learn-design').load({ split: 'heldout', offset: 10, limit: 5 });
    expect(getDataset('learn-design').load({ split: 'heldout', offset: 10, limit: 5 })).toEqual(a);
    expect(a[0]).toEqual(learnDesignTask('heldout', 10));
    const ds = getDataset('learn-design').load({ split: 'train', limit: 3 });
    expect(ds.map((t) => [t.input.request, t.expected])).toEqual([
      ['Is it cold in Cairo now?', 'weather:now'],
      ['Search for a story about a horse.', 'search:story'],
      ['Add 20 and 1.', 'math:add'],
    ]);
    expect(ds[0]).toEqual({ id: 'learn-design/train/0', index: 0, input: { kind: 'design', request: 'Is it cold in Cairo now?' }, expected: 'weather:now', meta: { class: 'weather', tool: 'weather', port: 'day', argument: 'now' } });
  });

  it('has disjoint splits, the sizes, balanced classes, every argument, and requests that name their cue', () => {
    const ds = getDataset('learn-design');
    const train = ds.load({ split: 'train' });
    const heldout = ds.load({ split: 'heldout' });
    expect(train).toHaveLength(LEARN_DESIGN_SIZES.train);
    expect(heldout).toHaveLength(LEARN_DESIGN_SIZES.heldout);
    const trainRequests = new Set(train.map((t) => t.input.request));
    expect(trainRequests.size).toBeGreaterThan(500);
    expect(heldout.filter((t) => trainRequests.has(t.input.request))).toEqual([]);
    for (const [split, tasks] of [['train', train], ['heldout', heldout]] as const) {
      const byClass = new Map<string, number>();
      for (const t of tasks) byClass.set(learnDesignClass(t), (byClass.get(learnDesignClass(t)) ?? 0) + 1);
      const n = tasks.length;
      // The tool cycles with the index: 2000 = 667 + 667 + 666, 500 = 167 + 167 + 166.
      expect(Object.fromEntries(byClass), split).toEqual({ weather: Math.ceil(n / 3), search: Math.ceil((n - 1) / 3), math: Math.floor(n / 3) });
      const expectedSet = new Set(tasks.map((t) => t.expected));
      expect(expectedSet.size, split).toBe(10); // every (tool, argument)
    }
    const cue: Record<string, RegExp> = { today: /today/, tomorrow: /tomorrow/, now: /now\?/, story: /story/, word: /word/, books: /books/, facts: /facts/, add: /plus|Add/, multiply: /times|Multiply/, subtract: /minus|Subtract/ };
    for (const t of train.slice(0, 300)) expect(t.input.request as string, t.expected).toMatch(cue[t.expected.split(':')[1]!]!);
    expect(Object.keys(LEARN_DESIGN_TOOLS)).toEqual(['weather', 'search', 'math']);
  });

  it('refuses bad splits, options and indexes', () => {
    const ds = getDataset('learn-design');
    expect(() => ds.load({ split: 'test' })).toThrow(DatasetError);
    expect(() => ds.load({ split: 'train', offset: -2 })).toThrow(/offset must be a non-negative integer/);
    expect(() => learnDesignTask('train', 1.5)).toThrow(/index must be a non-negative integer/);
    expect(ds.load({ split: 'heldout', offset: 499 })).toHaveLength(1);
  });

  it('reads tool calls from texts and objects', () => {
    expect(readToolCalls('weather:tomorrow')).toEqual([{ tool: 'weather', argument: 'tomorrow' }]);
    expect(readToolCalls('Search:Books then math:add')).toEqual([{ tool: 'search', argument: 'books' }, { tool: 'math', argument: 'add' }]);
    expect(readToolCalls({ tool: 'weather', day: 'now' })).toEqual([{ tool: 'weather', argument: 'now' }]);
    expect(readToolCalls({ answer: 'math:add' })).toEqual([{ tool: 'math', argument: 'add' }]);
    expect(readToolCalls({ text: 'no call here' })).toEqual([]);
    expect(readToolCalls('{"tool":"weather"}')).toEqual([]);
    expect(readToolCalls(7)).toEqual([]);
    expect(readToolCalls('tomorrow')).toEqual([{ tool: '', argument: 'tomorrow' }]); // an args skill's answer: no tool called
    expect(readToolCalls('"books"')).toEqual([{ tool: '', argument: 'books' }]);
    expect(readToolCalls('yesterday')).toEqual([]);
  });

  it('grades per part: right tool, right argument (hand-computed scores)', () => {
    const t = task('weather:tomorrow');
    expect(grade('weather:tomorrow', t)).toEqual({ score: 1, correct: true, extracted: 'weather:tomorrow', expected: 'weather:tomorrow', reason: 'called weather:tomorrow' });
    expect(grade('weather:now', t)).toMatchObject({ score: 0.5, correct: false, extracted: 'weather:now', reason: 'call 1: weather with now, expected tomorrow' });
    expect(grade('search:story', t)).toMatchObject({ score: 0, correct: false, reason: 'call 1: tool search, expected weather' });
    expect(grade('', t)).toMatchObject({ score: 0, correct: false, extracted: null, reason: 'call 1: none, expected weather:tomorrow' });
    expect(grade(undefined, t)).toMatchObject({ score: 0, reason: 'there is no answer' });
    expect(grade({ tool: 'weather', argument: 'tomorrow' }, t)).toMatchObject({ score: 1, correct: true });
    // The bare argument: the argument part without the tool part.
    expect(grade('tomorrow', t)).toMatchObject({ score: 0.5, correct: false, extracted: 'tomorrow', reason: 'call 1: no tool called, expected weather:tomorrow' });
    expect(grade('now', t)).toMatchObject({ score: 0, correct: false, reason: 'call 1: no tool called, argument now, expected weather:tomorrow' });
    // A call too many: 2 parts right of 2·2.
    expect(grade('weather:tomorrow math:add', t)).toMatchObject({ score: 0.5, correct: false, reason: '1 call(s) too many' });
    // Two expected calls in order: tool right + argument wrong on the first, both right on the second = 3/4.
    const two = task('search:facts weather:today');
    expect(grade('search:books weather:today', two)).toMatchObject({ score: 0.75, correct: false });
    expect(grade('weather:today search:facts', two)).toMatchObject({ score: 0, correct: false });
    expect(grade('search:facts', two)).toMatchObject({ score: 0.5, correct: false });
    expect(grade('search:facts weather:today', two)).toMatchObject({ score: 1, correct: true });
  });
});

describe('the learn-design held-out split says what is new (issue 24)', () => {
  // A request's template: numbers -> N, every filler of either split -> X.
  const FILLERS = ['Paris', 'Rome', 'Tokyo', 'Cairo', 'Berlin', 'Madrid', 'cat', 'dog', 'horse', 'whale', 'tiger', 'moon', 'tree', 'river', 'cloud', 'trains', 'stars', 'boats', 'plants', 'Oslo', 'Lima', 'Delhi', 'Quito', 'owl', 'frog', 'shark', 'sun', 'hill', 'snow', 'birds', 'rocks', 'kites'];
  const shape = (s: string) => s.replace(/\d+/g, 'N').replace(new RegExp(`\\b(${FILLERS.join('|')})\\b`, 'g'), 'X').replace(/^(Will it rain|Will it snow|Is it sunny|Is it cold|Is it windy)/, 'ASK');
  const ds = getDataset('learn-design');
  const train = ds.load({ split: 'train' });
  const heldout = ds.load({ split: 'heldout' });
  const trainShapes = new Set(train.map((t) => shape(t.input.request as string)));

  it('every fourth held-out task (index mod 4 = 3) is new-wording: a template no other split uses; the rest reuse training templates', () => {
    expect(heldout.slice(0, 8).map((t) => t.meta?.novelty)).toEqual(['in-template', 'in-template', 'in-template', 'new-wording', 'in-template', 'in-template', 'in-template', 'new-wording']);
    expect(heldout.filter((t) => t.meta?.novelty === 'new-wording')).toHaveLength(125);
    const others = new Set([...getDataset('learn-design-ood').load({ split: 'test' }), ...getDataset('learn-errand').load({ split: 'test' })].map((t) => t.input.request as string));
    for (const t of heldout) {
      const known = trainShapes.has(shape(t.input.request as string));
      expect(known, `${t.id}: ${String(t.input.request)}`).toBe(t.meta?.novelty === 'in-template');
      expect(others.has(t.input.request as string)).toBe(false);
    }
    expect(train.every((t) => t.meta?.novelty === undefined)).toBe(true);
    // The new wordings keep the cue word: e.g. index 3 (weather) and 7 (search).
    expect(heldout[3]!.input.request).toMatch(/^(Do I need an umbrella in|Should I take a coat to|What is the weather doing in) \w+ (today|tomorrow|now)\?$/);
    expect(ds.novelty?.heldout).toMatch(/^in-template \(index mod 4 != 3\).*new-wording \(index mod 4 = 3\)/);
    expect(getDataset('learn-design-ood').novelty?.test).toMatch(/^new-wording only/);
    expect(getDataset('learn').novelty?.heldout).toMatch(/^in-template only/);
  });

  it('keeps every held-out label: the argument is drawn before the template', () => {
    // The labels of held-out tasks 0..47 as counted before the new wordings were added.
    const counts: Record<string, number> = {};
    for (const t of heldout.slice(0, 48)) counts[t.expected] = (counts[t.expected] ?? 0) + 1;
    expect(counts).toEqual({ 'math:multiply': 10, 'weather:now': 8, 'search:facts': 7, 'math:add': 5, 'weather:tomorrow': 5, 'search:books': 4, 'search:story': 3, 'weather:today': 3, 'search:word': 2, 'math:subtract': 1 });
  });
});
