/**
 * The jobs feature: jobs of any registered kind (core/jobs) through one contract. `listJobKinds`
 * and `listJobs` read; `startJob` (a kind and its spec, validated by the kind's strict schema in
 * the host), `cancelJob` and `resumeJob` act. Kinds with a lab method of their own (`startRun`,
 * `startTrainLoop`, `startEvolve`...) are listed with it (`startVia`). `listJobs` and
 * `cancelJob` serve every family: experiments (`run`, `blame-eval`, `rollouts`), train loops,
 * MASS jobs, studies, downloads and the `startJob` kinds, each of which announces its jobs with
 * the one `job` event (host/jobs.ts `RunningJobs`). Every method is a lab method; hosts without
 * a job table answer UNAVAILABLE. The one `job` event's guard is ../jobEvents.ts (zod-free, for
 * the preload and the renderer).
 */
import * as z from 'zod';
import type { JobKindInfo } from '../../jobs/index.ts';
import { defineFeature, labMethod, type Awaitable } from '../feature.ts';
import { Id, Name, NoPayload } from '../fields.ts';

export type { JobEvent, JobKindInfo } from '../../jobs/index.ts';

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

/** `startJob`'s payload: a registered kind and its spec (checked by the kind's own schema). */
export interface StartJobRequest {
  kind: string;
  spec: unknown;
}

/** A job: its kind and id. */
export interface JobRef {
  kind: string;
  id: string;
}

/** The job methods (all lab methods). */
export interface JobsApi {
  /** The registered job kinds: name, family, whether `startJob` / `resumeJob` serve them, their own method otherwise. */
  listJobKinds(payload?: Record<string, never>): Promise<JobKindInfo[]>;
  /** Every running job of every family (an experiment, a train loop, a MASS job, a study, a download, a `startJob` kind), oldest first, with its progress. */
  listJobs(payload?: Record<string, never>): Promise<RunningJobView[]>;
  /**
   * Starts a job; resolves with its id once it runs (its `job` `running` event sent). Errors:
   * `BAD_REQUEST` naming `kind` (unknown, or started by its own method: the message names it)
   * or `spec.<field>` (the kind's schema refused it: wrong form, or a field the kind does not use).
   */
  startJob(payload: StartJobRequest): Promise<JobRef>;
  /** Cancels a running job of any family (through the family's own cancel); resolves once its closing events were sent. `cancelled: false` when it does not run here. */
  cancelJob(payload: JobRef): Promise<{ cancelled: boolean }>;
  /** Resumes a stored job. Errors: `BAD_REQUEST` naming `kind` (unknown, not resumable), `BUSY` naming `id` (it runs here). */
  resumeJob(payload: JobRef): Promise<JobRef & { pending?: number }>;
}

/** What a host provides for the job methods (optional: hosts without them answer UNAVAILABLE). */
export interface JobHost {
  listJobKinds?(): Awaitable<JobKindInfo[]>;
  listJobs?(): Awaitable<RunningJobView[]>;
  startJob?(payload: StartJobRequest): Awaitable<JobRef>;
  cancelJob?(payload: JobRef): Awaitable<{ cancelled: boolean }>;
  resumeJob?(payload: JobRef): Awaitable<JobRef & { pending?: number }>;
}

const NO_JOBS = 'this host does not run jobs';

export const jobsFeature = defineFeature<JobsApi>()({
  name: 'jobs',
  payloads: {
    listJobKinds: NoPayload,
    listJobs: NoPayload,
    /** `spec` is the kind's: checked by its own strict schema in the host (BAD_REQUEST naming `spec.<field>`). */
    startJob: z.strictObject({ kind: Name, spec: z.unknown() }),
    cancelJob: z.strictObject({ kind: Name, id: Id }),
    resumeJob: z.strictObject({ kind: Name, id: Id }),
  },
  lab: ['listJobKinds', 'listJobs', 'startJob', 'cancelJob', 'resumeJob'],
  handlers: (deps: { lab?: JobHost | undefined }) => ({
    listJobKinds: async () => labMethod(deps, 'listJobKinds', NO_JOBS)(),
    listJobs: async () => labMethod(deps, 'listJobs', NO_JOBS)(),
    startJob: async (payload) => labMethod(deps, 'startJob', NO_JOBS)(payload),
    cancelJob: async (payload) => labMethod(deps, 'cancelJob', NO_JOBS)(payload),
    resumeJob: async (payload) => labMethod(deps, 'resumeJob', NO_JOBS)(payload),
  }),
});
