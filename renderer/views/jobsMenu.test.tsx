/**
 * The Jobs menu lists every running job from the jobs slice alone — here a run, a download and a
 * train loop pushed as `job` events, and one the host lists on `loadJobs` — with its kind, id,
 * count and progress bar; ended jobs leave the list; Cancel calls `cancelJob` with the job's
 * kind and id; a refused cancel shows the host's message.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../core/api/index.ts';
import { jobCount, JobsList, JobsMenu } from './JobsMenu.tsx';
import { closeViewStores, renderView, scriptedLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

describe('the Jobs menu', () => {
  it('lists the running jobs of every family with kind, id, count and progress; Cancel calls cancelJob', async () => {
    const cancelled: unknown[] = [];
    const l = scriptedLab(() => ({
      listJobs: () => [{ kind: 'study', id: 'study-tiny-0', status: 'running', done: 0, total: 2, summary: 'cell single/id/m/0: run 1/2', startedAt: 1 }],
      cancelJob: (p) => (cancelled.push(p), { cancelled: true }),
    }));
    const s = () => l.getState();
    // The window opens on a study already running, then events arrive.
    await s().loadJobs();
    s().receiveJob({ type: 'job', kind: 'run', id: 'exp-1', status: 'running', done: 1, total: 3, summary: '1 correct of 1 runs' });
    s().receiveJob({ type: 'job', kind: 'download', id: 'dl-1', status: 'running', done: 1536, total: 4096, summary: 'a.gguf' });
    s().receiveJob({ type: 'job', kind: 'train-loop', id: 'tl-1', status: 'running', done: 0, total: 2 });
    s().receiveJob({ type: 'job', kind: 'train-loop', id: 'tl-1', status: 'completed', done: 2, total: 2 });
    // A family's own event is not a job record: it does not show.
    s().receiveJob({ type: 'experiment', experimentId: 'exp-2', status: 'running', done: 0, total: 5 });
    const html = renderView(l, <JobsList />);
    const rows = [...html.matchAll(/data-job="([^"]+)"/g)].map((m) => m[1]);
    expect(rows).toEqual(['study:study-tiny-0', 'run:exp-1', 'download:dl-1']);
    expect(html).toContain('<strong>run</strong> <code>exp-1</code>');
    expect(html).toContain('data-testid="job-count">1 / 3</span>');
    expect(html).toContain('<progress value="1" max="3"></progress>');
    expect(html).toContain('data-testid="job-count">1.5 KiB / 4.0 KiB</span>');
    expect(html).toContain('<p class="muted small">cell single/id/m/0: run 1/2</p>');
    expect(html).not.toContain('tl-1');
    expect(renderView(l, <JobsMenu />)).toContain('data-testid="jobs-count"> ● 3</span>');
    await s().cancelJob('download', 'dl-1');
    expect(cancelled).toEqual([{ kind: 'download', id: 'dl-1' }]);
    // Its closing event takes it off the list.
    s().receiveJob({ type: 'job', kind: 'download', id: 'dl-1', status: 'cancelled', message: 'Cancelled.' });
    expect([...renderView(l, <JobsList />).matchAll(/data-job="([^"]+)"/g)].map((m) => m[1])).toEqual(['study:study-tiny-0', 'run:exp-1']);
  });

  it('says when nothing runs, and shows a refused cancel in the user\'s words', async () => {
    const l = scriptedLab(() => ({
      listJobs: () => [],
      cancelJob: () => { throw new ApiError('BUSY', 'cancelJob: the lab is shutting down', 'cancelJob'); },
    }));
    expect(renderView(l, <JobsList />)).toContain('No job is running.');
    expect(renderView(l, <JobsMenu />)).not.toContain('jobs-count');
    l.getState().receiveJob({ type: 'job', kind: 'evolve', id: 'evo-1', status: 'running' });
    await l.getState().cancelJob('evolve', 'evo-1');
    const html = renderView(l, <JobsList />);
    expect(html).toContain('data-testid="jobs-error">The lab is shutting down</p>');
    // No count: an indeterminate bar.
    expect(html).toContain('<progress></progress>');
  });

  it('a reconnect asks the host for its running jobs again (events missed while down)', async () => {
    let listed = 0;
    const l = scriptedLab(() => ({
      listJobs: () => (listed++, [{ kind: 'rank', id: 'rank-1', status: 'running', done: 2, total: 8, startedAt: 1 }]),
    }));
    l.getState().receiveJob({ type: 'job', kind: 'run', id: 'exp-1', status: 'running', done: 1, total: 3 });
    l.getState().setConnection({ state: 'lost', attempt: 1, retryInMs: 1000, downSince: 5 });
    expect(listed).toBe(0);
    l.getState().setConnection({ state: 'open', attempt: 0, retryInMs: null, downSince: null });
    await expect.poll(() => listed).toBe(1);
    await expect.poll(() => Object.keys(l.getState().jobs)).toEqual(['rank:rank-1']);
  });

  it('jobCount shows bytes for a download and plain counts otherwise', () => {
    expect(jobCount({ kind: 'run', done: 2, total: 5 })).toBe('2 / 5');
    expect(jobCount({ kind: 'download', done: 3 * 1024 * 1024, total: 10 * 1024 * 1024 })).toBe('3.0 MiB / 10 MiB');
    expect(jobCount({ kind: 'evolve' })).toBe('');
    expect(jobCount({ kind: 'study', total: 4 })).toBe('? / 4');
  });
});
