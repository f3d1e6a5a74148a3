import { describe, expect, it } from 'vitest';
import { learnDesignTask } from './learnDesign.ts';
import { createLearnDesignJudgeDataset, DESIGN_JUDGE_MISTAKES, designAnswerText, learnDesignJudgeTask, type DesignJudgeMeta } from './learnDesignJudge.ts';

const meta = (t: { meta?: Record<string, unknown> }) => t.meta as unknown as DesignJudgeMeta;

describe('learn-design-judge', () => {
  it('pair k is learn-design task k: its right answer, a wrong one of the drawn kind, shown in both orders', () => {
    for (const split of ['train', 'heldout'] as const) {
      for (let k = 0; k < 200; k++) {
        const base = learnDesignTask(split, k);
        const [tool, argument] = base.expected.split(':') as [string, string];
        const t0 = learnDesignJudgeTask(split, 2 * k);
        const t1 = learnDesignJudgeTask(split, 2 * k + 1);
        const m = meta(t0);
        expect(t0.input.request).toBe(base.input.request);
        expect(m.right).toBe(`${tool} ${argument}`);
        expect(m.wrong).not.toBe(m.right);
        // The same pair, A and B swapped; the expected side follows the right answer.
        expect([t1.input.a, t1.input.b]).toEqual([t0.input.b, t0.input.a]);
        expect(t0.input[t0.expected === 'A' ? 'a' : 'b']).toBe(m.right);
        expect(t1.input[t1.expected === 'A' ? 'a' : 'b']).toBe(m.right);
        expect([m.pair, m.order, meta(t1).order, m.blind]).toEqual([k, 0, 1, false]);
        const [wt, wa] = m.wrong.split(' ');
        if (m.mistake === 'wrong-tool') expect([wt !== tool, wa]).toEqual([true, argument]);
        if (m.mistake === 'wrong-argument') expect([wt, wa !== argument]).toEqual([tool, true]);
        if (m.mistake === 'wrong-both') expect(wt).not.toBe(tool);
        if (m.mistake === 'none') expect(m.wrong).toBe('none');
      }
    }
  });

  it('every kind of mistake and both sides occur; held-out tasks carry learn-design\'s novelty', () => {
    const ts = createLearnDesignJudgeDataset().load({ split: 'train', limit: 400 });
    expect(new Set(ts.map((t) => meta(t).mistake))).toEqual(new Set(DESIGN_JUDGE_MISTAKES));
    const a = ts.filter((t) => t.expected === 'A').length;
    expect(a).toBe(200); // both orders of every pair: exactly half
    const h = createLearnDesignJudgeDataset().load({ split: 'heldout', limit: 8 });
    expect(h.map((t) => meta(t).novelty)).toEqual(['in-template', 'in-template', 'in-template', 'in-template', 'in-template', 'in-template', 'new-wording', 'new-wording']);
  });

  it('reads an answer as `<tool> <argument>` with `none` for a missing part', () => {
    expect(designAnswerText('Weather', ' tomorrow')).toBe('weather tomorrow');
    expect(designAnswerText('search', undefined)).toBe('search none');
    expect(designAnswerText(undefined, 'add')).toBe('none add');
    expect(designAnswerText('', '')).toBe('none');
    expect(() => learnDesignJudgeTask('train', -1)).toThrow(/non-negative integer/);
  });
});
