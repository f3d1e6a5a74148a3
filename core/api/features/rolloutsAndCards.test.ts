import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectBadRequest, laddersOf, runRecord, thrownBy } from '../../../test/fixtures.ts';
import { asExperimentId, type ExperimentId } from '../../ids.ts';
import { groupRollouts, rolloutIndex, rolloutTaskId } from '../../rollouts/index.ts';
import { computeWorkflowHash, openStore, type Card, type Store } from '../../store/index.ts';
import type { RunRecord } from '../../results/index.ts';
import { measureEffect } from './cards.ts';
import { ApiError, createHandlers, type FlowlabApi } from '../index.ts';

const YAML = 'name: team\nsteps: []\n';
const HASH = computeWorkflowHash(YAML);
const ROLL = asExperimentId('exp-roll');
const G = 3;
const ROLES = ['planner', 'solver'];

let store: Store;
let api: FlowlabApi;

function run(expId: ExperimentId, taskIndex: number, taskId: string, over: Partial<RunRecord> & { h?: Record<string, number> } = {}): RunRecord {
  const { h, ...rest } = over;
  return runRecord(expId, taskIndex, {
    taskId, answer: '1', expected: '1', score: 0, correct: false, seed: 1000 + taskIndex, promptTokens: 10, completionTokens: 5, endedAt: 1_700_000_000_100,
    ...(h ? { ladder: laddersOf(h) } : {}),
    ...rest,
  });
}

function experiment(id: string, kind: 'run' | 'rollouts', taskIds: string[], config: unknown = {}, yaml = YAML) {
  store.createExperiment({
    id, kind, workflowName: 'team', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml),
    dataset: 'gsm8k', split: 'test', seed: 7, config,
    tasks: taskIds.map((taskId, taskIndex) => ({ taskIndex, taskId, input: { question: taskId }, expected: '1' })),
  });
}

function card(id: string, role: string, over: Partial<Card> = {}): Card {
  return {
    id, role, title: `Check the ${role}'s arithmetic`, appliesWhen: 'multi-step word problems', advice: 'Write each step as an expression.',
    sourceRuns: ['exp-roll-r0'], experimentId: 'exp-roll', teacher: 'tiny.gguf', shots: 2, onlySuccesses: true, simulated: false,
    createdAt: 1_700_000_000_000, ...over,
  };
}

const apiError = (fn: () => unknown): ApiError => thrownBy(ApiError, fn);

beforeEach(() => {
  store = openStore(':memory:');
  // A rollouts experiment: 3 dataset tasks x G=3 (the third group interrupted after one rollout).
  const taskIds = ['t0', 't1', 't2'].flatMap((t) => Array.from({ length: G }, (_, g) => rolloutTaskId(t, g)));
  experiment(ROLL, 'rollouts', taskIds, { rollouts: { group: G, temperature: 0.8, mode: 'multi-agent', learningRoles: ROLES } });
  const rollouts: RunRecord[] = [
    // Group t0: planner h spreads 1, .5, 0; solver's h is the same in every rollout; one correct.
    run(ROLL, rolloutIndex(0, 0, G), 't0#r0', { h: { planner: 1, solver: 0.8 }, score: 1, correct: true }),
    run(ROLL, rolloutIndex(0, 1, G), 't0#r1', { h: { planner: 0.5, solver: 0.8 } }),
    run(ROLL, rolloutIndex(0, 2, G), 't0#r2', { h: { planner: 0, solver: 0.8 }, status: 'failed', failures: { execution: 1 } }),
    // Group t1: every reward equal: no learning signal at all.
    run(ROLL, rolloutIndex(1, 0, G), 't1#r0', { h: { planner: 0.2, solver: 0.4 } }),
    run(ROLL, rolloutIndex(1, 1, G), 't1#r1', { h: { planner: 0.2, solver: 0.4 } }),
    run(ROLL, rolloutIndex(1, 2, G), 't1#r2', { h: { planner: 0.2, solver: 0.4 }, simulated: true }),
    // Group t2: interrupted after its first rollout.
    run(ROLL, rolloutIndex(2, 0, G), 't2#r0', { h: { planner: 0.7, solver: 0.1 } }),
  ];
  for (const r of rollouts) store.saveRun(r, []);
  // What `flowlab rollouts` stores: advantages of every complete group.
  store.improve.saveAdvantages(groupRollouts(store.listRuns(ROLL), G, ROLES).rows);
  api = createHandlers({ store, version: '0.0.0' });
});

afterEach(() => store.close());

describe('getRollouts', () => {
  it('groups the rollouts by task with each role\'s reward h and advantage A (hand-computed)', () => {
    const v = api.getRollouts({ experimentId: ROLL });
    expect(v).toMatchObject({ experimentId: ROLL, workflowName: 'team', group: 3, temperature: 0.8, mode: 'multi-agent', learningRoles: ROLES, plannedGroups: 3 });
    expect(v.groups.map((g) => [g.index, g.groupKey, g.complete, g.rollouts.length])).toEqual([
      [0, 't0', true, 3],
      [1, 't1', true, 3],
      [2, 't2', false, 1],
    ]);
    const [g0] = v.groups;
    expect(g0!.rollouts.map((r) => [r.runId, r.taskId, r.seed, r.score, r.correct, r.status])).toEqual([
      ['exp-roll-r0', 't0#r0', 1000, 1, true, 'completed'],
      ['exp-roll-r1', 't0#r1', 1001, 0, false, 'completed'],
      ['exp-roll-r2', 't0#r2', 1002, 0, false, 'failed'],
    ]);
    // planner: mean .5, population std sqrt(1/6); A = ±0.5 / (sqrt(1/6) + 1e-6).
    const a = 0.5 / (Math.sqrt(1 / 6) + 1e-6);
    expect(a).toBeCloseTo(1.2247418714, 9);
    const planner = g0!.rollouts.map((r) => r.perRole['planner']!);
    expect(planner.map((p) => p.reward)).toEqual([1, 0.5, 0]);
    expect(planner[0]!.advantage).toBeCloseTo(a, 12);
    expect(planner[1]!.advantage).toBe(0);
    expect(planner[2]!.advantage).toBeCloseTo(-a, 12);
    // solver: zero spread -> A = 0 exactly, flagged.
    expect(g0!.rollouts.map((r) => r.perRole['solver'])).toEqual([
      { reward: 0.8, advantage: 0 },
      { reward: 0.8, advantage: 0 },
      { reward: 0.8, advantage: 0 },
    ]);
    expect(g0!.zeroSpread).toEqual({ planner: false, solver: true });
    expect(g0!.noSignal).toBe(false);
    expect(g0!.stats['planner']!.mean).toBeCloseTo(0.5, 12);
    expect(g0!.stats['planner']!.std).toBeCloseTo(Math.sqrt(1 / 6), 12);
    // Flow-GRPO: scores 1, 0, 0 -> mean 1/3, std sqrt(2/9): A = (1 - 1/3)/(std + eps), (0 - 1/3)/(std + eps).
    expect(g0!.rollouts[0]!.outcomeAdvantage).toBeCloseTo(1.4142105624, 9);
    expect(g0!.rollouts[1]!.outcomeAdvantage).toBeCloseTo(-0.7071052812, 9);
    expect(g0!.rollouts[2]!.outcomeAdvantage).toBeCloseTo(-0.7071052812, 9);
    expect(g0!.outcome.zeroSpread).toBe(false);
  });

  it('flags a group with zero spread for every role as carrying no learning signal', () => {
    const g1 = api.getRollouts({ experimentId: ROLL }).groups[1]!;
    expect(g1.zeroSpread).toEqual({ planner: true, solver: true });
    expect(g1.noSignal).toBe(true);
    expect(g1.outcome).toEqual({ mean: 0, std: 0, zeroSpread: true });
    expect(g1.rollouts.map((r) => [r.perRole['planner']!.advantage, r.perRole['solver']!.advantage, r.outcomeAdvantage])).toEqual([
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    expect(g1.rollouts.map((r) => r.simulated)).toEqual([false, false, true]);
  });

  it('shows an incomplete group\'s rewards without advantages (none stored until it completes)', () => {
    const g2 = api.getRollouts({ experimentId: ROLL }).groups[2]!;
    expect(g2.complete).toBe(false);
    expect(g2.rollouts[0]!.perRole).toEqual({ planner: { reward: 0.7, advantage: null }, solver: { reward: 0.1, advantage: null } });
    expect(g2.rollouts[0]!.outcomeAdvantage).toBeNull();
  });

  it('refuses an experiment that is not a rollouts experiment, and an unknown id', () => {
    experiment('exp-plain', 'run', ['t0']);
    const bad = apiError(() => api.getRollouts({ experimentId: 'exp-plain' }));
    expect(bad).toMatchObject({ code: 'BAD_REQUEST', method: 'getRollouts', field: 'experimentId' });
    expect(bad.message).toMatch(/^getRollouts: experiment exp-plain is a run experiment, not a rollouts experiment; make one with `flowlab rollouts/);
    const missing = apiError(() => api.getRollouts({ experimentId: 'nope' }));
    expect(missing.code).toBe('NOT_FOUND');
    expect(missing.message).toMatch(/^getRollouts: .*no experiment nope/);
  });

  it('answers an empty rollouts experiment with no groups', () => {
    experiment('exp-empty', 'rollouts', ['t0#r0', 't0#r1'], { rollouts: { group: 2, temperature: 1, mode: 'single:solver', learningRoles: ['solver'] } });
    expect(api.getRollouts({ experimentId: 'exp-empty' })).toMatchObject({ group: 2, mode: 'single:solver', plannedGroups: 1, groups: [] });
  });
});

describe('listCards and getCardEffect', () => {
  /**
   * Baseline exp-base (no cards) and exp-cards (the solver card on t0 and t1) run the same
   * workflow on the same tasks with the same seeds; exp-base2 ran t0 again with another seed.
   */
  function seedCards() {
    store.improve.saveCard(card('card-solver', 'solver', { createdAt: 1_700_000_000_001 }));
    store.improve.saveCard(card('card-planner', 'planner', { simulated: true, teacher: 'scripted (SIMULATED)', createdAt: 1_700_000_000_002 }));
    experiment('exp-base', 'run', ['t0', 't1', 't2']);
    experiment('exp-cards', 'run', ['t0', 't1', 't2']);
    experiment('exp-base2', 'run', ['t0']);
    const base = asExperimentId('exp-base');
    const cards = asExperimentId('exp-cards');
    store.saveRun(run(base, 0, 't0', { seed: 11, score: 0, h: { solver: 0.3 } }), []);
    store.saveRun(run(base, 1, 't1', { seed: 12, score: 1, correct: true, h: { solver: 0.9 } }), []);
    store.saveRun(run(base, 2, 't2', { seed: 13, score: 0, h: { solver: 0.3 } }), []);
    store.saveRun(run(cards, 0, 't0', { seed: 11, score: 1, correct: true, h: { solver: 0.9 } }), []);
    store.saveRun(run(cards, 1, 't1', { seed: 12, score: 1, correct: true, h: { solver: 0.9 } }), []);
    store.saveRun(run(cards, 2, 't2', { seed: 13, score: 0, h: { solver: 0.35 } }), []);
    store.saveRun(run(asExperimentId('exp-base2'), 0, 't0', { seed: 99, score: 1, correct: true, h: { solver: 1 } }), []);
    store.improve.recordUses('exp-cards-r0', ['card-solver']);
    store.improve.recordUses('exp-cards-r1', ['card-solver']);
  }

  it('lists the library with provenance and use counts, filtered by role', () => {
    seedCards();
    const all = api.listCards();
    expect(all.map((c) => [c.id, c.role, c.uses, c.simulated])).toEqual([
      ['card-solver', 'solver', 2, false],
      ['card-planner', 'planner', 0, true],
    ]);
    expect(all[0]).toMatchObject({ title: "Check the solver's arithmetic", appliesWhen: 'multi-step word problems', teacher: 'tiny.gguf', shots: 2, sourceRuns: ['exp-roll-r0'], experimentId: 'exp-roll', createdAt: 1_700_000_000_001 });
    expect(api.listCards({ role: 'planner' }).map((c) => c.id)).toEqual(['card-planner']);
    expect(api.listCards({})).toHaveLength(2);
    expect(api.listCards({ role: 'nobody' })).toEqual([]);
  });

  it('measures a used card against runs of the same tasks without it, paired by task and seed', () => {
    seedCards();
    const v = api.getCardEffect({ cardId: 'card-solver' });
    expect(v.card).toMatchObject({ id: 'card-solver', uses: 2 });
    expect(v.usedBy).toEqual({ runs: 2, experiments: ['exp-cards'] });
    const e = v.effect!;
    expect(e).toMatchObject({ basis: 'paired', n: 2, nH: 2, seedsMatch: true, unpairedWith: 0, baselineExperiments: ['exp-base'] });
    // t0: 1 vs 0 (exp-base, seed 11; exp-base2's seed-99 run is not the pair), t1: 1 vs 1.
    expect(e.with).toEqual({ runs: 2, meanScore: 1, meanH: 0.9 });
    expect(e.without.meanScore).toBe(0.5);
    expect(e.without.meanH).toBeCloseTo(0.6, 12);
    expect(e.delta.score).toBe(0.5);
    expect(e.delta.h).toBeCloseTo(0.3, 12);
    expect(e.signTest!.score).toEqual({ positive: 1, negative: 0, ties: 1, p: 1 });
    expect(e.signTest!.h).toEqual({ positive: 1, negative: 0, ties: 1, p: 1 });
  });

  it('says why a card has no measured effect', () => {
    seedCards();
    expect(api.getCardEffect({ cardId: 'card-planner' })).toMatchObject({ usedBy: { runs: 0, experiments: [] }, effect: null, reason: expect.stringMatching(/no run has used this card yet/) });
    // Used only by a workflow nobody ran without it.
    experiment('exp-other', 'run', ['t0'], {}, 'name: other\nsteps: []\n');
    store.saveRun(run(asExperimentId('exp-other'), 0, 't0', { h: { planner: 0.5 } }), []);
    store.improve.recordUses('exp-other-r0', ['card-planner']);
    const v = api.getCardEffect({ cardId: 'card-planner' });
    expect(v.usedBy).toEqual({ runs: 1, experiments: ['exp-other'] });
    expect(v.effect).toBeNull();
    expect(v.reason).toMatch(/no run of the same workflow and tasks without this card/);
  });

  it('falls back to an unpaired comparison when no task is shared', () => {
    const e = measureEffect('solver', [run(ROLL, 0, 'a#r0', { score: 1, h: { solver: 0.8 } })], [run(ROLL, 1, 'b', { score: 0, h: { solver: 0.2 } }), run(ROLL, 2, 'c', { score: 1 })]);
    expect(e).toMatchObject({ basis: 'unpaired', n: 1, nH: 1, unpairedWith: 1, with: { runs: 1, meanScore: 1, meanH: 0.8 }, without: { runs: 2, meanScore: 0.5, meanH: 0.2 } });
    expect(e.delta.score).toBe(0.5);
    expect(e.delta.h).toBeCloseTo(0.6, 12);
    expect(e.signTest).toBeUndefined();
  });

  it('pairs rollouts by their dataset task and averages several baseline runs of one task', () => {
    const e = measureEffect('solver', [run(ROLL, 0, 't0', { seed: 5, score: 1, h: { solver: 1 } })], [
      run(ROLL, 1, 't0#r0', { seed: 1, score: 1, h: { solver: 0.5 } }),
      run(ROLL, 2, 't0#r1', { seed: 2, score: 0, h: { solver: 0.1 } }),
    ]);
    expect(e).toMatchObject({ basis: 'paired', n: 1, seedsMatch: false, without: { runs: 1, meanScore: 0.5 } });
    expect(e.without.meanH).toBeCloseTo(0.3, 12);
  });

  it('reports an unknown card as NOT_FOUND', () => {
    const err = apiError(() => api.getCardEffect({ cardId: 'card-x' }));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(/^getCardEffect: .*no card card-x/);
  });
});

describe('rollouts and hint-card payload validation', () => {
  const raw = () => api as unknown as Record<string, (p?: unknown) => unknown>;

  it.each([
    ['getRollouts', undefined, undefined, /getRollouts: payload: expected an object, received undefined/],
    ['getRollouts', {}, 'experimentId', /getRollouts: payload field "experimentId": missing \(expected string\)/],
    ['getRollouts', { experimentId: 5 }, 'experimentId', /getRollouts: payload field "experimentId": expected string, received number/],
    ['getRollouts', { experimentId: 'e', group: 2 }, 'group', /getRollouts: payload: unknown field\(s\) "group"/],
    ['listCards', { role: 3 }, 'role', /listCards: payload field "role": expected string, received number/],
    ['listCards', { role: '' }, 'role', /listCards: payload field "role": must not be empty/],
    ['listCards', { role: 'solver', limit: 1 }, 'limit', /listCards: payload: unknown field\(s\) "limit"/],
    ['listCards', 'solver', undefined, /listCards: payload: expected an object, received string/],
    ['getCardEffect', { cardId: '' }, 'cardId', /getCardEffect: payload field "cardId": must not be empty/],
    ['getCardEffect', { cardId: 'x'.repeat(201) }, 'cardId', /getCardEffect: payload field "cardId": must be at most 200 characters/],
    ['getCardEffect', { id: 'card-1' }, 'cardId', /getCardEffect: payload field "cardId": missing \(expected string\)/],
  ])('%s(%j) is rejected as BAD_REQUEST naming field %s', (method, payload, field, message) => {
    expectBadRequest(() => raw()[method]!(payload), method, field, message);
  });

  it('reports a closed store as UNAVAILABLE', () => {
    store.close();
    expect(apiError(() => api.listCards()).code).toBe('UNAVAILABLE');
    expect(apiError(() => api.getRollouts({ experimentId: ROLL })).code).toBe('UNAVAILABLE');
  });
});
