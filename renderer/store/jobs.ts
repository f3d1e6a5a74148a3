/**
 * The jobs slice: every background job the lab runs, one record per job, in the shape of the one
 * `job` event (core/jobs `JobEvent`: kind, id, status, done of total). Jobs run through
 * `startJob` push `job` events themselves; the families with events of their own (experiments,
 * train loops, MASS jobs, studies, downloads) are read into the same shape by {@link jobEventOf},
 * so a view lists what runs without knowing each family's events.
 */
import type { JobEvent, LabEvent } from '../../core/api/client.ts';
import type { SliceContext } from './types.ts';

/** Jobs kept, ended ones dropped oldest first past this. */
export const MAX_JOBS = 200;

declare module './types.ts' {
  interface LabState extends JobsSlice {}
}

export interface JobsSlice {
  /** Every job seen since the window opened, by `<kind>:<id>`, in the order first seen. */
  jobs: Record<string, JobEvent>;
  /** Folds a pushed event into `jobs` (events of no job are ignored). */
  receiveJob(event: LabEvent): void;
}

/**
 * A pushed event as the one job event, or null when it tells no job's status or progress:
 * `job` as it is; `experiment` (kind `experiment`), `trainLoop` (`train-loop`, iterations),
 * `massJob` / `massProgress` (the MASS job's kind), `studyJob` / `studyProgress` (`study`;
 * `stopped` reads as `cancelled`), `download` / `downloadProgress` (`download`, bytes).
 * Progress events carry no status: they read as `running`.
 */
export function jobEventOf(e: LabEvent): JobEvent | null {
  switch (e.type) {
    case 'job':
      return e;
    case 'experiment':
      return { type: 'job', kind: 'experiment', id: e.experimentId, status: e.status, done: e.done, total: e.total, ...(e.message !== undefined && { message: e.message }) };
    case 'trainLoop':
      return { type: 'job', kind: 'train-loop', id: e.loopId, status: e.status, done: e.done, total: e.iterations, ...(e.message !== undefined && { message: e.message }) };
    case 'massJob':
      return { type: 'job', kind: e.job, id: e.jobId, status: e.status, ...(e.message !== undefined && { message: e.message }) };
    case 'massProgress':
      return { type: 'job', kind: e.job, id: e.jobId, status: 'running', summary: e.line.slice(0, 400), ...(e.done !== undefined && { done: e.done }), ...(e.total !== undefined && { total: e.total }) };
    case 'studyJob':
      return { type: 'job', kind: 'study', id: e.studyId, status: e.status === 'stopped' ? 'cancelled' : e.status, ...(e.message !== undefined && { message: e.message }) };
    case 'studyProgress':
      return { type: 'job', kind: 'study', id: e.studyId, status: 'running', summary: e.line.slice(0, 400), ...(e.done !== undefined && { done: e.done }), ...(e.total !== undefined && { total: e.total }) };
    case 'download':
      return { type: 'job', kind: 'download', id: e.downloadId, status: e.status, done: e.bytes, ...(e.total !== undefined && { total: e.total }), ...(e.message !== undefined && { message: e.message }) };
    case 'downloadProgress':
      return { type: 'job', kind: 'download', id: e.downloadId, status: 'running', done: e.bytes, ...(e.total !== undefined && { total: e.total }) };
    default:
      return null;
  }
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

export function createJobsSlice({ set, get }: SliceContext): JobsSlice {
  return {
    jobs: {},
    receiveJob(event) {
      const e = jobEventOf(event);
      if (e) set({ jobs: foldJob(get().jobs, e) });
    },
  };
}
