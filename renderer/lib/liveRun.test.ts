import { describe, expect, it } from 'vitest';
import type { ExperimentLabEvent as LabEvent } from '../../core/api/lab.ts';
import { applyLabEvents, isFinished, progressOf, runTally, settledFromStored, startLiveRun, watchedNodes } from './liveRun.ts';

const node = (runId: string, nodeId: string, phase: 'started' | 'finished', extra: Partial<Extract<LabEvent, { type: 'node' }>> = {}): LabEvent => ({
  type: 'node', experimentId: 'e1', runId, nodeId, attempt: 1, phase, ...(phase === 'finished' ? { status: 'ok' as const } : {}), ...extra,
});

describe('applyLabEvents', () => {
  it('lights nodes up: running, then ok / failed, with simulated marked', () => {
    let live = startLiveRun('e1', 3);
    live = applyLabEvents(live, [node('r0', 'plan', 'started')])!;
    expect(live.status).toBe('running');
    expect(watchedNodes(live)).toEqual({ plan: { state: 'running', attempt: 1 } });
    live = applyLabEvents(live, [node('r0', 'plan', 'finished'), node('r0', 'solve', 'started'), node('r0', 'solve', 'finished', { status: 'failed', failureClass: 'execution', simulated: true })])!;
    expect(watchedNodes(live)).toMatchObject({ plan: { state: 'ok' }, solve: { state: 'failed', failureClass: 'execution', simulated: true } });
    expect(live.simulatedNodes).toBe(1);
  });

  it('never lets a late event of an earlier attempt overwrite a newer one', () => {
    let live = startLiveRun('e1');
    live = applyLabEvents(live, [node('r0', 'solve', 'started', { attempt: 2 }), node('r0', 'solve', 'finished', { attempt: 1, status: 'failed' })])!;
    expect(watchedNodes(live).solve).toMatchObject({ state: 'running', attempt: 2 });
  });

  it('tracks progress from run and experiment events, and ignores other experiments', () => {
    let live = startLiveRun('e1', 3);
    const before = live;
    expect(applyLabEvents(live, [{ ...node('x', 'n', 'started'), experimentId: 'other' }])).toBe(before);
    live = applyLabEvents(live, [
      node('r0', 'a', 'finished'),
      { type: 'run', experimentId: 'e1', runId: 'r0', taskIndex: 0, done: 1, total: 3, status: 'completed', correct: true },
      { type: 'run', experimentId: 'e1', runId: 'r1', taskIndex: 1, done: 2, total: 3, status: 'failed', correct: false },
    ])!;
    expect([live.done, live.total, live.runsCorrect, live.runsFailed]).toEqual([2, 3, 1, 1]);
    expect(progressOf(live)).toBeCloseTo(2 / 3);
    expect(isFinished(live)).toBe(false);
    live = applyLabEvents(live, [{ type: 'experiment', experimentId: 'e1', status: 'completed', done: 3, total: 3 }])!;
    expect(isFinished(live)).toBe(true);
    expect(progressOf(live)).toBe(1);
  });

  it('keeps watching a run until it finishes, then follows the next one', () => {
    let live = startLiveRun('e1');
    live = applyLabEvents(live, [node('r0', 'a', 'started'), node('r1', 'a', 'started')])!;
    expect(live.watching).toBe('r0');
    live = applyLabEvents(live, [{ type: 'run', experimentId: 'e1', runId: 'r0', taskIndex: 0, done: 1, total: 2, status: 'completed', correct: false }])!;
    expect(live.watching).toBe('r0');
    live = applyLabEvents(live, [node('r1', 'b', 'started')])!;
    expect(live.watching).toBe('r1');
    // r1's earlier node is still known: its events were kept while r0 was watched.
    expect(Object.keys(watchedNodes(live)).sort()).toEqual(['a', 'b']);
    expect(live.runs.r0).toBeUndefined();
  });

  it('is a no-op without a live run', () => {
    expect(applyLabEvents(null, [node('r0', 'a', 'started')])).toBeNull();
  });
});

describe('settledFromStored (the followed run after the connection came back)', () => {
  const live = { ...startLiveRun('exp-1', 4), status: 'running' as const, done: 3, runsCorrect: 1, runsWrong: 2 };
  it('takes the stored end and the runs stored while events were missed: 3 seen + 1 earlier = 4 of 4', () => {
    const next = settledFromStored(live, { status: 'completed', runsDone: 4 });
    expect([next.status, next.done]).toEqual(['completed', 4]);
    expect(runTally(next)).toMatchObject({ done: 4, total: 4, earlier: 1 });
  });
  it('an interrupted experiment reads as cancelled, saying how to finish it; a running one is left as it is', () => {
    expect(settledFromStored(live, { status: 'interrupted', runsDone: 3 })).toMatchObject({ status: 'cancelled', done: 3, message: 'interrupted: the server stopped while it ran; Resume finishes it' });
    expect(settledFromStored(live, { status: 'running', runsDone: 4 })).toBe(live);
  });
});
