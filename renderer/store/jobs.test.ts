/**
 * The jobs slice reads every family's events into the one job shape (jobEventOf) and keeps one
 * record per job: a toy job's `job` events, an experiment, a train loop, a MASS job's progress
 * line and a study stopped early.
 */
import { describe, expect, it } from 'vitest';
import type { LabEvent } from '../../core/api/client.ts';
import { foldJob, jobEventOf, MAX_JOBS } from './jobs.ts';

describe('the jobs slice', () => {
  it('folds every family into one record per job, progress keeping what it does not say', () => {
    const events: LabEvent[] = [
      { type: 'job', kind: 'count', id: 'c1', status: 'running', done: 1, total: 3, summary: 'counted to 1' },
      { type: 'experiment', experimentId: 'e1', status: 'running', done: 0, total: 4 },
      { type: 'trainLoop', loopId: 'tl-1', status: 'running', roles: ['writer'], done: 0, iterations: 2 },
      { type: 'massJob', jobId: 'evo-1', job: 'evolve', status: 'running' },
      { type: 'massProgress', jobId: 'evo-1', job: 'evolve', line: 'iteration 1: 0.5', done: 1, total: 5 },
      { type: 'run', experimentId: 'e1', runId: 'e1/0', taskIndex: 0, done: 1, total: 4, status: 'completed', correct: true },
      { type: 'experiment', experimentId: 'e1', status: 'completed', done: 4, total: 4 },
      { type: 'studyJob', studyId: 's1', dryRun: false, status: 'stopped', message: 'budget reached' },
      { type: 'job', kind: 'count', id: 'c1', status: 'cancelled', done: 1, total: 3 },
    ];
    let jobs = {};
    for (const e of events) {
      const j = jobEventOf(e);
      if (j) jobs = foldJob(jobs, j);
    }
    expect(jobs).toEqual({
      'count:c1': { type: 'job', kind: 'count', id: 'c1', status: 'cancelled', done: 1, total: 3, summary: 'counted to 1' },
      'experiment:e1': { type: 'job', kind: 'experiment', id: 'e1', status: 'completed', done: 4, total: 4 },
      'train-loop:tl-1': { type: 'job', kind: 'train-loop', id: 'tl-1', status: 'running', done: 0, total: 2 },
      'evolve:evo-1': { type: 'job', kind: 'evolve', id: 'evo-1', status: 'running', summary: 'iteration 1: 0.5', done: 1, total: 5 },
      'study:s1': { type: 'job', kind: 'study', id: 's1', status: 'cancelled', message: 'budget reached' },
    });
  });

  it('keeps at most MAX_JOBS, dropping ended jobs oldest first (running ones stay)', () => {
    let jobs = foldJob({}, { type: 'job', kind: 'k', id: 'live', status: 'running' });
    for (let i = 0; i < MAX_JOBS + 5; i++) jobs = foldJob(jobs, { type: 'job', kind: 'k', id: `j${i}`, status: 'completed' });
    const keys = Object.keys(jobs);
    expect(keys).toHaveLength(MAX_JOBS);
    expect(keys[0]).toBe('k:live');
    // 1 running + MAX_JOBS + 5 ended = MAX_JOBS + 6: the 6 oldest ended (j0..j5) go.
    expect(keys[1]).toBe('k:j6');
  });
});
