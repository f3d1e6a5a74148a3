import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DatasetError, createGsm8kDataset, extractGsm8kAnswer, getDataset, gsm8kGrader, parseNumber, resolveSharedDir, type Task } from './index.ts';

const shared = resolveSharedDir();
const testFile = path.join(shared, 'data', 'gsm8k', 'test.jsonl');
const haveData = fs.existsSync(testFile);
if (!haveData) console.log(`skipping GSM8K file tests: ${testFile} is absent (set FLOWLAB_SHARED to the shared folder)`);

/** The records of test.jsonl as the file has them, with the gold read independently of our code. */
function readRaw(): { question: string; answer: string; gold: string }[] {
  return fs.readFileSync(testFile, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => {
    const r = JSON.parse(l) as { question: string; answer: string };
    return { ...r, gold: r.answer.split('####').pop()!.trim() };
  });
}

function task(expected: string): Task {
  return { id: 't', index: 0, input: {}, expected };
}

let tmp: string | undefined;
function tmpDir(): string {
  tmp ??= fs.mkdtempSync(path.join(os.tmpdir(), 'flowlab-gsm8k-'));
  return tmp;
}
afterAll(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe.skipIf(!haveData)('GSM8K on the real test split', () => {
  const raw = haveData ? readRaw() : [];
  const ds = getDataset('gsm8k', { sharedDir: shared });

  it('has the 1319 records the README states, and the first gold answer is 18', () => {
    expect(raw).toHaveLength(1319);
    expect(raw[0]!.gold).toBe('18');
    expect(ds.load({ split: 'test', limit: 1 })[0]!.expected).toBe('18');
  });

  it('limit 10 gives the first 10 lines as tasks', () => {
    const tasks = ds.load({ split: 'test', limit: 10 });
    expect(tasks).toHaveLength(10);
    tasks.forEach((t, i) => {
      expect(t.id).toBe(`gsm8k/test/${i}`);
      expect(t.index).toBe(i);
      expect(t.input).toEqual({ question: raw[i]!.question });
      expect(t.expected).toBe(raw[i]!.gold.replace(/,/g, ''));
      expect(t.meta).toMatchObject({ split: 'test', line: i + 1, solution: raw[i]!.answer });
    });
  });

  it('offset + limit address the same records as the file', () => {
    const tasks = ds.load({ split: 'test', offset: 1315, limit: 10 });
    expect(tasks.map((t) => t.id)).toEqual(['gsm8k/test/1315', 'gsm8k/test/1316', 'gsm8k/test/1317', 'gsm8k/test/1318']);
    expect(tasks[3]!.input.question).toBe(raw[1318]!.question);
    expect(ds.load({ split: 'test', offset: 5000 })).toEqual([]);
  });

  it('strips commas from gold answers that have them (read from the file)', () => {
    const withComma = raw.map((r, i) => ({ ...r, i })).filter((r) => r.gold.includes(','));
    expect(withComma.length).toBeGreaterThan(0);
    for (const r of withComma) {
      const t = ds.load({ split: 'test', offset: r.i, limit: 1 })[0]!;
      expect(t.expected).toBe(r.gold.replace(/,/g, ''));
      expect(t.expected).not.toContain(',');
      expect(parseNumber(r.gold)).toBe(Number(t.expected)); // "1,450,000" reads as 1450000
      expect(gsm8kGrader.grade(r.gold, t).correct).toBe(true); // the comma form is accepted
    }
  });

  it('reads negative and large gold answers (as the file has them)', () => {
    const all = ds.load({ split: 'test' });
    expect(all).toHaveLength(raw.length);
    const negatives = all.filter((t) => t.expected.startsWith('-'));
    expect(negatives.length).toBeGreaterThan(0);
    for (const t of negatives) {
      expect(Number(t.expected)).toBeLessThan(0);
      expect(t.expected).toBe(raw[t.index]!.gold);
    }
    const largest = all.reduce((a, b) => (Number(b.expected) > Number(a.expected) ? b : a));
    expect(largest.expected).toBe(raw[largest.index]!.gold.replace(/,/g, ''));
    expect(gsm8kGrader.grade(`The total is ${Number(largest.expected).toLocaleString('en-US')}.`, largest).correct).toBe(true);
  });

  it('every gold solution text grades correct against its own task', () => {
    const all = ds.load({ split: 'test' });
    const wrong = all.filter((t) => !gsm8kGrader.grade(raw[t.index]!.answer, t).correct).map((t) => t.id);
    expect(wrong).toEqual([]);
  });

  it('loads train and test_socratic', () => {
    expect(ds.load({ split: 'train', limit: 3 }).map((t) => t.id)).toEqual(['gsm8k/train/0', 'gsm8k/train/1', 'gsm8k/train/2']);
    const soc = ds.load({ split: 'test_socratic', limit: 1 })[0]!;
    expect(soc.expected).toBe('18');
    expect(soc.input.question).toBe(raw[0]!.question);
  });

  it('accepts --data-dir pointing at the gsm8k folder itself', () => {
    const direct = createGsm8kDataset(path.join(shared, 'data', 'gsm8k'));
    expect(direct.load({ split: 'test', limit: 2 }).map((t) => t.expected)).toEqual(['18', raw[1]!.gold]);
    const viaDataDir = getDataset('GSM8K', { dataDir: path.join(shared, 'data', 'gsm8k') });
    expect(viaDataDir.load({ split: 'test', limit: 1 })[0]!.expected).toBe('18');
  });
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
