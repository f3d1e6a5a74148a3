import { describe, expect, it } from 'vitest';
import type { ExperimentSummary, RolloutEntry, RolloutGroup } from '../../core/api/client.ts';
import { fixed, groupFlags, groupLabel, groupModel, rolloutExperiments, rolloutLabel, signed, signedBar, signOf, SIGN_SYMBOL } from './rollouts.ts';

function entry(g: number, over: Partial<RolloutEntry> = {}): RolloutEntry {
  return {
    runId: `exp-r${g}`, taskIndex: g, taskId: `t0#r${g}`, seed: 100 + g, score: 0, correct: false, status: 'completed',
    perRole: {}, outcomeAdvantage: null, simulated: false, ...over,
  };
}

function group(rollouts: RolloutEntry[], over: Partial<RolloutGroup> = {}): RolloutGroup {
  return {
    index: 0, groupKey: 't0', complete: true, rollouts, zeroSpread: {}, stats: {}, outcome: { mean: 0, std: 0, zeroSpread: true }, noSignal: false, ...over,
  };
}

describe('signed values', () => {
  it('prints an explicit sign, a true minus, and zero without a sign', () => {
    expect(signed(1.2247418714)).toBe('+1.22');
    expect(signed(-0.7071)).toBe('−0.71');
    expect(signed(0)).toBe('0.00');
    expect(signed(-0.001)).toBe('0.00'); // would print as -0.00
    expect(signed(null)).toBe('–');
    expect(signed(undefined)).toBe('–');
    expect(signed(0.5, 1)).toBe('+0.5');
  });

  it('classifies signs with a symbol for each, so colour is never the only cue', () => {
    expect([signOf(0.3), signOf(-0.3), signOf(0), signOf(null), signOf(Number.NaN)]).toEqual(['pos', 'neg', 'zero', 'none', 'none']);
    expect(SIGN_SYMBOL).toEqual({ pos: '▲', neg: '▼', zero: '=', none: '–' });
  });

  it('draws bars on a track from −scale to +scale, half a track at most', () => {
    expect(signedBar(1, 2)).toEqual({ sign: 'pos', widthPct: 25 });
    expect(signedBar(-2, 2)).toEqual({ sign: 'neg', widthPct: 50 });
    expect(signedBar(-5, 2)).toEqual({ sign: 'neg', widthPct: 50 });
    expect(signedBar(0, 2)).toEqual({ sign: 'zero', widthPct: 0 });
    expect(signedBar(null, 2)).toEqual({ sign: 'none', widthPct: 0 });
    expect(signedBar(1, 0)).toEqual({ sign: 'pos', widthPct: 0 });
  });

  it('formats plain numbers', () => {
    expect([fixed(0.5), fixed(1 / 3, 3), fixed(null), fixed(Number.POSITIVE_INFINITY)]).toEqual(['0.50', '0.333', '–', '–']);
  });
});

describe('rollout groups as columns', () => {
  it('keeps only rollouts experiments', () => {
    const e = (id: string, kind: ExperimentSummary['kind']) => ({ id, kind }) as ExperimentSummary;
    expect(rolloutExperiments([e('a', 'run'), e('b', 'rollouts'), e('c', 'blame-eval'), e('d', 'rollouts')]).map((x) => x.id)).toEqual(['b', 'd']);
  });

  it('labels a rollout by its task id suffix, else by its position in the group', () => {
    expect(rolloutLabel({ taskId: 't7#r3', taskIndex: 99 }, 4)).toBe('r3');
    expect(rolloutLabel({ taskId: 't7', taskIndex: 9 }, 4)).toBe('r1');
  });

  it('lays out a group: one column per rollout, one cell per learning role, bars on a shared scale', () => {
    const a = 1.2247418714;
    const g = group(
      [
        entry(0, { score: 1, correct: true, perRole: { planner: { reward: 1, advantage: a }, solver: { reward: 0.8, advantage: 0 } }, outcomeAdvantage: 1.4142 }),
        entry(1, { perRole: { planner: { reward: 0.5, advantage: 0 }, solver: { reward: 0.8, advantage: 0 } }, outcomeAdvantage: -0.7071 }),
        entry(2, { simulated: true, status: 'failed', perRole: { planner: { reward: 0, advantage: -a }, solver: { reward: 0.8, advantage: 0 } }, outcomeAdvantage: -0.7071 }),
      ],
      {
        zeroSpread: { planner: false, solver: true },
        stats: { planner: { mean: 0.5, std: Math.sqrt(1 / 6), size: 3 }, solver: { mean: 0.8, std: 0, size: 3 } },
        outcome: { mean: 1 / 3, std: 0.4714, zeroSpread: false },
      },
    );
    const m = groupModel({ learningRoles: ['planner', 'solver', 'verifier'], group: 3 }, g);
    expect(m.roles).toEqual(['planner', 'solver']); // verifier took no part
    expect(m.scale).toBeCloseTo(1.4142, 12);
    expect(m.correct).toBe(1);
    expect(m.columns.map((c) => [c.runId, c.label, c.seed, c.score, c.correct, c.simulated, c.status])).toEqual([
      ['exp-r0', 'r0', 100, '1.00', true, false, 'completed'],
      ['exp-r1', 'r1', 101, '0.00', false, false, 'completed'],
      ['exp-r2', 'r2', 102, '0.00', false, true, 'failed'],
    ]);
    expect(m.columns.map((c) => c.roles.map((r) => [r.role, r.h, r.a, r.sign, r.zeroSpread]))).toEqual([
      [['planner', '1.00', '+1.22', 'pos', false], ['solver', '0.80', '0.00', 'zero', true]],
      [['planner', '0.50', '0.00', 'zero', false], ['solver', '0.80', '0.00', 'zero', true]],
      [['planner', '0.00', '−1.22', 'neg', false], ['solver', '0.80', '0.00', 'zero', true]],
    ]);
    expect(m.columns[0]!.roles[0]!.bar.widthPct).toBeCloseTo((a / 1.4142) * 50, 9);
    expect(m.columns[2]!.roles[0]!.bar.sign).toBe('neg');
    expect(m.columns.map((c) => [c.outcome.a, c.outcome.sign])).toEqual([['+1.41', 'pos'], ['−0.71', 'neg'], ['−0.71', 'neg']]);
    expect(m.roleStats).toEqual([
      { role: 'planner', text: 'mean h 0.50 · std 0.41', zeroSpread: false },
      { role: 'solver', text: 'mean h 0.80 · std 0.00', zeroSpread: true },
    ]);
    expect(m.flags).toEqual(['zero spread for solver: no learning signal for that role (A = 0)']);
  });

  it('uses a scale of at least 1 and shows missing advantages as not computed', () => {
    const g = group([entry(0, { perRole: { solver: { reward: 0.1, advantage: null } } })], { complete: false, zeroSpread: {}, stats: { solver: { mean: 0.1, std: 0, size: 1 } } });
    const m = groupModel({ learningRoles: ['solver'], group: 4 }, g);
    expect(m.scale).toBe(1);
    expect(m.columns[0]!.roles[0]).toMatchObject({ h: '0.10', a: '–', sign: 'none', bar: { sign: 'none', widthPct: 0 } });
    expect(m.columns[0]!.outcome).toMatchObject({ a: '–', sign: 'none' });
    expect(m.flags).toEqual(['incomplete: advantages are computed once every rollout is stored (flowlab resume)']);
  });

  it('flags a group with no learning signal in words, in the picker too', () => {
    const g = group([entry(0), entry(1)], { index: 1, groupKey: 't1', noSignal: true, zeroSpread: { planner: true, solver: true } });
    expect(groupFlags(g)).toEqual([
      'no learning signal: every learning role got the same h in every rollout, so every advantage is 0',
      'equal outcomes: every rollout scored the same, so the Flow-GRPO advantage is 0',
    ]);
    expect(groupLabel(g)).toBe('task 1 t1 · 0/2 ✓ · no signal');
    expect(groupLabel(group([entry(0, { correct: true })], { complete: false }))).toBe('task 0 t0 · 1/1 ✓ · incomplete');
  });
});
