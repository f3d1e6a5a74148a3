import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { DatasetError, createMultihopDataset, getDataset } from './index.ts';
import type { Grade } from './types.ts';

/** A grade the dataset's (synchronous) grader gave; these families' graders never answer with a promise. */
function now(g: Grade | Promise<Grade>): Grade {
  if (g instanceof Promise) throw new Error('expected a synchronous grade');
  return g;
}

const shared = process.env.FLOWLAB_SHARED;
let tmp: string | undefined;
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});
/** A folder holding multihop_qa/<file> with `text`. */
function folderWith(file: string, text: string): string {
  tmp ??= tempDir('multihop');
  const dir = path.join(tmp, `${Math.random().toString(36).slice(2)}`);
  fs.mkdirSync(path.join(dir, 'multihop_qa'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'multihop_qa', file), text);
  return dir;
}
function catchErr(fn: () => unknown): DatasetError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DatasetError);
    return e as DatasetError;
  }
  throw new Error('expected a DatasetError');
}

describe.runIf(shared)('the shared multi-hop QA files', () => {
  it('load with the README record counts and their first questions', () => {
    const counts = { bamboogle: 125, bamtwoogle: 100, hotpotqa: 7405, musique: 2417, '2wikimultihopqa': 12576 };
    for (const [name, n] of Object.entries(counts)) expect(getDataset(name).load({ split: 'test' }), name).toHaveLength(n);
    const [b] = getDataset('bamboogle').load({ split: 'test', limit: 1 });
    expect(b).toMatchObject({ id: 'bamboogle/test/0', index: 0, input: { question: 'Who was president of the United States in the year that Citibank was founded?' }, expected: 'james madison', meta: { split: 'test', line: 1, record: 0 } });
  });

  it('BamTwoogle reads quoted CSV fields ("" is a quote) with the line of each row', () => {
    const tasks = getDataset('bamtwoogle').load({ split: 'test' });
    const t = tasks.find((x) => String(x.input.question).startsWith('Who was CEO of General Electric'))!;
    expect(t.input.question).toBe('Who was CEO of General Electric when the film "Harry Potter and the Chamber of Secrets" came out?');
    expect(t.expected).toBe('Jeff Immelt');
    expect(tasks[0]).toMatchObject({ expected: 'Queen Victoria', meta: { line: 2 } });
  });

  it('offset and limit pick records in file order; the grader is EM with F1 as score', () => {
    const ds = getDataset('musique');
    const [t] = ds.load({ split: 'test', offset: 4, limit: 1 });
    expect(t).toMatchObject({ id: 'musique/test/4', expected: 'Bombardier Inc.' });
    expect(now(ds.grader.grade('bombardier inc', t!))).toMatchObject({ correct: true, score: 1 });
    expect(now(ds.grader.grade('Bombardier', t!)).score).toBeCloseTo(2 / 3, 12); // P 1, R 1/2
  });
});

describe('multi-hop QA errors', () => {
  it('a bad JSON record is BAD_LINE at file:line naming the record and column', () => {
    const dir = folderWith('bamboogle_test_questions_and_answers.json', '[{"question": "q0", "answer": "a0"},\n  {"question": oops}]');
    const err = catchErr(() => createMultihopDataset('bamboogle', dir).load({ split: 'test' }));
    const file = path.join(dir, 'multihop_qa', 'bamboogle_test_questions_and_answers.json');
    expect(err.code).toBe('BAD_LINE');
    expect(err.where).toBe(`${file}:2`);
    expect(err.message).toMatch(/record 1 \(column 3\) is not valid JSON/);
    expect(createMultihopDataset('bamboogle', dir).load({ split: 'test', limit: 1 })[0]!.expected).toBe('a0');
  });

  it('a record without an answer, a non-array and an unclosed array are BAD_LINE', () => {
    const noAnswer = folderWith('musique_test_questions_and_answers.json', '[\n{"question": "q0", "answer": "a0"},\n{"question": "q1", "answer": ""}\n]');
    expect(catchErr(() => createMultihopDataset('musique', noAnswer).load({ split: 'test' })).message).toMatch(/:3: record 1: 'answer' must be a non-empty string/);
    const object = folderWith('hotpotqa_test_questions_and_answers.json', '{"question": "q"}');
    expect(catchErr(() => createMultihopDataset('hotpotqa', object).load({ split: 'test' })).message).toMatch(/:1: expected a JSON array/);
    const open = folderWith('hotpotqa_test_questions_and_answers.json', '[{"question": "q", "answer": "a"},\n{"question": "q2", "ans');
    expect(catchErr(() => createMultihopDataset('hotpotqa', open).load({ split: 'test' })).message).toMatch(/:2: the record at column 1 is not closed/);
  });

  it('CSV: a wrong header, a row of 3 fields and an open quote are BAD_LINE with their lines', () => {
    const header = folderWith('bamtwoogle.csv', 'q,a\nx,y\n');
    expect(catchErr(() => createMultihopDataset('bamtwoogle', header).load({ split: 'test' })).where).toMatch(/bamtwoogle\.csv:1$/);
    const three = folderWith('bamtwoogle.csv', 'question,answer\r\n"a, b",c\r\nx,y,z\r\n');
    const ds = createMultihopDataset('bamtwoogle', three);
    expect(ds.load({ split: 'test', limit: 1 })[0]!.input.question).toBe('a, b');
    expect(catchErr(() => ds.load({ split: 'test' })).message).toMatch(/csv:3: record 1 has 3 fields/);
    const quote = folderWith('bamtwoogle.csv', 'question,answer\nok,1\n"never closed,2\n');
    expect(catchErr(() => createMultihopDataset('bamtwoogle', quote).load({ split: 'test' })).message).toMatch(/csv:3: a quoted field is not closed/);
  });

  it('a missing folder is DATASET_NOT_FOUND naming the path; other splits are UNKNOWN_SPLIT', () => {
    tmp ??= tempDir('multihop');
    const err = catchErr(() => createMultihopDataset('hotpotqa', path.join(tmp!, 'nowhere')).load({ split: 'test' }));
    expect(err.code).toBe('DATASET_NOT_FOUND');
    expect(err.message).toMatch(/multihop_qa.*--data-dir/s);
    expect(catchErr(() => createMultihopDataset('hotpotqa', tmp!).load({ split: 'dev' })).code).toBe('UNKNOWN_SPLIT');
    expect(catchErr(() => createMultihopDataset('hotpotqa', tmp!).load({ split: 'test', limit: -1 })).code).toBe('BAD_OPTIONS');
  });
});
