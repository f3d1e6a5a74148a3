import { describe, expect, it } from 'vitest';
import { auditJudgePairs, type JudgedPairTask } from '../core/mass/index.ts';
import { formatPairAudit } from './commands/judgeAudit.ts';

const task = (pair: number, order: 0 | 1, blind: boolean, verdict: 'A' | 'B'): JudgedPairTask => ({ pair, order, blind, mistake: blind ? 'blind-unit' : 'none', gold: order === 0 ? 'A' : 'B', verdict });

describe('flowlab judge-audit output', () => {
  it('a judge right on the ordinary pairs and always "A" on the blind ones: PASSED, and the blind spot at chance', () => {
    const tasks = [
      ...Array.from({ length: 8 }, (_, p) => [task(p, 0, false, 'A'), task(p, 1, false, 'B')]).flat(),
      ...Array.from({ length: 8 }, (_, p) => [task(p + 8, 0, true, 'A'), task(p + 8, 1, true, 'A')]).flat(),
    ];
    const text = formatPairAudit(auditJudgePairs('j', tasks), 'exp-1', 'learn-judge:blind=0.5', tasks.length, 0);
    expect(text).toContain('Judge audit of exp-1 (learn-judge:blind=0.5): 32 judged tasks');
    expect(text).toContain('position consistency (pairs judged in both orders): 1.000 [0.676, 1.000] (8/8)');
    expect(text).toContain('Bar (ordinary mistakes: position consistency >= 0.9, kappa >= 0.6): PASSED (position consistency 1.000, kappa 1.000)');
    expect(text).toContain('  blind-unit: 0.500 [0.280, 0.720] (8/16)');
    expect(text).toContain('Blind spot: agreement 0.500 [0.280, 0.720] holds 0.5: at chance (a judge that judges the ordinary mistakes and shares the blind spot)');
  });
});
