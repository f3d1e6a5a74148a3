/**
 * Jobs of any registered kind (core/jobs) through one contract, self-contained: the payload
 * schemas, the methods' types, what a host provides, the handlers and the one `job` event's
 * guard. `listJobKinds` and `listJobs` read; `startJob` (a kind and its spec, validated by the
 * kind's strict schema in the host), `cancelJob` and `resumeJob` act. Kinds with a lab method
 * of their own (`startRun`, `startTrainLoop`, `startEvolve`...) are listed with it (`startVia`).
 */
import { z } from 'zod';
import type { JobEvent, JobKindInfo } from '../jobs/index.ts';
import type { ApiMethod } from './channels.ts';
import { ApiError } from './errors.ts';

export type { JobEvent, JobKindInfo } from '../jobs/index.ts';

const Name = z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters');
const Id = z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const NoPayload = z.strictObject({}).optional();

/** The payload schemas of the job methods (spread into contract.ts `payloadSchemas`). */
export const jobPayloadSchemas = {
  listJobKinds: NoPayload,
  listJobs: NoPayload,
  /** `spec` is the kind's: checked by its own strict schema in the host (BAD_REQUEST naming `spec.<field>`). */
  startJob: z.strictObject({ kind: Name, spec: z.unknown() }),
  cancelJob: z.strictObject({ kind: Name, id: Id }),
  resumeJob: z.strictObject({ kind: Name, id: Id }),
} as const;

/** The job methods, in the order of `LAB_METHODS`. */
export const JOB_METHODS = ['listJobKinds', 'listJobs', 'startJob', 'cancelJob', 'resumeJob'] as const;

/** A job running in the lab. */
export interface RunningJobView {
  kind: string;
  id: string;
  status: 'running';
  done?: number;
  total?: number;
  summary?: string;
  /** Epoch ms. */
  startedAt: number;
}

export interface StartJobRequest {
  kind: string;
  spec: unknown;
}

export interface JobRef {
  kind: string;
  id: string;
}

export interface JobApiAdditions {
  /** The registered job kinds: name, family, whether `startJob` / `resumeJob` serve them, their own method otherwise. */
  listJobKinds(): Promise<JobKindInfo[]>;
  /** The jobs running through `startJob` / `resumeJob`, oldest first, with their folded progress. */
  listJobs(): Promise<RunningJobView[]>;
  /**
   * Starts a job; resolves with its id once it runs (its `job` `running` event sent). Errors:
   * `BAD_REQUEST` naming `kind` (unknown, or started by its own method: the message names it)
   * or `spec.<field>` (the kind's schema refused it: wrong form, or a field the kind does not use).
   */
  startJob(payload: StartJobRequest): Promise<JobRef>;
  /** Cancels a running job; resolves once its closing `job` event was sent. `cancelled: false` when it does not run here. */
  cancelJob(payload: JobRef): Promise<{ cancelled: boolean }>;
  /** Resumes a stored job. Errors: `BAD_REQUEST` naming `kind` (unknown, not resumable), `BUSY` naming `id` (it runs here). */
  resumeJob(payload: JobRef): Promise<JobRef & { pending?: number }>;
}

type Awaitable<T> = T | Promise<T>;

/** What a host provides for the job methods (optional: hosts without them answer UNAVAILABLE). */
export interface JobHost {
  listJobKinds?(): Awaitable<JobKindInfo[]>;
  listJobs?(): Awaitable<RunningJobView[]>;
  startJob?(payload: StartJobRequest): Awaitable<JobRef>;
  cancelJob?(payload: JobRef): Awaitable<{ cancelled: boolean }>;
  resumeJob?(payload: JobRef): Awaitable<JobRef & { pending?: number }>;
}

type JobMethod = (typeof JOB_METHODS)[number];

/** The job methods of `createHandlers`, over `lab(method)` (the handlers' host lookup). */
export function jobHandlers(lab: (method: ApiMethod) => JobHost) {
  const host = <M extends JobMethod>(m: M): NonNullable<JobHost[M]> => {
    const h = lab(m);
    const f = h[m];
    if (!f) throw new ApiError('UNAVAILABLE', `${m}: this host does not run jobs`, m);
    return f.bind(h) as NonNullable<JobHost[M]>;
  };
  return {
    listJobKinds: async () => host('listJobKinds')(),
    listJobs: async () => host('listJobs')(),
    startJob: async (payload: StartJobRequest) => host('startJob')(payload),
    cancelJob: async (payload: JobRef) => host('cancelJob')(payload),
    resumeJob: async (payload: JobRef) => host('resumeJob')(payload),
  };
}

export { isJobEvent } from './jobEvents.ts';
