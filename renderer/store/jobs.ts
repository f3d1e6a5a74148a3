/**
 * The jobs slice: every background job the lab runs, one record per job, in the shape of the one
 * `job` event (core/jobs `JobEvent`: kind, id, status, done of total, summary). The host sends
 * that event for every family — experiments (`run`, `blame-eval`, `rollouts`), train loops, MASS
 * jobs, studies, downloads and the `startJob` kinds (host/jobs.ts `RunningJobs`) — so this slice
 * reads only `job` events and `listJobs`, never a family's own events; views that need a family's
 * detail (a run's nodes, a loop's iterations) read that family's slice.
 */
import type { JobEvent, LabEvent } from '../../core/api/client.ts';
import { userMessage } from '../lib/messages.ts';
import type { SliceContext } from './types.ts';

/** Jobs kept, ended ones dropped oldest first past this. */
export const MAX_JOBS = 200;

declare module './types.ts' {
  interface LabState extends JobsSlice {}
}

export interface JobsSlice {
  /** Every job seen since the window opened, by `<kind>:<id>`, in the order first seen. */
  jobs: Record<string, JobEvent>;
  /** Why the last `listJobs` or `cancelJob` failed (in the user's words), or null. */
  jobsError: string | null;
  /** Folds a pushed `job` event into `jobs` (every other event is ignored). */
  receiveJob(event: LabEvent): void;
  /**
   * Asks the host which jobs run now (`listJobs`) and folds them in: a job opened before the
   * window, or whose events were missed, is listed; a job still `running` here that the host no
   * longer lists has ended unseen and is dropped. A host without jobs (UNAVAILABLE) leaves `jobs` as is.
   */
  loadJobs(): Promise<void>;
  /** Cancels a running job of any family (`cancelJob`); its closing `job` event updates the record. */
  cancelJob(kind: string, id: string): Promise<void>;
}

/** `jobs` with `e` folded in: a progress event keeps what it does not say (summary, counts); ended jobs past MAX_JOBS are dropped, oldest first. */
export function foldJob(jobs: Record<string, JobEvent>, e: JobEvent): Record<string, JobEvent> {
  const key = `${e.kind}:${e.id}`;
  const next = { ...jobs, [key]: { ...jobs[key], ...e } };
  const keys = Object.keys(next);
  for (const k of keys) {
    if (Object.keys(next).length <= MAX_JOBS) break;
    if (next[k]!.status !== 'running') delete next[k];
  }
  return next;
}

/** The running jobs of `jobs`, in the order first seen (oldest first). */
export function runningJobs(jobs: Record<string, JobEvent>): JobEvent[] {
  return Object.values(jobs).filter((j) => j.status === 'running');
}

export function createJobsSlice({ api, set, get }: SliceContext): JobsSlice {
  const failed = (err: unknown) => userMessage(err instanceof Error ? err : { message: String(err) });
  return {
    jobs: {},
    jobsError: null,
    receiveJob(event) {
      if (event.type === 'job') set({ jobs: foldJob(get().jobs, event) });
    },
    async loadJobs() {
      let listed;
      try {
        listed = await api.listJobs();
      } catch (err) {
        if ((err as { code?: string }).code !== 'UNAVAILABLE') set({ jobsError: failed(err) });
        return;
      }
      const live = new Set(listed.map((j) => `${j.kind}:${j.id}`));
      let jobs = Object.fromEntries(Object.entries(get().jobs).filter(([k, j]) => j.status !== 'running' || live.has(k)));
      for (const { startedAt: _t, ...j } of listed) jobs = foldJob(jobs, { ...j, type: 'job' });
      set({ jobs, jobsError: null });
    },
    async cancelJob(kind, id) {
      try {
        await api.cancelJob({ kind, id });
        set({ jobsError: null });
      } catch (err) {
        set({ jobsError: failed(err) });
      }
    },
  };
}
