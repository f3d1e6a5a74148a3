import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newExperiment, runRecord } from '../../../test/fixtures.ts';
import { openStore, type Store } from '../../store/index.ts';
import { ApiError, createHandlers, type FlowlabApi } from '../index.ts';
import { experimentMetaOf } from './experiments.ts';

let store: Store;
let api: FlowlabApi;

function experiment(id: string, config: unknown, scores: number[]) {
  store.createExperiment(newExperiment({ id, config, limit: scores.length }));
  scores.forEach((score, i) => store.saveRun(runRecord(id, i, { score, correct: score === 1 }), []));
}

beforeEach(() => {
  store = openStore(':memory:');
  api = createHandlers({ store, version: '1' });
});
afterEach(() => store.close());

describe('experiment metadata in listExperiments', () => {
  it('groups a train loop\'s and a study\'s experiments and names their model files', () => {
    expect(experimentMetaOf('exp-1', { models: { models: { default: '/m/tiny.gguf', writer: '/v/tl-1/writer/iter-1.gguf' } }, trainLoop: { loopId: 'tl-1', iteration: 1 } }))
      .toEqual({ group: { kind: 'train-loop', id: 'tl-1', iteration: 1 }, models: ['iter-1.gguf', 'tiny.gguf'] });
    expect(experimentMetaOf('st-laptop-0a1b2c3d.base.id.s0.m', { source: 'study st-laptop-0a1b2c3d' })).toEqual({ group: { kind: 'study', id: 'st-laptop-0a1b2c3d' }, models: [] });
    expect(experimentMetaOf('x', { trainLoop: { loopId: 'st-laptop-0a1b2c3d.tr.s0.m.tl0', phase: 'heldout-after' } }))
      .toEqual({ group: { kind: 'study', id: 'st-laptop-0a1b2c3d', loopId: 'st-laptop-0a1b2c3d.tr.s0.m.tl0', phase: 'heldout-after' }, models: [] });
    expect(experimentMetaOf('exp-2', null)).toEqual({ models: [] });
    experiment('exp-a', { models: { models: { default: '/m/tiny.gguf' } }, trainLoop: { loopId: 'tl-9', iteration: 2 } }, [1]);
    expect(api.listExperiments()[0]).toMatchObject({ id: 'exp-a', group: { kind: 'train-loop', id: 'tl-9', iteration: 2 }, models: ['tiny.gguf'] });
  });
});

describe('compareExperiments', () => {
  it('pairs by task as flowlab compare does', () => {
    experiment('exp-a', null, [0, 0, 1, 0]);
    experiment('exp-b', null, [1, 1, 1]);
    const v = api.compareExperiments({ a: 'exp-a', b: 'exp-b' });
    expect(v).toMatchObject({ a: 'exp-a', b: 'exp-b', pairs: 3, unpairedA: 1, unpairedB: 0, seedsMatch: true, sides: { a: { workflowName: 'demo', runs: 4 }, b: { runs: 3 } } });
    expect(v.score.a).toBeCloseTo(1 / 3, 10);
    expect(v.score.delta).toBeCloseTo(2 / 3, 10);
    expect(v.score.signTest).toMatchObject({ positive: 2, negative: 0, ties: 1 });
    expect(() => api.compareExperiments({ a: 'exp-a', b: 'nope' })).toThrow(ApiError);
  });
});

describe('hint cards: trust, delete, export', () => {
  const card = (id: string, over: Record<string, unknown>) => store.improve.saveCard({
    id, role: 'solver', title: 't', appliesWhen: 'w', advice: 'a', sourceRuns: [], teacher: 'tiny.gguf', shots: 2, onlySuccesses: false, simulated: false, createdAt: 1, ...over,
  });

  it('flags a card distilled from failed runs or simulated ones, and not one from correct runs', () => {
    experiment('exp-a', null, [0, 0, 1]);
    card('c-failed', { experimentId: 'exp-a', sourceRuns: ['exp-a-r0', 'exp-a-r1'] });
    card('c-mixed', { experimentId: 'exp-a', sourceRuns: ['exp-a-r1', 'exp-a-r2'] });
    card('c-good', { experimentId: 'exp-a', sourceRuns: ['exp-a-r2'] });
    card('c-sim', { simulated: true, sourceRuns: ['gone'] });
    const trust = Object.fromEntries(api.listCards().map((c) => [c.id, c.trust]));
    expect(trust['c-failed']).toMatchObject({ flagged: true, failedSources: 2, found: 2, reasons: ['distilled from 2 failed runs (every one of its sources was graded wrong)'] });
    expect(trust['c-mixed']).toMatchObject({ flagged: true, failedSources: 1, reasons: ['1 of its 2 source runs were graded wrong'] });
    expect(trust['c-good']).toMatchObject({ flagged: false, failedSources: 0, reasons: [] });
    expect(trust['c-sim']!.flagged).toBe(true);
    expect(trust['c-sim']!.reasons).toHaveLength(2);
  });

  it('exports the exchange document and deletes a card', () => {
    card('c1', {});
    card('c2', {});
    expect(api.exportCards({ ids: ['c2'] }).cards.map((c) => c.id)).toEqual(['c2']);
    expect(api.exportCards().cards.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(() => api.exportCards({ ids: ['c9'] })).toThrow(/no card\(s\) c9/);
    expect(api.deleteCard({ cardId: 'c1' })).toEqual({ deleted: true });
    expect(api.listCards().map((c) => c.id)).toEqual(['c2']);
    try {
      api.deleteCard({ cardId: 'c1' });
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).code).toBe('NOT_FOUND');
    }
  });
});
