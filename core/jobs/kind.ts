/**
 * A kind of long-running work (a job kind): what it takes (its zod spec, strict), how its stored
 * config decodes (a versioned codec), how it starts, resumes and is cancelled, how its progress
 * folds into the one `job` event, and its one-line summary. Every long-running kind registers
 * one of these in a {@link JobRegistry} (registry.ts); the host's job table (host/jobs.ts) runs
 * any registered kind, the lab API (core/api/jobs.ts) and the CLI (`flowlab job`) list, start,
 * cancel and resume them by name — so a new kind is one core file plus its registration.
 *
 * Cancel is uniform: the table aborts the job's `signal`; a kind stops at its next step and
 * resolves its `done` with `cancelled`.
 */
import type { z } from 'zod';
import { FlowlabError } from '../errors.ts';

/** A job's lifecycle, as the one `job` event carries it. */
export type JobStatus = 'running' | 'completed' | 'cancelled' | 'failed';

/** How far a job got: units done of total (when counted) and a one-line summary. */
export interface JobProgress {
  done?: number;
  total?: number;
  /** One line, at most 400 characters (the kind's `summary`). */
  summary?: string;
}

/** The one job event of the lab API: a job of `kind` named `id` changed status or progress. */
export interface JobEvent extends JobProgress {
  type: 'job';
  kind: string;
  id: string;
  status: JobStatus;
  /** Why it failed (failed), or a note. */
  message?: string;
}

/** What a kind's start and resume get from the table that runs them. */
export interface JobContext<Update> {
  /** The job's id (a fresh `<kind>-<time>-<random>` for a start, the stored id for a resume). */
  id: string;
  /** Aborted on cancel (and on the host's dispose): stop at the next step, resolve `cancelled`. */
  signal: AbortSignal;
  /** Reports progress: folded by the kind's `fold` into the job's progress and announced as a `job` event. */
  update(update: Update): void;
  /** What the host hands every job (its store, model port, tools...): kinds read what they need. */
  deps: Readonly<Record<string, unknown>>;
}

/** How a job ended. */
export interface JobEnd {
  status: Exclude<JobStatus, 'running'>;
  message?: string;
}

/** A started (or resumed) job: settles with how it ended; never rejects (a failure is `failed`). */
export interface JobRun {
  done: Promise<JobEnd>;
  /** Units left when it was resumed (0: nothing to do). */
  pending?: number;
}

/** A stored config's codec: the shape version it reads, and its decoder (a located error when a row does not decode). */
export interface StoredCodec<Config> {
  version: number;
  /** @throws a located error naming the row (`id`) and the field. */
  decode(value: unknown, id: string): Config;
}

/** A kind of long-running work (see the module comment). */
export interface JobKind<Spec = unknown, Update = unknown, Config = unknown> {
  /** Its name in the lab API, the CLI and the `job` event (`run`, `train-loop`, `evolve`...). */
  name: string;
  /** The family it belongs to (`experiment`, `train-loop`, `mass`, `study`, `download`, `fork`). */
  family: string;
  /** One line for `flowlab job kinds` and the lab. */
  describe: string;
  /** Its spec, strict: a field the kind does not use is refused, named. */
  spec: z.ZodType<Spec>;
  /** Its stored config's codec, when it stores one. */
  codec?: StoredCodec<Config>;
  /** Starts it. Absent: the kind is started by its own lab method (`startVia`). */
  start?(spec: Spec, ctx: JobContext<Update>): JobRun | Promise<JobRun>;
  /** Resumes the stored job `ctx.id`. Absent: not resumable. */
  resume?(ctx: JobContext<Update>): JobRun | Promise<JobRun>;
  /** The lab method and CLI command that start a kind without a generic `start` (e.g. `startTrainLoop` / `flowlab train-loop`). */
  startVia?: { method: string; command: string };
  /**
   * The lab method and CLI command that resume a kind without a generic `resume` (experiments and
   * train loops: `resumeRun` / `flowlab resume`); `resumeJob` routes such a kind there.
   */
  resumeVia?: { method: string; command: string };
  /** Folds one update into the job's progress (pure). */
  fold(progress: JobProgress, update: Update): JobProgress;
}

/** Codes of {@link JobError}. */
export type JobErrorCode = 'UNKNOWN_KIND' | 'BAD_SPEC' | 'NOT_STARTABLE' | 'NOT_RESUMABLE' | 'DUPLICATE_KIND' | 'BUSY';

/** A job request that cannot be served: `field` names what is at fault (`kind`, `spec.<path>`). */
export class JobError extends FlowlabError<JobErrorCode> {
  override readonly name = 'JobError';
  constructor(code: JobErrorCode, readonly field: string, message: string, options?: { cause?: unknown }) {
    super(code, message, { field }, options);
  }
}
