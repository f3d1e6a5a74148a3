import { describe, expect, it } from 'vitest';
import { DatasetError } from './errors.ts';
import { createLearnJudgeDataset, isBlindPair, learnJudgeGrader, learnJudgeTask, parseLearnJudgeName, readJudgeVerdict, type JudgeTaskMeta } from './learnJudge.ts';
import { describeDataset, getDataset } from './registry.ts';

const meta = (t: { meta?: Record<string, unknown> }) => t.meta as unknown as JudgeTaskMeta;

describe('learn-judge', () => {
  it('tasks 2k and 2k+1 show pair k in both orders, the right side flipping', () => {
    for (let k = 0; k < 40; k++) {
      const [t0, t1] = [learnJudgeTask('train', 2 * k), learnJudgeTask('train', 2 * k + 1)];
      expect(t0.input.a).toBe(t1.input.b);
      expect(t0.input.b).toBe(t1.input.a);
      expect(t0.input.request).toBe(t1.input.request);
      expect(t0.expected).not.toBe(t1.expected);
      expect([meta(t0).order, meta(t1).order]).toEqual([0, 1]);
      const right = t0.expected === 'A' ? t0.input.a : t0.input.b;
      expect(right).toBe(meta(t0).right);
      // The right answer: a number and the unit the request names.
      expect(String(right)).toMatch(new RegExp(`^\\d+ ${meta(t0).unit}$`));
      expect(String(t0.input.request)).toContain(` ${meta(t0).unit}`);
    }
  });

  it('the knob: pair k is blind when floor((k+1)s) > floor(ks) — exactly the share over any whole run of pairs', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].filter((k) => isBlindPair(k, 0.25))).toEqual([3, 7]);
    expect([0, 1, 2, 3].filter((k) => isBlindPair(k, 0.5))).toEqual([1, 3]);
    const count = (s: number) => Array.from({ length: 100 }, (_, k) => k).filter((k) => isBlindPair(k, s)).length;
    expect([count(0), count(0.25), count(0.5), count(1)]).toEqual([0, 25, 50, 100]);
    const ds = createLearnJudgeDataset(0.5);
    const tasks = ds.load({ split: 'heldout', limit: 40 });
    expect(tasks.filter((t) => meta(t).blind).length).toBe(20);
  });

  it('the blind spot is the right number in the other unit of the quantity; ordinary mistakes carry their marker', () => {
    const other: Record<string, string> = { km: 'mi', mi: 'km', C: 'F', F: 'C', kg: 'lb', lb: 'kg' };
    const seen = new Set<string>();
    for (const t of createLearnJudgeDataset(0.5).load({ split: 'train', limit: 200 })) {
      const m = meta(t);
      seen.add(m.mistake);
      if (m.blind) {
        expect(m.mistake).toBe('blind-unit');
        expect(m.wrong).toBe(m.right.replace(/ \w+$/, ` ${other[m.unit]}`));
      } else {
        expect(m.wrong).toBe({ none: 'none', error: 'error', 'lost-number': `?? ${m.unit}` }[m.mistake as 'none']);
      }
    }
    expect([...seen].sort()).toEqual(['blind-unit', 'error', 'lost-number', 'none']);
  });

  it('the held-out split repeats no training template, city, animal or number', () => {
    const train = createLearnJudgeDataset().load({ split: 'train' });
    const heldout = createLearnJudgeDataset().load({ split: 'heldout' });
    const trainRequests = new Set(train.map((t) => t.input.request));
    const openers = new Set(train.map((t) => String(t.input.request).split(' ').slice(0, 2).join(' ')));
    for (const t of heldout) {
      expect(trainRequests.has(t.input.request)).toBe(false);
      expect(openers.has(String(t.input.request).split(' ').slice(0, 2).join(' '))).toBe(false);
      expect(String(t.input.request)).not.toMatch(/Paris|Rome|Tokyo|Cairo|Berlin|Madrid|\bcat\b|\bdog\b|horse|whale|tiger/);
      expect(Number(/^\d+/.exec(meta(t).right)![0])).toBeGreaterThanOrEqual(60);
      expect(meta(t).novelty).toBe('new-wording');
    }
  });

  it('the grader reads A or B (quoted, bare or {winner}) and scores 1 for the right side', () => {
    const t = learnJudgeTask('heldout', 0);
    const wrong = t.expected === 'A' ? 'B' : 'A';
    expect(learnJudgeGrader.grade(JSON.stringify(t.expected), t)).toMatchObject({ score: 1, correct: true, extracted: t.expected });
    expect(learnJudgeGrader.grade(wrong, t)).toMatchObject({ score: 0, correct: false, extracted: wrong });
    expect(learnJudgeGrader.grade({ winner: t.expected }, t).score).toBe(1);
    expect(learnJudgeGrader.grade('maybe', t)).toMatchObject({ score: 0, extracted: null });
    expect(readJudgeVerdict(' "B" ')).toBe('B');
    expect(readJudgeVerdict(undefined)).toBeNull();
  });

  it('the dataset name carries the knob; a malformed one is a located error', () => {
    expect(parseLearnJudgeName('learn-judge')).toEqual({ blind: 0.25 });
    expect(parseLearnJudgeName('learn-judge:blind=0.5')).toEqual({ blind: 0.5 });
    expect(parseLearnJudgeName('learn-design')).toBeUndefined();
    expect(() => parseLearnJudgeName('learn-judge:blind=2')).toThrow(DatasetError);
    expect(() => getDataset('learn-judge:share=1')).toThrow(/learn-judge:blind=<share from 0 to 1>/);
    const none = getDataset('learn-judge:blind=0');
    expect(none.name).toBe('learn-judge:blind=0');
    expect(none.load({ split: 'train', limit: 60 }).some((t) => meta(t).blind)).toBe(false);
    expect(getDataset('learn-judge').load({ split: 'train', limit: 1 })[0]!.id).toBe('learn-judge/train/0');
    expect(() => learnJudgeTask('train', -1)).toThrow(/non-negative integer/);
    expect(describeDataset('learn-judge:blind=0.5')).toMatch(/^Pairwise judging: .*blind-spot share 0\.5$/);
    expect(describeDataset('learn-judge:blind=7')).toBeUndefined();
  });
});
