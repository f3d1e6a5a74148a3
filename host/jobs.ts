/**
 * The lab's background jobs by id, the shape MASS jobs (host/massJobs.ts), study jobs
 * (host/studyJobs.ts) and model downloads (host/downloads.ts) share: at most one job per id, each
 * with its own `AbortController`; a cancel aborts the job's signal and waits until it has
 * settled (its closing event sent, its cleanup run); dispose cancels them all. What a job does,
 * which events it sends and how it reads its own end stay with its owner: `start` takes the
 * whole body, closing events included, and the table only keeps it until it settles. The
 * owners extend {@link JobOwner} for their public `cancel`, `settled` and `dispose`.
 *
 * {@link LabJobs} runs any kind registered in core/jobs through one such table, with the one
 * `job` event.
 */
import { ApiError } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import { JobError, type JobContext, type JobEnd, type JobEvent, type JobKind, type JobKindInfo, type JobProgress, type JobRegistry, type JobRun, type JobStatus } from '../core/jobs/index.ts';

/** Longest line or message of a pushed job event, characters (longer ones are cut). */
export const MAX_EVENT_TEXT = 2000;

/** A thrown value's message for a job's closing event, cut at MAX_EVENT_TEXT. */
export function errorText(err: unknown): string {
  return errorMessage(err).slice(0, MAX_EVENT_TEXT);
}

/** `emit` made safe for a job: a listener that throws must not break the job, so its throw is dropped. */
export function jobEmitter<E>(emit: (event: E) => void): (event: E) => void {
  return (event) => {
    try {
      emit(event);
    } catch {
      // a broken listener must not break the job
    }
  };
}

interface Entry<Meta> {
  meta: Meta;
  controller: AbortController;
  finished: Promise<void>;
}

/** The running jobs of one kind in one lab, by id (see the module comment). `Meta`: what the owner keeps beside each job. */
export class JobTable<Meta = undefined> {
  private readonly jobs = new Map<string, Entry<Meta>>();

  /** Whether a job with this id runs here now. */
  has(id: string): boolean {
    return this.jobs.has(id);
  }

  /** What the owner keeps beside each running job. */
  metas(): Meta[] {
    return [...this.jobs.values()].map((j) => j.meta);
  }

  /**
   * Runs `body(signal)` as the job `id` (called at once). `body` must not reject: it sends the
   * job's closing event itself (use `signal.aborted` to tell a cancel from a failure). Once it
   * has settled, `cleanup` runs (releasing what the job held) and the id is free again. The
   * caller checks `has(id)` first (its own BUSY error); a second start under a running id is a
   * programming error (throws).
   */
  start(id: string, meta: Meta, body: (signal: AbortSignal) => Promise<void>, cleanup?: () => void): void {
    if (this.jobs.has(id)) throw new Error(`JobTable.start: ${id} is running already`);
    const controller = new AbortController();
    const finished = body(controller.signal).finally(() => {
      cleanup?.();
      this.jobs.delete(id);
    });
    this.jobs.set(id, { meta, controller, finished });
  }

  /** Aborts the job's signal; resolves once it has settled. `{cancelled: false}` when it does not run here. */
  async cancel(id: string): Promise<{ cancelled: boolean }> {
    const job = this.jobs.get(id);
    if (!job) return { cancelled: false };
    job.controller.abort();
    await job.finished;
    return { cancelled: true };
  }

  /** Resolves when the job has settled (at once when it does not run here). */
  async settled(id: string): Promise<void> {
    await this.jobs.get(id)?.finished;
  }

  /** Cancels every job and waits for them all to settle. */
  async dispose(): Promise<void> {
    const all = [...this.jobs.values()];
    for (const j of all) j.controller.abort();
    await Promise.all(all.map((j) => j.finished));
  }
}

/** What a job owner (MassJobs, StudyJobs, ModelDownloads) offers over its table: cancel one job, wait for one, stop them all. */
export abstract class JobOwner<Meta = undefined> {
  protected readonly jobs = new JobTable<Meta>();

  /** Stops the job at its next step (aborts its signal); resolves once it has settled and its closing event was sent. `{cancelled: false}` when it does not run here. */
  cancel(id: string): Promise<{ cancelled: boolean }> {
    return this.jobs.cancel(id);
  }

  /** Resolves when the job has settled and its closing event was sent (at once when it does not run here). */
  settled(id: string): Promise<void> {
    return this.jobs.settled(id);
  }

  /** Cancels every job and waits for them all. */
  dispose(): Promise<void> {
    return this.jobs.dispose();
  }
}

/** A job running in a {@link LabJobs} table, as `listJobs` shows it. */
export interface RunningJob extends JobProgress {
  kind: string;
  id: string;
  status: 'running';
  /** Epoch ms. */
  startedAt: number;
}

/** Options of {@link LabJobs}. */
export interface LabJobsOptions {
  /** The kinds it runs (default: core/jobs `builtinJobKinds()`). */
  registry: JobRegistry;
  /** Receives every `job` event (must not throw; a throw is dropped). */
  emit: (event: JobEvent) => void;
  /** What every job's context carries (`JobContext.deps`): the lab's store, tools, model port... */
  deps: Readonly<Record<string, unknown>>;
  /** A fresh job id for a start of `kind` (default `<kind>-<yyyymmdd>-<hhmmss>-<4 base36>`). */
  newId?: (kind: string) => string;
}

/** `<kind>-<yyyymmdd>-<hhmmss>-<4 base36>`, in UTC. */
function newJobId(kind: string): string {
  const t = new Date().toISOString().replace(/[-:]/g, '');
  return `${kind}-${t.slice(0, 8)}-${t.slice(9, 15)}-${Math.floor(Math.random() * 36 ** 4).toString(36).padStart(4, '0')}`;
}

/**
 * Any registered job kind (core/jobs), run in one {@link JobTable}: started by name with its spec
 * (validated by the kind's strict schema), resumed by id, cancelled through the job's signal,
 * listed with its folded progress, and announced with the one `job` event (`running` once it
 * runs, `running` again on each progress update, then `completed` / `cancelled` / `failed`).
 * The CLI (`flowlab job`) and the lab host (`startJob` and friends) both run kinds through it.
 */
export class LabJobs {
  private readonly table = new JobTable<RunningJob>();
  private readonly emit: (event: JobEvent) => void;

  constructor(private readonly o: LabJobsOptions) {
    this.emit = jobEmitter(o.emit);
  }

  /** The registered kinds. */
  kinds(): JobKindInfo[] {
    return this.o.registry.list();
  }

  /** The jobs running here, oldest first. */
  list(): RunningJob[] {
    return this.table.metas().map((m) => ({ ...m }));
  }

  /**
   * Starts a job of `kind` with `spec`; resolves with its id once it runs (its `job` `running`
   * event sent).
   * @throws JobError `UNKNOWN_KIND` (field `kind`), `NOT_STARTABLE` (a kind started by its own
   *   method: the message names it), `BAD_SPEC` naming `spec.<field>` (a field of the wrong form,
   *   or one the kind does not use); whatever the kind's start throws (nothing runs then).
   */
  async start(kind: string, spec: unknown): Promise<{ kind: string; id: string }> {
    const k = this.o.registry.get(kind);
    const start = k.start?.bind(k);
    if (!start) {
      const via = k.startVia ? `: start it with ${k.startVia.method} (${k.startVia.command})` : '';
      throw new JobError('NOT_STARTABLE', 'kind', `job kind "${kind}" is not started through startJob${via}`);
    }
    const parsed = k.spec.safeParse(spec);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const field = ['spec', ...(issue.code === 'unrecognized_keys' ? [issue.keys[0]!] : issue.path.map(String))].join('.');
      const message = issue.code === 'unrecognized_keys' ? `${field}: not used by job kind "${kind}"` : `${field}: ${issue.message}`;
      throw new JobError('BAD_SPEC', field, message, { cause: parsed.error });
    }
    const id = (this.o.newId ?? newJobId)(kind);
    await this.launch(k, id, (ctx) => start(parsed.data, ctx));
    return { kind, id };
  }

  /**
   * Resumes the stored job `id` of `kind`; resolves with what was left (`pending`, when the kind
   * counts it) once it runs.
   * @throws JobError `UNKNOWN_KIND`, `NOT_RESUMABLE` (field `kind`), `BUSY` (field `id`: it runs
   *   here); whatever the kind's resume throws.
   */
  async resume(kind: string, id: string): Promise<{ kind: string; id: string; pending?: number }> {
    const k = this.o.registry.get(kind);
    const resume = k.resume?.bind(k);
    if (!resume) throw new JobError('NOT_RESUMABLE', 'kind', `job kind "${kind}" cannot be resumed`);
    if (this.table.has(id)) throw new JobError('BUSY', 'id', `job ${id} is running here`);
    const run = await this.launch(k, id, (ctx) => resume(ctx));
    return { kind, id, ...(run.pending !== undefined && { pending: run.pending }) };
  }

  /** Cancels a running job (its signal aborted); resolves once it has settled and its closing `job` event was sent. `{cancelled: false}` when it does not run here (or is of another kind). */
  async cancel(kind: string, id: string): Promise<{ cancelled: boolean }> {
    if (!this.table.metas().some((m) => m.id === id && m.kind === kind)) return { cancelled: false };
    return this.table.cancel(id);
  }

  /** Resolves when the job has settled (at once when it does not run here). */
  settled(id: string): Promise<void> {
    return this.table.settled(id);
  }

  /** Cancels every job and waits for them all. */
  dispose(): Promise<void> {
    return this.table.dispose();
  }

  /** Runs `begin` as job `id` in the table; resolves with its run once it runs, rejects (nothing left running) when `begin` throws. */
  private launch(kind: JobKind<unknown, unknown>, id: string, begin: (ctx: JobContext<unknown>) => JobRun | Promise<JobRun>): Promise<JobRun> {
    const info: RunningJob = { kind: kind.name, id, status: 'running', startedAt: Date.now() };
    let progress: JobProgress = {};
    const announce = (status: JobStatus, message?: string) => this.emit({ type: 'job', kind: kind.name, id, status, ...progress, ...(message !== undefined && { message }) });
    return new Promise<JobRun>((resolve, reject) => {
      this.table.start(id, info, async (signal) => {
        const ctx: JobContext<unknown> = {
          id, signal, deps: this.o.deps,
          update: (u) => {
            const folded = kind.fold(progress, u);
            // The event's guard (core/api/jobEvents.ts) takes a summary of at most 400 characters.
            progress = folded.summary !== undefined && folded.summary.length > 400 ? { ...folded, summary: folded.summary.slice(0, 400) } : folded;
            Object.assign(info, progress);
            announce('running');
          },
        };
        let run: JobRun;
        try {
          run = await begin(ctx);
        } catch (err) {
          reject(err);
          return;
        }
        announce('running');
        resolve(run);
        const end = await run.done.catch((err: unknown): JobEnd => ({ status: 'failed', message: errorText(err) }));
        announce(end.status, end.message === undefined ? undefined : end.message.slice(0, MAX_EVENT_TEXT));
      });
    });
  }
}

/** A {@link LabJobs} call as the lab API answers it: a JobError becomes ApiError `BAD_REQUEST` (`BUSY` for BUSY) of `method`, naming its field. */
export async function asJobApi<T>(method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof JobError) throw new ApiError(err.code === 'BUSY' ? 'BUSY' : 'BAD_REQUEST', `${method}: ${err.message}`, method, err.field, { cause: err });
    throw err;
  }
}
