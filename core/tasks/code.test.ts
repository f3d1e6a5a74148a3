import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CodeSandbox, SandboxRequest, SandboxResult } from '../sandbox/index.ts';
import { createHumanEvalDataset, createMbppDataset, datasetNeedsSandbox, extractCode, getDataset, humanEvalProgram, mbppProgram, type Task } from './index.ts';

/** A sandbox that records each program and answers with the given result. */
function fakeSandbox(answer: (req: SandboxRequest) => Partial<SandboxResult>): CodeSandbox & { programs: string[] } {
  const programs: string[] = [];
  return {
    programs,
    async run(req) {
      programs.push(req.code);
      return { status: 'ok', stdout: '', stderr: '', ms: 3, ...answer(req) };
    },
    async close() {},
  };
}

const HE = [
  { task_id: 'HumanEval/0', prompt: 'def add(a, b):\n    """Add."""\n', entry_point: 'add', canonical_solution: '    return a + b\n', test: 'def check(candidate):\n    assert candidate(1, 2) == 3\n' },
  { task_id: 'HumanEval/1', prompt: 'def neg(a):\n', entry_point: 'neg', canonical_solution: '    return -a\n', test: 'def check(candidate):\n    assert candidate(1) == -1\n' },
];
const MBPP = [
  { task_id: 2, prompt: 'Write a function to add.', code: 'def add(a, b):\n  return a + b', test_imports: [], test_list: ['assert add(1, 2) == 3'] },
  { task_id: 11, prompt: 'Write a function to negate.', code: 'def neg(a):\n  return -a', test_imports: ['import math'], test_list: ['assert neg(1) == -1', 'assert neg(-2) == 2'] },
  { task_id: 12, prompt: 'Write a function to double.', code: 'def dbl(a):\n  return 2 * a', test_imports: [], test_list: ['assert set(dbl(1) for _ in [0]) == {2}'] },
  { task_id: 600, prompt: 'Validation one.', code: 'def v():\n  return 1', test_imports: [], test_list: ['assert v() == 1'] },
];

function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-code-'));
  mkdirSync(path.join(dir, 'humaneval'));
  mkdirSync(path.join(dir, 'mbpp'));
  writeFileSync(path.join(dir, 'humaneval', 'HumanEval.jsonl'), HE.map((r) => JSON.stringify(r)).join('\n') + '\n');
  writeFileSync(path.join(dir, 'mbpp', 'sanitized-mbpp.json'), JSON.stringify(MBPP));
  return dir;
}

describe('extractCode', () => {
  it('takes the first python block, else the first block, else the text; reads code or answer fields', () => {
    expect(extractCode('Here:\n```python\nx = 1\n```\nand\n```python\ny = 2\n```')).toBe('x = 1\n');
    expect(extractCode('```\nz = 3\n```')).toBe('z = 3\n');
    expect(extractCode('```js\nno\n```\n```py\nyes = 1\n```')).toBe('yes = 1\n');
    expect(extractCode('    return a + b\n')).toBe('    return a + b\n');
    expect(extractCode({ code: 'a = 1' })).toBe('a = 1');
    expect(extractCode({ answer: '```python\nb = 2\n```' })).toBe('b = 2\n');
    expect(extractCode('```python\nunclosed = 1\n')).toBe('unclosed = 1\n');
    expect(extractCode('   \n')).toBeNull();
    expect(extractCode(42)).toBeNull();
    expect(extractCode(undefined)).toBeNull();
  });
});

describe('HumanEval', () => {
  const dir = dataDir();
  const tasks = createHumanEvalDataset(dir).load({ split: 'test' });

  it('loads each record as a task with the prompt as input and the canonical body as expected', () => {
    expect(tasks.map((t) => t.id)).toEqual(['humaneval/test/0', 'humaneval/test/1']);
    expect(tasks[0]).toMatchObject({ index: 0, input: { question: HE[0]!.prompt, prompt: HE[0]!.prompt, entry_point: 'add' }, expected: '    return a + b\n' });
    expect(tasks[0]!.meta).toMatchObject({ task_id: 'HumanEval/0', test: HE[0]!.test });
    expect(createHumanEvalDataset(dir).load({ split: 'test', offset: 1, limit: 5 }).map((t) => t.id)).toEqual(['humaneval/test/1']);
  });

  it('builds prompt + body + tests + check(entry_point); a full definition replaces the prompt\'s', () => {
    expect(humanEvalProgram(tasks[0]!, '    return a + b\n')).toBe(`${HE[0]!.prompt}    return a + b\n\n\n${HE[0]!.test}\n\ncheck(add)\n`);
    expect(humanEvalProgram(tasks[0]!, 'def add(a, b):\n    return b + a\n')).toBe(`${HE[0]!.prompt}    pass\n\ndef add(a, b):\n    return b + a\n\n\n${HE[0]!.test}\n\ncheck(add)\n`);
  });

  it('grades by running the program: ok scores 1, a failing test 0 with the exception in the reason', async () => {
    const sb = fakeSandbox((req) => (req.code.includes('a - b') ? { status: 'error', error: { type: 'AssertionError', message: 'AssertionError' } } : {}));
    const ds = getDataset('humaneval', { dataDir: dir, sandbox: sb });
    const good = await ds.grader.grade('```python\ndef add(a, b):\n    return a + b\n```', tasks[0]!);
    expect(good).toEqual({ score: 1, correct: true, extracted: 'def add(a, b):\n    return a + b\n', expected: '    return a + b\n', reason: 'tests passed (3 ms)' });
    const bad = await ds.grader.grade('    return a - b\n', tasks[0]!);
    expect(bad).toMatchObject({ score: 0, correct: false, reason: 'error: AssertionError (3 ms)' });
    expect(sb.programs[1]).toContain('check(add)');
    expect(await ds.grader.grade('', tasks[0]!)).toMatchObject({ score: 0, extracted: null, reason: 'there is no code in the answer' });
  });

  it('grades a task read back from the store (no meta) by finding its tests by id', async () => {
    const sb = fakeSandbox(() => ({}));
    const stored: Task = { id: 'humaneval/test/1', index: 1, input: tasks[1]!.input, expected: tasks[1]!.expected };
    await getDataset('humaneval', { dataDir: dir, sandbox: sb }).grader.grade('    return -a\n', stored);
    expect(sb.programs[0]).toBe(`def neg(a):\n    return -a\n\n\n${HE[1]!.test}\n\ncheck(neg)\n`);
    await expect(getDataset('humaneval', { dataDir: dir, sandbox: sb }).grader.grade('x', { ...stored, id: 'humaneval/test/9' })).rejects.toMatchObject({ code: 'BAD_LINE' });
  });

  it('needs a sandbox to grade (NO_SANDBOX), and names the missing file and the bad split', async () => {
    await expect(createHumanEvalDataset(dir).grader.grade('    return 1\n', tasks[0]!)).rejects.toMatchObject({ code: 'NO_SANDBOX' });
    expect(() => createHumanEvalDataset(path.join(dir, 'none')).load({ split: 'test' })).toThrow(/humaneval not found: no file at .*none.humaneval.HumanEval\.jsonl/);
    expect(() => createHumanEvalDataset(dir).load({ split: 'train' })).toThrow(/humaneval has no split 'train'; valid splits: test/);
  });

  it('reports a bad record with its file and line', () => {
    const bad = mkdtempSync(path.join(tmpdir(), 'flowlab-code-bad-'));
    writeFileSync(path.join(bad, 'HumanEval.jsonl'), `${JSON.stringify(HE[0])}\n{"task_id": "x", "prompt": 3}\n`);
    expect(() => createHumanEvalDataset(bad).load({ split: 'test' })).toThrow(expect.objectContaining({ code: 'BAD_LINE', message: expect.stringMatching(/HumanEval\.jsonl:2: 'prompt' must be a string/) }));
  });
});

describe('MBPP (sanitized)', () => {
  const dir = dataDir();
  const ds = createMbppDataset(dir);

  it('splits by upstream task id: test 11-510, prompt 1-10, validation 511-600, train 601-974, all', () => {
    expect(ds.splits).toEqual(['test', 'train', 'validation', 'prompt', 'all']);
    expect(ds.load({ split: 'test' }).map((t) => t.meta!.task_id)).toEqual([11, 12]);
    expect(ds.load({ split: 'prompt' }).map((t) => t.meta!.task_id)).toEqual([2]);
    expect(ds.load({ split: 'validation' }).map((t) => t.meta!.task_id)).toEqual([600]);
    expect(ds.load({ split: 'train' })).toEqual([]);
    expect(ds.load({ split: 'all' }).map((t) => t.id)).toEqual(['mbpp/all/0', 'mbpp/all/1', 'mbpp/all/2', 'mbpp/all/3']);
  });

  it('asks with the paper\'s prompt (description, then the tests) and finds the function name', () => {
    const [t] = ds.load({ split: 'test', limit: 1 });
    expect(t!.input).toEqual({
      question: 'You are an expert Python programmer, and here is your task: Write a function to negate. Your code should pass these tests:\n\nassert neg(1) == -1\nassert neg(-2) == 2',
      prompt: 'Write a function to negate.',
      tests: 'assert neg(1) == -1\nassert neg(-2) == 2',
      entry_point: 'neg',
    });
    expect(ds.load({ split: 'test' })[1]!.input.entry_point).toBe('dbl');
    expect(mbppProgram(t!, 'def neg(a):\n  return -a')).toBe('def neg(a):\n  return -a\n\nimport math\nassert neg(1) == -1\nassert neg(-2) == 2\n');
  });

  it('grades through the sandbox with the stored task\'s tests looked up by id', async () => {
    const sb = fakeSandbox(() => ({ status: 'timeout', error: { type: 'Timeout', message: 'killed after 10000 ms' } }));
    const stored: Task = { id: 'mbpp/test/0', index: 0, input: {}, expected: '' };
    expect(await getDataset('mbpp', { dataDir: dir, sandbox: sb }).grader.grade('def neg(a):\n  while True: pass', stored)).toMatchObject({ score: 0, reason: 'timeout: Timeout: killed after 10000 ms (3 ms)' });
    expect(sb.programs[0]).toContain('assert neg(-2) == 2');
  });
});

describe('the registry', () => {
  it('knows humaneval and mbpp as datasets graded in a sandbox', () => {
    expect(datasetNeedsSandbox('humaneval')).toBe(true);
    expect(datasetNeedsSandbox('MBPP')).toBe(true);
    expect(datasetNeedsSandbox('gsm8k')).toBe(false);
    expect(datasetNeedsSandbox('nope')).toBe(false);
    expect(getDataset('mbpp').name).toBe('mbpp');
  });
});
