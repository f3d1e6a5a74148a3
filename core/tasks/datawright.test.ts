import { describe, expect, it } from 'vitest';
import { DATAWRIGHT_STRATEGIES, DatasetError, composeDataset, getDataset, parseDataWrightName, splitAnswer, type DataWrightPart, type Dataset, type Grader, type Task } from './index.ts';
import type { Grade } from './types.ts';

/** A grade the dataset's (synchronous) grader gave; these families' graders never answer with a promise. */
function now(g: Grade | Promise<Grade>): Grade {
  if (g instanceof Promise) throw new Error('expected a synchronous grade');
  return g;
}

/** Exact grader of the toy bases: the trimmed text must equal `expected`. */
const exact: Grader = {
  grade: (answer, task) => {
    const got = typeof answer === 'string' ? answer.trim() : null;
    const ok = got === task.expected;
    return { score: ok ? 1 : 0, correct: ok, extracted: got, expected: task.expected };
  },
};
/** 12 tasks in classes x, y, z (cycled by index): input {question: Q<i>, kind: toy}, expected <class><i>. */
function toy(n = 12, classes = true): Dataset {
  const cls = (i: number) => 'xyz'[i % 3]!;
  const tasks: Task[] = Array.from({ length: n }, (_, i) => ({ id: `toy/test/${i}`, index: i, input: { question: `Q${i}`, kind: 'toy' }, expected: `${cls(i)}${i}` }));
  return {
    name: classes ? 'toy' : 'plain',
    splits: ['test'],
    grader: exact,
    load: ({ offset = 0, limit = Infinity }) => tasks.slice(offset, offset + limit),
    ...(classes && { classOf: (t: Pick<Task, 'expected'>) => t.expected[0]! }),
  };
}
const partsOf = (t: Task) => t.meta!.parts as DataWrightPart[];
const first = (ds: Dataset, index = 0) => ds.load({ split: 'test', offset: index, limit: 1 })[0]!;
/** An answer with the listed parts right (1-based) and the others wrong, one line each. */
const answerWith = (t: Task, right: number[]) => partsOf(t).map((p, j) => `${j + 1}: ${right.includes(j + 1) ? p.task.expected : 'wrong'}`).join('\n');

describe('composeDataset: k = 1..4, each strategy, mean scoring', () => {
  for (const strategy of DATAWRIGHT_STRATEGIES) {
    for (const k of [1, 2, 3, 4]) {
      it(`${strategy}, k = ${k}: k graded parts, part 1 is base task 0, score = parts right / k`, () => {
        const ds = composeDataset(toy(), { strategy, k, seed: 0 });
        expect(ds.name).toBe(`datawright:${strategy}:${k}:toy`);
        const t = first(ds);
        const parts = partsOf(t);
        expect(parts).toHaveLength(k);
        expect(parts[0]!.task.id).toBe('toy/test/0');
        expect(new Set(parts.map((p) => p.task.id)).size).toBe(k);
        expect(t.meta).toMatchObject({ k, difficulty: k, strategy });
        expect(t.expected).toBe(parts.map((p, j) => `${j + 1}: ${p.task.expected}`).join('\n'));
        expect(now(ds.grader.grade(t.expected, t))).toMatchObject({ score: 1, correct: true });
        // only part 1 right: 1/k (1, 0.5, 0.333..., 0.25)
        const one = now(ds.grader.grade(answerWith(t, [1]), t));
        expect(one.score).toBeCloseTo([1, 0.5, 1 / 3, 0.25][k - 1]!, 12);
        expect(one.correct).toBe(k === 1);
        if (k === 4) expect(now(ds.grader.grade(answerWith(t, [1, 3]), t)).score).toBe(0.5);
        if (k === 3) expect(now(ds.grader.grade(answerWith(t, [2, 3]), t)).score).toBeCloseTo(2 / 3, 12);
        expect(now(ds.grader.grade(undefined, t))).toMatchObject({ score: 0, correct: false });
      });
    }
  }

  it('shared: every part has part 1\'s class; paired: classes step through x, y, z from part 1\'s', () => {
    const shared = first(composeDataset(toy(), { strategy: 'shared', k: 3 }), 1);
    expect(partsOf(shared).map((p) => p.task.expected[0])).toEqual(['y', 'y', 'y']);
    const paired = first(composeDataset(toy(), { strategy: 'paired', k: 4 }), 1);
    expect(partsOf(paired).map((p) => p.task.expected[0])).toEqual(['y', 'z', 'x', 'y']);
    expect(composeDataset(toy(), { strategy: 'paired', k: 4 }).classOf!(paired)).toBe('y+z+x+y');
  });

  it('paired without classes alternates base tasks and arithmetic parts whose answer is the computation', () => {
    const t = first(composeDataset(toy(12, false), { strategy: 'paired', k: 4 }));
    const parts = partsOf(t);
    expect(parts.map((p) => p.source)).toEqual(['base', 'arithmetic', 'base', 'arithmetic']);
    for (const p of parts.filter((x) => x.source === 'arithmetic')) {
      const m = /^What is (\d+) (plus|minus|times) (\d+)\?$/.exec(String(p.task.input.question))!;
      const [x, y] = [Number(m[1]), Number(m[3])];
      expect(p.task.expected).toBe(String(m[2] === 'plus' ? x + y : m[2] === 'minus' ? x - y : x * y));
    }
    // arithmetic parts are graded as numbers: "= 12.0" reads as 12
    const ds = composeDataset(toy(12, false), { strategy: 'paired', k: 2 });
    const t2 = first(ds);
    const arith = partsOf(t2)[1]!.task.expected;
    expect(now(ds.grader.grade(`1: ${partsOf(t2)[0]!.task.expected}\n2: = ${arith}.0`, t2)).score).toBe(1);
  });

  it('decoy: one unnumbered aside from another class; answering it changes nothing', () => {
    const ds = composeDataset(toy(), { strategy: 'decoy', k: 2 });
    const t = first(ds);
    const decoy = t.meta!.decoy as Task;
    expect(decoy.expected[0]).not.toBe('x');
    expect(partsOf(t).map((p) => p.task.id)).not.toContain(decoy.id);
    const text = String(t.input.question);
    expect(text).toContain(`Aside (not a part; do not answer it): ${String(decoy.input.question)}`);
    expect(text.split('\n').filter((l) => l.startsWith('Part '))).toHaveLength(2);
    expect(text.split('\n')[1 + (t.meta!.decoyAt as number)]).toMatch(/^Aside/);
    const withDecoy = `${t.expected}\n3: ${decoy.expected}`;
    expect(now(ds.grader.grade(withDecoy, t)).score).toBe(1);
  });

  it('keeps the base ports: the text port carries the composed text, the others are copied, k is added', () => {
    const t = first(composeDataset(toy(), { strategy: 'shared', k: 2 }));
    expect(Object.keys(t.input).sort()).toEqual(['k', 'kind', 'question']);
    expect(t.input).toMatchObject({ kind: 'toy', k: 2 });
    expect(String(t.input.question)).toMatch(/^Answer each of the 2 parts below; give the answers in order, one per line, as "<n>: <answer>"\.\nPart 1: Q0\nPart 2: Q\d$/);
    // k = 1 without a decoy is the base task's own text, graded as the base grades it
    const one = first(composeDataset(toy(), { strategy: 'shared', k: 1 }));
    expect(one.input.question).toBe('Q0');
    expect(now(composeDataset(toy(), { strategy: 'shared', k: 1 }).grader.grade('x0', one)).score).toBe(1);
  });

  it('is reproducible from the seed; another seed draws other parts', () => {
    const a = composeDataset(toy(), { strategy: 'shared', k: 3, seed: 0 }).load({ split: 'test' });
    const b = composeDataset(toy(), { strategy: 'shared', k: 3, seed: 0 }).load({ split: 'test' });
    const c = composeDataset(toy(), { strategy: 'shared', k: 3, seed: 7 }).load({ split: 'test' });
    expect(b).toEqual(a);
    expect(a).toHaveLength(12);
    expect(c.map((t) => t.expected)).not.toEqual(a.map((t) => t.expected));
    expect(composeDataset(toy(), { strategy: 'shared', k: 3, seed: 7 }).name).toBe('datawright:shared:3:toy:7');
  });

  it('refuses a bad k or strategy, and a split too small for the draws (BAD_OPTIONS)', () => {
    expect(() => composeDataset(toy(), { strategy: 'shared', k: 0 })).toThrow(/k must be an integer from 1 to 8/);
    expect(() => composeDataset(toy(), { strategy: 'twice' as never, k: 2 })).toThrow(DatasetError);
    const err = (() => { try { composeDataset(toy(3), { strategy: 'shared', k: 2 }).load({ split: 'test' }); } catch (e) { return e as DatasetError; } })();
    expect(err?.code).toBe('BAD_OPTIONS');
    expect(err?.message).toMatch(/too few tasks to draw the parts of task 0 \(k = 2\)/);
  });
});

describe('composeDataset with a grader that answers with a promise (code tasks)', () => {
  it('waits for every part and returns the mean', async () => {
    const base = toy();
    const asyncBase: Dataset = { ...base, grader: { grade: (a, t) => Promise.resolve(now(exact.grade(a, t))) } };
    const ds = composeDataset(asyncBase, { strategy: 'shared', k: 4 });
    const t = first(ds);
    const g = ds.grader.grade(answerWith(t, [2, 3, 4]), t);
    expect(g).toBeInstanceOf(Promise);
    expect((await g).score).toBe(0.75);
  });
});

describe('splitAnswer', () => {
  it('numbered lines in many spellings; out-of-range numbers and decimals are not labels', () => {
    expect(splitAnswer('Part 2: b\n1) a\n3. c\n4: d', 3)).toEqual(['a', 'b', 'c']);
    expect(splitAnswer('3.5 apples\n7', 2)).toEqual(['3.5 apples', '7']);
    expect(splitAnswer('1: a\n1: again', 2)).toEqual(['a']);
  });
  it('arrays, {answers}, {answer}, lines, semicolons, and the whole answer when k = 1', () => {
    expect(splitAnswer(['a', 'b', 'c'], 2)).toEqual(['a', 'b']);
    expect(splitAnswer({ answers: [1, 2] }, 2)).toEqual([1, 2]);
    expect(splitAnswer({ answer: 'x; y' }, 2)).toEqual(['x', 'y']);
    expect(splitAnswer('x\n\ny', 2)).toEqual(['x', 'y']);
    expect(splitAnswer('only one line', 1)).toEqual(['only one line']);
    expect(splitAnswer({ tool: 'math' }, 2)).toEqual([{ tool: 'math' }]);
    expect(splitAnswer(null, 2)).toEqual([]);
  });
});

describe('the registry name datawright:<strategy>:<k>:<base>', () => {
  it('composes learn-design: paired k = 2 needs two tools; tool calls without numbers are split in order', () => {
    const ds = getDataset('datawright:paired:2:learn-design');
    expect(ds.name).toBe('datawright:paired:2:learn-design');
    const [t] = ds.load({ split: 'train', limit: 1 });
    const [a, b] = partsOf(t!).map((p) => p.task.expected) as [string, string];
    expect(ds.classOf!(t!)).toBe('weather+search');
    expect(t!.input).toMatchObject({ kind: 'design', k: 2 });
    expect(now(ds.grader.grade(`${a} ${b}`, t!)).score).toBe(1);
    expect(now(ds.grader.grade(`${a}`, t!)).score).toBe(0.5);
    expect(now(ds.grader.grade(`${a.split(':')[0]}:wrong ${b}`, t!)).score).toBe(0.75); // part 1 half right (tool), part 2 right
  });

  it('parses the name and its optional seed; malformed names are UNKNOWN_DATASET showing the form', () => {
    expect(parseDataWrightName('datawright:decoy:3:gsm8k')).toEqual({ strategy: 'decoy', k: 3, base: 'gsm8k', seed: 0 });
    expect(parseDataWrightName('DataWright:Shared:4:learn-design:12')).toEqual({ strategy: 'shared', k: 4, base: 'learn-design', seed: 12 });
    expect(parseDataWrightName('gsm8k')).toBeUndefined();
    for (const bad of ['datawright:twice:2:gsm8k', 'datawright:shared:0:gsm8k', 'datawright:shared:9:gsm8k', 'datawright:shared:2', 'datawright:shared:2:gsm8k:x', 'datawright:shared:2:datawright:shared:2:gsm8k']) {
      let code: string | undefined;
      try { getDataset(bad); } catch (e) { code = (e as DatasetError).code; expect((e as Error).message, bad).toMatch(/datawright:<strategy>:<k>:<base>/); }
      expect(code, bad).toBe('UNKNOWN_DATASET');
    }
    expect(() => getDataset('datawright:shared:2:nope')).toThrow(/unknown dataset 'nope'/);
  });
});
