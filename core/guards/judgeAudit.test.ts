import { describe, expect, it } from 'vitest';
import { auditJudge, cohensKappa, formatJudgeAudit, graderVerdict, wilsonInterval, type PairVerdict3 } from './judgeAudit.ts';

// Ten pairs of (score of the run shown as A, score of the run shown as B): the grader says
// A, B, A, B, tie, A, B, tie, A, B — 4 A, 4 B, 2 ties.
const PAIRS: Array<[number, number]> = [[1, 0], [0, 1], [1, 0.5], [0.5, 1], [0, 0], [1, 0], [0, 1], [1, 1], [0.5, 0], [0, 0.5]];
type Judge = (a: number, b: number) => PairVerdict3;
/** Judges every pair as scheduled, and the first 4 again with A and B swapped (the seeded sample). */
const audit = (name: string, judge: Judge) =>
  auditJudge(name, PAIRS.map(([a, b]) => ({ winner: judge(a, b), gold: graderVerdict(a, b) })), PAIRS.slice(0, 4).map(([a, b]) => ({ first: judge(a, b), swapped: judge(b, a) })));

describe('the judge audit (scripted judges, figures by hand)', () => {
  it('a judge that always answers "B": position consistency 0, kappa 0, agreement 1/2: UNRELIABLE JUDGE', () => {
    const a = audit('always B', () => 'B');
    expect(a.verdicts).toEqual({ A: 0, B: 10, tie: 0 });
    // Swapped, it answers B again, which mirrors nothing: 0/4; Wilson upper = z²/(n + z²) = 3.8415/7.8415 = 0.4899.
    expect(a.positionConsistency).toMatchObject({ n: 4, k: 0, rate: 0 });
    expect(a.positionConsistency.ci![0]).toBe(0);
    expect(a.positionConsistency.ci![1]).toBeCloseTo(0.4899, 4);
    // Right on the 4 pairs the grader gives B, of the 8 it decides: 0.5, Wilson [0.2152, 0.7848].
    expect(a.agreement).toMatchObject({ n: 8, k: 4, rate: 0.5 });
    expect(a.agreement.ci![0]).toBeCloseTo(0.2152, 4);
    expect(a.agreement.ci![1]).toBeCloseTo(0.7848, 4);
    // po = 4/10, pe = 1 x 0.4 = 0.4: kappa 0; SE = sqrt(0.4 x 0.6 / (10 x 0.6²)) = 0.2582, interval +-0.5061.
    expect(a.kappa.value).toBeCloseTo(0, 12);
    expect(a.kappa.ci![1]).toBeCloseTo(0.5061, 4);
    expect(a.unreliable).toBe(true);
    expect(a.reasons).toEqual([
      'position consistency 0.0% (0/4 swapped pairs mirrored), below 60.0%',
      'kappa vs the grader 0.000 [-0.506, 0.506] over 10 pairs: no better than chance',
      'answered "B" on 10 of 10 pairs (100.0%), at or above 95.0%: a position, not a judgment',
    ]);
    expect(formatJudgeAudit(a)).toContain('UNRELIABLE JUDGE: position consistency 0.0%');
  });

  it('a judge that always says "tie": consistent with itself, but kappa 0 and agreement 0: UNRELIABLE JUDGE', () => {
    const a = audit('always tie', () => 'tie');
    expect(a.verdicts).toEqual({ A: 0, B: 0, tie: 10 });
    // tie mirrors tie: 4/4, Wilson lower = n/(n + z²) = 4/7.8415 = 0.5101.
    expect(a.positionConsistency).toMatchObject({ k: 4, n: 4, rate: 1 });
    expect(a.positionConsistency.ci![0]).toBeCloseTo(0.5101, 4);
    expect(a.agreement).toMatchObject({ k: 0, n: 8, rate: 0 });
    // po = 2/10 (the grader's ties), pe = 1 x 0.2: kappa 0; SE = sqrt(0.2 x 0.8 / (10 x 0.8²)) = 0.1581, interval +-0.3099.
    expect(a.kappa.value).toBeCloseTo(0, 12);
    expect(a.kappa.ci![0]).toBeCloseTo(-0.3099, 4);
    expect(a.reasons).toEqual(['kappa vs the grader 0.000 [-0.310, 0.310] over 10 pairs: no better than chance']);
    expect(a.unreliable).toBe(true);
  });

  it('a judge that agrees with the grader: consistency 1, agreement 1, kappa 1: reliable', () => {
    const a = audit('grader-like', graderVerdict);
    expect(a.verdicts).toEqual({ A: 4, B: 4, tie: 2 });
    expect(a.positionConsistency).toMatchObject({ k: 4, n: 4, rate: 1 });
    // 8/8: Wilson lower = 8/(8 + z²) = 8/11.8415 = 0.6756.
    expect(a.agreement).toMatchObject({ k: 8, n: 8, rate: 1 });
    expect(a.agreement.ci![0]).toBeCloseTo(0.6756, 4);
    // po = 1, pe = 0.4² + 0.4² + 0.2² = 0.36: kappa 1, SE 0: no large-sample interval.
    expect(a.kappa).toEqual({ n: 10, value: 1, ci: null });
    expect(a.unreliable).toBe(false);
    expect(formatJudgeAudit(a)).toBe([
      'Judge audit: grader-like, 10 pairs judged',
      '  verdicts: A 4, B 4, tie 2',
      '  position consistency (pairs judged in both orders): 1.000 [0.510, 1.000] (4/4)',
      '  agreement with the grader (pairs it decides): 1.000 [0.676, 1.000] (8/8)',
      "  Cohen's kappa vs the grader: 1.000 (no interval: agreement is 0 or 1) (10 pairs)",
      '  reliable: no threshold crossed',
      '',
    ].join('\n'));
  });

  it('kappa is undefined when both raters use one category; Wilson and kappa on a textbook case', () => {
    expect(cohensKappa([['tie', 'tie'], ['tie', 'tie']])).toEqual({ n: 2, value: null, ci: null });
    expect(cohensKappa([])).toEqual({ n: 0, value: null, ci: null });
    // A judge answering B to 4 pairs the grader calls ties: po = 0 = pe, the formula gives 0 [0, 0];
    // with a one-verdict reference kappa measures nothing, so it is undefined (printed n/a).
    expect(cohensKappa([['B', 'tie'], ['B', 'tie'], ['B', 'tie'], ['B', 'tie']])).toEqual({ n: 4, value: null, ci: null });
    expect(formatJudgeAudit(auditJudge('one', [{ winner: 'A', gold: 'A' }], []))).toMatch(/^Judge audit: one, 1 pair judged\n/);
    const ties = auditJudge('B always', [0, 1, 2, 3].map(() => ({ winner: 'B' as const, gold: 'tie' as const })), []);
    expect(formatJudgeAudit(ties)).toContain("  Cohen's kappa vs the grader: n/a (the grader gave every pair one verdict)\n");
    // Two raters, 4 items: (A,A) (A,B) (B,B) (B,B): po = 3/4, pe = (2/4)(1/4) + (2/4)(3/4) = 0.5: kappa 0.5.
    expect(cohensKappa([['A', 'A'], ['A', 'B'], ['B', 'B'], ['B', 'B']]).value).toBeCloseTo(0.5, 12);
    // Wilson 95% for 5/10: centre 0.5, half-width 1.96 sqrt(0.025 + 0.0096)/1.3841 = 0.2634 -> [0.2366, 0.7634].
    const w = wilsonInterval(5, 10)!;
    expect(w[0]).toBeCloseTo(0.2366, 4);
    expect(w[1]).toBeCloseTo(0.7634, 4);
    expect(wilsonInterval(0, 0)).toBeNull();
    // No pair at all: nothing crosses a threshold, nothing is claimed.
    expect(auditJudge('idle', [], [])).toMatchObject({ pairs: 0, unreliable: false, kappa: { value: null } });
  });
});

describe('the judge audit of no pair', () => {
  it('says the judge was not audited rather than "reliable" (judge-audit\'s blind-spot block of a run with no blind-spot pair)', () => {
    const a = auditJudge('no pairs', [], []);
    expect([a.pairs, a.unreliable]).toEqual([0, false]);
    expect(formatJudgeAudit(a)).toBe([
      'Judge audit: no pairs, 0 pairs judged',
      '  verdicts: A 0, B 0, tie 0',
      '  position consistency (pairs judged in both orders): n/a (no pair)',
      '  agreement with the grader (pairs it decides): n/a (no pair)',
      "  Cohen's kappa vs the grader: n/a (no grader verdict)",
      '  not audited: no pair judged',
      '',
    ].join('\n'));
  });
});

