import { describe, expect, it } from 'vitest';
import { newExperiment, runRecord } from '../../test/fixtures.ts';
import { asRunId } from '../ids.ts';
import { openStore } from './index.ts';

describe('forks repo (migration 11)', () => {
  it('stores a fork whole and links it; a failing commit writes nothing', () => {
    const store = openStore(':memory:');
    const parentExp = store.createExperiment(newExperiment({ limit: 1 }));
    store.saveRun(runRecord(parentExp.id, 0, { runId: asRunId(`${parentExp.id}/0`) }), []);
    const parent = `${parentExp.id}/0`;
    const fork = (id: string) => ({
      experiment: newExperiment({ id, kind: 'fork' as const, limit: 1 }),
      run: runRecord(id, 0, { runId: asRunId(`${id}/0`), correct: false }),
      events: [],
      link: { parentRunId: parent, parentExperimentId: parentExp.id, nodeId: 'solve', attempt: 2, intervention: { kind: 'output', output: '{}' } },
    });
    const a = store.forks.commit(fork('fork-a'));
    expect(a).toMatchObject({ runId: 'fork-a/0', experimentId: 'fork-a', parentRunId: parent, nodeId: 'solve', attempt: 2, intervention: { kind: 'output', output: '{}' } });
    expect(store.getExperiment('fork-a')).toMatchObject({ kind: 'fork', status: 'completed' });
    store.forks.commit(fork('fork-b'));
    expect(store.forks.forksOf(parent).map((l) => l.runId)).toEqual(['fork-a/0', 'fork-b/0']);
    expect(store.forks.linkOf(parent)).toBeUndefined();
    const before = store.listExperiments().length;
    // The same experiment id again: EXPERIMENT_EXISTS, and neither a run nor a link is written.
    expect(() => store.forks.commit(fork('fork-a'))).toThrow(expect.objectContaining({ code: 'EXPERIMENT_EXISTS' }));
    // An unknown parent: NOT_FOUND before anything is written.
    expect(() => store.forks.commit({ ...fork('fork-c'), link: { ...fork('fork-c').link, parentRunId: 'nope/0' } })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(store.findExperiment('fork-c')).toBeUndefined();
    // A run the new experiment does not plan: the experiment written first is rolled back with it.
    expect(() => store.forks.commit({ ...fork('fork-d'), run: runRecord('fork-d', 5, { runId: asRunId('fork-d/5') }) })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(store.findExperiment('fork-d')).toBeUndefined();
    expect(store.listExperiments().length).toBe(before);
    expect(store.forks.forksOf(parent)).toHaveLength(2);
    store.close();
  });
});
