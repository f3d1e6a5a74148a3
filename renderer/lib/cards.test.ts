import { describe, expect, it } from 'vitest';
import type { CardEffectView, LibraryCard } from '../../core/api/client.ts';
import { timestamp } from '../views/format.ts';
import { cardRoles, effectText, NOT_MEASURED, provenance, usesText } from './cards.ts';

const CARD: LibraryCard = {
  id: 'card-1', role: 'solver', title: 'Write the expression', appliesWhen: 'word problems', advice: 'One step per line.',
  sourceRuns: ['r1', 'r2', 'r3', 'r4', 'r5', 'r6', 'r7'], experimentId: 'exp-a', teacher: 'tiny.gguf', shots: 3, onlySuccesses: true,
  simulated: false, createdAt: 1_700_000_000_000, uses: 2,
};

const view = (over: Partial<CardEffectView>): CardEffectView => ({ card: CARD, usedBy: { runs: 2, experiments: ['exp-c'] }, effect: null, ...over });

describe('prior library view model', () => {
  it('lists provenance: teacher, shots, source runs (first five), experiment, created', () => {
    expect(provenance(CARD)).toEqual([
      { label: 'Teacher', value: 'tiny.gguf' },
      { label: 'Shots', value: '3 (successful trajectories only)' },
      { label: 'Source runs', value: 'r1, r2, r3, r4, r5 +2 more' },
      { label: 'Experiment', value: 'exp-a' },
      { label: 'Created', value: timestamp(1_700_000_000_000) },
    ]);
    const bare = provenance({ ...CARD, sourceRuns: [], experimentId: undefined, onlySuccesses: false });
    expect(bare.map((p) => p.value).slice(1, 4)).toEqual(['3 (successes and failures)', 'none recorded', '–']);
  });

  it('counts uses and collects roles', () => {
    expect([usesText(0), usesText(1), usesText(5)]).toEqual(['not used yet', 'used in 1 run', 'used in 5 runs']);
    expect(cardRoles([CARD, { ...CARD, role: 'planner' }, CARD])).toEqual(['planner', 'solver']);
  });

  it('says how to measure a card that has no effect yet', () => {
    expect(effectText(undefined, 'solver')).toEqual({ measured: false, headline: NOT_MEASURED, details: [], sign: 'none' });
    expect(NOT_MEASURED).toBe('not measured yet: run with --cards and compare');
    const used = effectText(view({ reason: 'no run of the same workflow and tasks without this card yet' }), 'solver');
    expect(used).toMatchObject({ measured: false, details: ['no run of the same workflow and tasks without this card yet'] });
  });

  it('states a paired effect with its n, sign test and baseline', () => {
    const t = effectText(
      view({
        effect: {
          basis: 'paired', n: 2, nH: 2, with: { runs: 2, meanScore: 1, meanH: 0.9 }, without: { runs: 2, meanScore: 0.5, meanH: 0.6 },
          delta: { score: 0.5, h: 0.3 }, signTest: { score: { positive: 1, negative: 0, ties: 1, p: 1 }, h: { positive: 1, negative: 0, ties: 1, p: 1 } },
          seedsMatch: true, unpairedWith: 1, baselineExperiments: ['exp-base'],
        },
      }),
      'solver',
    );
    expect(t.measured).toBe(true);
    expect(t.sign).toBe('pos');
    expect(t.headline).toBe('▲ score 50.0% → 100.0% (+50.0 pts) · h(solver) 0.60 → 0.90 (+0.30)');
    expect(t.details).toEqual([
      'n = 2 paired tasks (with the card vs the same task without it, same seeds)',
      'sign test on score: 1 better / 0 worse / 1 tied, p = 1.000',
      'sign test on h: 1 better / 0 worse / 1 tied, p = 1.000',
      '1 run with the card had no run of the same task without it (left out)',
      'baseline: exp-base',
    ]);
  });

  it('marks an unpaired or harmful effect as such', () => {
    const t = effectText(
      view({
        effect: {
          basis: 'unpaired', n: 1, nH: 0, with: { runs: 1, meanScore: 0, meanH: null }, without: { runs: 3, meanScore: 0.5, meanH: 0.4 },
          delta: { score: -0.5, h: null }, unpairedWith: 1, baselineExperiments: ['exp-b'],
        },
      }),
      'planner',
    );
    expect(t.sign).toBe('neg');
    expect(t.headline).toBe('▼ score 50.0% → 0.0% (−50.0 pts) · h(planner) not recorded');
    expect(t.details[0]).toMatch(/^unpaired: 1 run with the card vs 3 without, on different tasks — weak evidence/);
  });
});
