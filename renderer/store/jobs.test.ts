/**
 * The jobs slice keeps one record per job from the one `job` event the host sends for every
 * family (host/jobs.ts RunningJobs): a toy job, an experiment run, a train loop, a MASS job's
 * progress and a study stopped early; the families' own events are not read twice. `loadJobs`
 * folds in what `listJobs` answers and drops what ended unseen; `cancelJob` calls the host.
 */
import { describe, expect, it } from 'vitest';
import type { JobEvent, LabEvent } from '../../core/api/client.ts';
import type { LabClient } from '../client.ts';
import { createJobsSlice, foldJob, MAX_JOBS, runningJobs, type JobsSlice } from './jobs.ts';
import { NODE_DEPS } from './types.ts';

/** The slice alone over a scripted client (only the job methods answer). */
function slice(api: Partial<LabClient>): JobsSlice {
  let state = {} as JobsSlice;
  const set = (p: Partial<JobsSlice>) => void (state = { ...state, ...p });
  state = createJobsSlice({ api: api as LabClient, deps: NODE_DEPS, set: set as never, get: () => state as never });
  return new Proxy({} as JobsSlice, { get: (_t, k) => state[k as keyof JobsSlice] });
}

describe('the jobs slice', () => {
  it('folds the job events of every family into one record per job, progress keeping what it does not say; family events are not read', () => {
    const events: LabEvent[] = [
      { type: 'job', kind: 'count', id: 'c1', status: 'running', done: 1, total: 3, summary: 'counted to 1' },
      { type: 'experiment', experimentId: 'e1', status: 'running', done: 0, total: 4 },
      { type: 'job', kind: 'run', id: 'e1', status: 'running', done: 0, total: 4 },
      { type: 'trainLoop', loopId: 'tl-1', status: 'running', roles: ['writer'], done: 0, iterations: 2 },
      { type: 'job', kind: 'train-loop', id: 'tl-1', status: 'running', done: 0, total: 2 },
      { type: 'massJob', jobId: 'evo-1', job: 'evolve', status: 'running' },
      { type: 'job', kind: 'evolve', id: 'evo-1', status: 'running' },
      { type: 'massProgress', jobId: 'evo-1', job: 'evolve', line: 'iteration 1: 0.5', done: 1, total: 5 },
      { type: 'job', kind: 'evolve', id: 'evo-1', status: 'running', summary: 'iteration 1: 0.5', done: 1, total: 5 },
      { type: 'run', experimentId: 'e1', runId: 'e1/0', taskIndex: 0, done: 1, total: 4, status: 'completed', correct: true },
      { type: 'job', kind: 'run', id: 'e1', status: 'completed', done: 4, total: 4 },
      { type: 'experiment', experimentId: 'e1', status: 'completed', done: 4, total: 4 },
      { type: 'job', kind: 'study', id: 's1', status: 'cancelled', message: 'budget reached' },
      { type: 'studyJob', studyId: 's1', dryRun: false, status: 'stopped', message: 'budget reached' },
      { type: 'job', kind: 'count', id: 'c1', status: 'cancelled', done: 1, total: 3 },
    ];
    const s = slice({});
    for (const e of events) s.receiveJob(e);
    expect(s.jobs).toEqual({
      'count:c1': { type: 'job', kind: 'count', id: 'c1', status: 'cancelled', done: 1, total: 3, summary: 'counted to 1' },
      'run:e1': { type: 'job', kind: 'run', id: 'e1', status: 'completed', done: 4, total: 4 },
      'train-loop:tl-1': { type: 'job', kind: 'train-loop', id: 'tl-1', status: 'running', done: 0, total: 2 },
      'evolve:evo-1': { type: 'job', kind: 'evolve', id: 'evo-1', status: 'running', summary: 'iteration 1: 0.5', done: 1, total: 5 },
      'study:s1': { type: 'job', kind: 'study', id: 's1', status: 'cancelled', message: 'budget reached' },
    });
    expect(runningJobs(s.jobs).map((j) => `${j.kind}:${j.id}`)).toEqual(['train-loop:tl-1', 'evolve:evo-1']);
  });

  it('loadJobs lists what runs on the host and drops a running record the host no longer lists; cancelJob calls the host', async () => {
    const cancelled: unknown[] = [];
    const s = slice({
      listJobs: async () => [{ kind: 'download', id: 'dl-1', status: 'running', done: 10, total: 40, summary: 'a.gguf', startedAt: 5 }],
      cancelJob: async (p) => (cancelled.push(p), { cancelled: true }),
    });
    s.receiveJob({ type: 'job', kind: 'run', id: 'gone', status: 'running', done: 1, total: 2 });
    s.receiveJob({ type: 'job', kind: 'run', id: 'old', status: 'completed', done: 2, total: 2 });
    await s.loadJobs();
    expect(s.jobs).toEqual({
      'run:old': { type: 'job', kind: 'run', id: 'old', status: 'completed', done: 2, total: 2 },
      'download:dl-1': { type: 'job', kind: 'download', id: 'dl-1', status: 'running', done: 10, total: 40, summary: 'a.gguf' } satisfies JobEvent,
    });
    await s.cancelJob('download', 'dl-1');
    expect(cancelled).toEqual([{ kind: 'download', id: 'dl-1' }]);
    expect(s.jobsError).toBeNull();
  });

  it('a refused cancel is shown in the user\'s words; a host without jobs leaves the list as is', async () => {
    const err = Object.assign(new Error('cancelJob: payload field "id": must not be empty [BAD_REQUEST]'), { code: 'BAD_REQUEST' });
    const s = slice({ listJobs: async () => Promise.reject(Object.assign(new Error('listJobs: this host does not run jobs'), { code: 'UNAVAILABLE' })), cancelJob: async () => Promise.reject(err) });
    s.receiveJob({ type: 'job', kind: 'run', id: 'e1', status: 'running' });
    await s.loadJobs();
    expect(Object.keys(s.jobs)).toEqual(['run:e1']);
    expect(s.jobsError).toBeNull();
    await s.cancelJob('run', 'e1');
    expect(s.jobsError).toBe('The id must not be empty');
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
