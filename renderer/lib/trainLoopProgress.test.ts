import { describe, expect, it } from 'vitest';
import type { TrainLoopEvent } from '../../core/api/client.ts';
import { applyLoopEvent, loopFinished, loopLine, startLoopProgress } from './trainLoopProgress.ts';

describe('train loop progress from pushed events', () => {
  it('follows a 2-iteration loop from running to completed', () => {
    const events: TrainLoopEvent[] = [
      { type: 'trainLoop', loopId: 'tl-1', status: 'running', roles: ['writer'], done: 0, iterations: 2 },
      { type: 'trainHeldout', loopId: 'tl-1', phase: 'before', experimentId: 'e0', score: 0.25, samples: 4, roles: { writer: 0.1 } },
      { type: 'trainRollout', loopId: 'tl-1', iteration: 1, done: 3, total: 4 },
      { type: 'trainIteration', loopId: 'tl-1', iteration: 1, experimentId: 'e1', score: 0.5, sampledTokens: 10, seconds: 1, roles: { writer: { reward: 0.2, samples: 4, signalSamples: 2, versionId: 'wv-1' } } },
      { type: 'trainRollout', loopId: 'tl-2', iteration: 1, done: 1, total: 4 },
      { type: 'trainRollout', loopId: 'tl-1', iteration: 2, done: 1, total: 4 },
    ];
    let p = startLoopProgress('tl-1', 2);
    for (const e of events) p = applyLoopEvent(p, e);
    expect(p).toMatchObject({ status: 'running', done: 1, iterations: 2, rollouts: { iteration: 2, done: 1, total: 4 }, heldout: { before: 0.25 } });
    expect(p.points).toEqual([{ iteration: 1, experimentId: 'e1', score: 0.5, versions: { writer: 'wv-1' } }]);
    expect(loopLine(p)).toBe('running: 1 of 2 iterations · iteration 2 rollouts 1/4 · last score 0.50 · held-out 0.25');
    expect(loopFinished(p)).toBe(false);
    p = applyLoopEvent(p, { type: 'trainLoop', loopId: 'tl-1', status: 'completed', roles: ['writer'], done: 2, iterations: 2 });
    expect(loopFinished(p)).toBe(true);
    expect(p.rollouts).toBeNull();
    expect(p.done).toBe(2);
  });
});
