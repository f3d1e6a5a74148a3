import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { DatasetError, createGsm8kDataset, extractGsm8kAnswer, getDataset, gsm8kGrader, parseNumber, type Task } from './index.ts';

function task(expected: string): Task {
  return { id: 't', index: 0, input: {}, expected };
}

let tmp: string | undefined;
function tmpDir(): string {
  tmp ??= tempDir('gsm8k');
  return tmp;
}
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});


describe('extractGsm8kAnswer', () => {
  it('takes the text after the last ####, trimmed, without commas', () => {
    expect(extractGsm8kAnswer('a #### 1 \n#### 1,234 ')).toBe('1234');
    expect(extractGsm8kAnswer('no marker')).toBeNull();
  });
});

describe('gsm8kGrader', () => {
  it('accepts 1,000 against expected 1000, in any answer shape', () => {
    for (const answer of ['1,000', '$1,000.00', 'The answer is 1,000.', 1000, { answer: '1,000' }, { answer: 1000 }, 'x #### 1,000']) {
      const g = gsm8kGrader.grade(answer, task('1000'));
      expect(g, JSON.stringify(answer)).toMatchObject({ score: 1, correct: true, extracted: '1000', expected: '1000' });
    }
  });

  it('scores wrong and missing answers 0 with a reason', () => {
    expect(gsm8kGrader.grade('It is 17.', task('18'))).toMatchObject({ score: 0, correct: false, extracted: '17' });
    const none = gsm8kGrader.grade('I do not know', task('18'));
    expect(none).toMatchObject({ score: 0, correct: false, extracted: null, expected: '18' });
    expect(none.reason).toMatch(/no number/);
    expect(gsm8kGrader.grade(undefined, task('18')).reason).toMatch(/no answer/);
    expect(gsm8kGrader.grade('5', task('-5')).correct).toBe(false);
    expect(gsm8kGrader.grade('-5', task('-5')).correct).toBe(true);
  });
});

describe('GSM8K errors', () => {
  it('a missing folder is DATASET_NOT_FOUND naming the path and the fix', () => {
    const missing = path.join(tmpDir(), 'nowhere');
    const err = catchErr(() => createGsm8kDataset(missing).load({ split: 'test' }));
    expect(err.code).toBe('DATASET_NOT_FOUND');
    expect(err.where).toBe(path.join(missing, 'gsm8k', 'test.jsonl'));
    expect(err.message).toContain(path.join(missing, 'gsm8k', 'test.jsonl'));
    expect(err.message).toMatch(/FLOWLAB_SHARED/);
    expect(err.message).toMatch(/--data-dir/);
  });

  it('a bad JSON line is BAD_LINE with file:line', () => {
    const dir = writeSplit('badjson', ['{"question": "q1", "answer": "x #### 1"}', '{"question": oops', '{"question": "q3", "answer": "#### 3"}']);
    const ds = createGsm8kDataset(dir);
    expect(ds.load({ split: 'test', limit: 1 })).toHaveLength(1); // line 2 is never parsed
    const err = catchErr(() => ds.load({ split: 'test' }));
    const file = path.join(dir, 'gsm8k', 'test.jsonl');
    expect(err.code).toBe('BAD_LINE');
    expect(err.where).toBe(`${file}:2`);
    expect(err.message).toContain(`${file}:2`);
  });

  it('a line without #### is BAD_LINE with file:line', () => {
    const dir = writeSplit('nohash', ['', '{"question": "q", "answer": "just 5"}']);
    const err = catchErr(() => createGsm8kDataset(dir).load({ split: 'test' }));
    expect(err.code).toBe('BAD_LINE');
    expect(err.message).toContain(`${path.join(dir, 'gsm8k', 'test.jsonl')}:2`);
    expect(err.message).toMatch(/####/);
  });

  it('unknown split, bad options and unknown dataset have their codes', () => {
    const ds = createGsm8kDataset(tmpDir());
    const split = catchErr(() => ds.load({ split: 'dev' }));
    expect(split.code).toBe('UNKNOWN_SPLIT');
    expect(split.message).toMatch(/test, train, test_socratic/);
    expect(catchErr(() => ds.load({ split: 'test', limit: -1 })).code).toBe('BAD_OPTIONS');
    expect(catchErr(() => ds.load({ split: 'test', offset: 1.5 })).code).toBe('BAD_OPTIONS');
    const unknown = catchErr(() => getDataset('mmlu'));
    expect(unknown.code).toBe('UNKNOWN_DATASET');
    expect(unknown.message).toMatch(/gsm8k/);
  });
});

function writeSplit(name: string, lines: string[]): string {
  const dir = path.join(tmpDir(), name);
  fs.mkdirSync(path.join(dir, 'gsm8k'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'gsm8k', 'test.jsonl'), lines.join('\n') + '\n');
  return dir;
}

function catchErr(fn: () => unknown): DatasetError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DatasetError) return e;
    throw e;
  }
  throw new Error('expected a DatasetError');
}
