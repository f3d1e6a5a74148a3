import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { noteSkip } from '../../test/fixtures.ts';
import { createGsm8kDataset, getDataset, gsm8kGrader, parseNumber, resolveSharedDir } from './index.ts';

const shared = resolveSharedDir();
const testFile = path.join(shared, 'data', 'gsm8k', 'test.jsonl');
const haveData = fs.existsSync(testFile);
if (!haveData) noteSkip('gsm8k.model.test', 'the GSM8K file tests', testFile);

/** The records of test.jsonl as the file has them, with the gold read independently of our code. */
function readRaw(): { question: string; answer: string; gold: string }[] {
  return fs.readFileSync(testFile, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => {
    const r = JSON.parse(l) as { question: string; answer: string };
    return { ...r, gold: r.answer.split('####').pop()!.trim() };
  });
}

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
