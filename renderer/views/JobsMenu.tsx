/**
 * The Jobs menu of the window's header: a button counting the running jobs and, when open, the
 * list of every running job of every family (an experiment, a train loop, a MASS job, a study, a
 * download, a `startJob` kind) with its kind, id, progress bar and a Cancel button that calls
 * `cancelJob` — read from the jobs slice alone (renderer/store/jobs.ts), so a new kind of work
 * appears here with nothing added.
 */
import { useState } from 'react';
import type { JobEvent } from '../../core/api/client.ts';
import { runningJobs } from '../store/jobs.ts';
import { useLabPick } from '../useLab.ts';
import { bytes } from './format.ts';
import { kindLabel } from '../lib/vocabulary.ts';

/** `done / total` of a job in its unit (bytes for a download), or '' when it counts nothing. */
export function jobCount(job: Pick<JobEvent, 'kind' | 'done' | 'total'>): string {
  if (job.done === undefined && job.total === undefined) return '';
  const show = (n: number | undefined) => (n === undefined ? '?' : job.kind === 'download' ? bytes(n) : String(n));
  return `${show(job.done)} / ${show(job.total)}`;
}

/** The running jobs, oldest first, each with its progress and a Cancel button; a note when none runs. */
export function JobsList() {
  const { jobs, jobsError, cancelJob } = useLabPick('jobs', 'jobsError', 'cancelJob');
  const running = runningJobs(jobs);
  return (
    <div className="jobs-list" data-testid="jobs-list">
      {running.length === 0 && <p className="note">No job is running.</p>}
      {running.length > 0 && (
        <ul>
          {running.map((j) => (
            <li key={`${j.kind}:${j.id}`} data-testid="job-row" data-job={`${j.kind}:${j.id}`}>
              <div className="row">
                <strong>{kindLabel(j.kind)}</strong> <code>{j.id}</code>
                <span className="muted small" data-testid="job-count">{jobCount(j)}</span>
                <button type="button" data-testid="job-cancel" onClick={() => void cancelJob(j.kind, j.id)} aria-label={`Cancel ${j.kind} ${j.id}`}>
                  Cancel
                </button>
              </div>
              {j.total !== undefined && j.total > 0 ? <progress value={Math.min(j.done ?? 0, j.total)} max={j.total} /> : <progress />}
              {j.summary && <p className="muted small">{j.summary}</p>}
            </li>
          ))}
        </ul>
      )}
      {jobsError && <p className="note error" role="alert" data-testid="jobs-error">{jobsError}</p>}
    </div>
  );
}

/** The header's Jobs button (the running count) and its popover; opening it asks the host for the running jobs. */
export function JobsMenu() {
  const { jobs, loadJobs } = useLabPick('jobs', 'loadJobs');
  const [open, setOpen] = useState(false);
  const count = runningJobs(jobs).length;
  return (
    <div className="jobs-menu">
      <button
        type="button" data-testid="jobs-toggle" aria-expanded={open} title="Running jobs"
        onClick={() => {
          if (!open) void loadJobs();
          setOpen(!open);
        }}
      >
        Jobs{count > 0 && <span className="live-dot" data-testid="jobs-count"> ● {count}</span>}
      </button>
      {open && (
        <div className="jobs-popover" role="dialog" aria-label="Running jobs">
          <JobsList />
        </div>
      )}
    </div>
  );
}
