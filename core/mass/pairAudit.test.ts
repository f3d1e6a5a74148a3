import { describe, expect, it } from 'vitest';
import { auditJudgePairs, judgedPairTasks, type JudgedPairTask } from './pairAudit.ts';

/** n pairs of one kind, both orders; gold of order 0 is A for even pairs, B for odd; `judge` gives the verdict. */
function pairs(n: number, blind: boolean, judge: (gold: 'A' | 'B', order: 0 | 1, pair: number) => 'A' | 'B' | null, from = 0): JudgedPairTask[] {
  return Array.from({ length: n }, (_, i) => i + from).flatMap((pair) => ([0, 1] as const).map((order) => {
    const gold0 = pair % 2 === 0 ? 'A' : 'B';
    const gold = order === 0 ? gold0 : gold0 === 'A' ? 'B' : 'A';
    return { pair, order, blind, mistake: blind ? 'blind-unit' : 'error', gold, verdict: judge(gold, order, pair) } as JudgedPairTask;
  }));
}

describe('the judge audit on learn-judge pairs', () => {
  it('a judge right on every ordinary pair and answering "A" on every blind pair: bar passed, blind spot at chance', () => {
    const r = auditJudgePairs('j', [...pairs(10, false, (g) => g), ...pairs(10, true, () => 'A', 10)]);
    expect(r.ordinary.positionConsistency).toMatchObject({ k: 10, n: 10, rate: 1 });
    expect(r.ordinary.kappa.value).toBe(1);
    expect(r.passesBar).toBe(true);
    // "A" every time: right on the 10 tasks whose gold is A of 20 -> 0.5; never mirrors -> consistency 0.
    expect(r.blind.agreement).toMatchObject({ k: 10, n: 20, rate: 0.5 });
    expect(r.blind.positionConsistency.rate).toBe(0);
    expect(r.blindAtChance).toBe(true);
    expect(r.byMistake['blind-unit']!.rate).toBe(0.5);
    expect(r.byMistake.error!.rate).toBe(1);
  });

  it('a position-biased judge on ordinary pairs: consistency 0, kappa 0 (po = 0.5, pe = 1 x 0.5) — not passed', () => {
    const r = auditJudgePairs('j', pairs(8, false, () => 'B'));
    expect(r.ordinary.positionConsistency.rate).toBe(0);
    expect(r.ordinary.kappa.value).toBeCloseTo(0, 12);
    expect(r.passesBar).toBe(false);
    expect(r.blindAtChance).toBeNull();
  });

  it('kappa by hand: 3 wrong of 20 (gold 10 A / 10 B; judge A 11, B 9) -> po 0.85, pe 0.5, kappa 0.7', () => {
    // Wrong on pair 0 order 0 (A -> B), and on pairs 2 and 4 order 1 (B -> A).
    const wrongAt = new Set(['0/0', '2/1', '4/1']);
    const r = auditJudgePairs('j', pairs(10, false, (g, o, p) => (wrongAt.has(`${p}/${o}`) ? (g === 'A' ? 'B' : 'A') : g)));
    expect(r.ordinary.verdicts).toEqual({ A: 11, B: 9, tie: 0 });
    expect(r.ordinary.kappa.value).toBeCloseTo((0.85 - 0.5) / 0.5, 12);
    expect(r.ordinary.positionConsistency).toMatchObject({ k: 7, n: 10 });
    expect(r.passesBar).toBe(false); // consistency 0.7 < 0.9
  });

  it('an unread verdict counts as a tie and as inconsistent', () => {
    const r = auditJudgePairs('j', pairs(2, false, (g, o, p) => (p === 0 && o === 1 ? null : g)));
    expect(r.unread).toBe(1);
    expect(r.ordinary.positionConsistency).toMatchObject({ k: 1, n: 2 });
    expect(r.ordinary.verdicts.tie).toBe(1);
  });

  it('joins planned tasks and runs by task index; runs missing or not learn-judge are left out', () => {
    const meta = (pair: number, order: 0 | 1, cls: 'A' | 'B') => ({ class: cls, pair, order, mistake: 'none', blind: false });
    const { tasks, skipped } = judgedPairTasks(
      [{ taskIndex: 0, meta: meta(0, 0, 'A') }, { taskIndex: 1, meta: meta(0, 1, 'B') }, { taskIndex: 2, meta: { class: 'weather' } }, { taskIndex: 3, meta: meta(1, 0, 'A') }],
      [{ taskIndex: 0, answer: '"A"', status: 'completed' }, { taskIndex: 1, answer: 'B', status: 'failed' }, { taskIndex: 2, answer: 'A', status: 'completed' }],
    );
    expect(tasks).toEqual([
      { pair: 0, order: 0, blind: false, mistake: 'none', gold: 'A', verdict: 'A' },
      { pair: 0, order: 1, blind: false, mistake: 'none', gold: 'B', verdict: null },
    ]);
    expect(skipped).toBe(2);
  });
});
