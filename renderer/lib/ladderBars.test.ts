import { describe, expect, it } from 'vitest';
import type { RoleLadder } from '../../core/reward/ladder.ts';
import { DEFAULT_WEIGHTS } from '../../core/reward/ladder.ts';
import type { RoleName } from '../../core/ids.ts';
import { ladderBar, ladderScale, meanLadders, rungLabel, runLadders, toPixels } from './ladderBars.ts';

const ladder = (role: string, p: Partial<RoleLadder>): RoleLadder => ({
  role: role as RoleName, format: 1, validity: 1, completion: 1, correctness: 1, credit: 0, weights: DEFAULT_WEIGHTS, reward: 1, highestRung: 5, nodesRun: 1, nodesWired: 0, ...p,
});

describe('ladder bars', () => {
  it('stacks weight × value to the right of zero, in rung order', () => {
    const bar = ladderBar(ladder('solver', { correctness: 0.5, reward: 0.7, highestRung: 3 }));
    expect(bar.segments.map((s) => [s.symbol, s.contribution, s.x0, s.x1])).toEqual([
      ['f', 0.1, 0, 0.1],
      ['v', 0.1, 0.1, 0.2],
      ['e', 0.2, 0.2, expect.closeTo(0.4, 12)],
      ['a', 0.3, expect.closeTo(0.4, 12), expect.closeTo(0.7, 12)],
      ['c', 0, expect.closeTo(0.7, 12), expect.closeTo(0.7, 12)],
    ]);
  });

  it('draws negative credit to the left of zero', () => {
    const bar = ladderBar(ladder('planner', { credit: -0.5, correctness: 0, completion: 0 }));
    const c = bar.segments.find((s) => s.rung === 'credit')!;
    expect(c).toMatchObject({ contribution: -0.25, x0: -0.25, x1: 0 });
  });

  it('shares one scale from −w_c to the sum of the other weights', () => {
    const scale = ladderScale([ladder('a', {}), ladder('b', { weights: { ...DEFAULT_WEIGHTS, credit: 1 } })]);
    expect(scale.min).toBe(-1);
    expect(scale.max).toBeCloseTo(1.0, 12);
    expect(toPixels(0, scale, 200)).toBe(100);
    expect(toPixels(-1, scale, 200)).toBe(0);
  });

  it('averages ladders per role across runs, with the rung distribution', () => {
    const runs = [
      { ladder: { s: ladder('s', { correctness: 1, highestRung: 5, reward: 1 }) } },
      { ladder: { s: ladder('s', { correctness: 0, highestRung: 3, reward: 0.4, credit: -0.5 }) } },
      { ladder: undefined },
    ];
    const [m] = meanLadders(runs);
    expect(m).toMatchObject({ role: 's', runs: 2, correctness: 0.5, credit: -0.25, highestRung: 4, reward: 0.7 });
    expect(m!.rungCounts).toEqual([0, 0, 0, 1, 0, 1]);
    expect(rungLabel(4)).toBe('4/5');
    expect(rungLabel(3.5)).toBe('3.5/5');
    expect(runLadders(runs[0]!).map((l) => l.role)).toEqual(['s']);
  });
});
