/**
 * The lab's background jobs by id, the shape MASS jobs (host/massJobs.ts), study jobs
 * (host/studyJobs.ts) and model downloads (host/downloads.ts) share: at most one job per id, each
 * with its own `AbortController`; a cancel aborts the job's signal and waits until it has
 * settled (its closing event sent, its cleanup run); dispose cancels them all. What a job does,
 * which events it sends and how it reads its own end stay with its owner: `start` takes the
 * whole body, closing events included, and the table only keeps it until it settles. The
 * owners extend {@link JobOwner} for their public `cancel`, `settled` and `dispose`.
 *
 * Every family's tables share the lab's one {@link RunningJobs}: each job started in a table with
 * its kind is listed there (`listJobs`), cancelled through it by kind and id (`cancelJob`) and
 * announced with the one `job` event (core/jobs `JobEvent`), beside the family's own detail
 * events. {@link LabJobs} runs any kind registered in core/jobs through one such table.
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

/** Least milliseconds between two progress `job` events of one family job (the last update is sent when the window ends; status changes are never held back). */
export const JOB_PROGRESS_EVERY_MS = 250;
/** Longest `summary` of a `job` event, characters (the event's guard, core/api/jobEvents.ts). */
const MAX_SUMMARY = 400;

/** A job running in the lab, as `listJobs` shows it. */
export interface RunningJob extends JobProgress {
  kind: string;
  id: string;
  status: 'running';
  /** Epoch ms. */
  startedAt: number;
}

/** How a family tells the lab about one of its jobs: a handle from {@link RunningJobs.open}. */
export interface JobReport {
  /**
   * Folds `update` into the job's progress (what it does not say stays) and announces it as a
   * `job` `running` event: at once, or at most once per `everyMs` (the last update sent when the
   * window ends). Ignored once closed.
   */
  progress(update: JobProgress): void;
  /** Announces how the job ended (`update` folded in first) and takes it off the list. Later calls do nothing. */
  close(status: Exclude<JobStatus, 'running'>, message?: string, update?: JobProgress): void;
  /** Takes the job off the list without a closing event (a start that failed before it ran). */
  withdraw(): void;
  /** Whether it was closed or withdrawn. */
  readonly closed: boolean;
}

/** What {@link RunningJobs.open} takes. */
export interface OpenJob {
  /** The registered kind name (core/jobs `builtinJobKinds()`: `run`, `train-loop`, `evolve`, `study`, `download`...). */
  kind: string;
  /** The family's own id (experiment id, loop id, job id, study id, download id). */
  id: string;
  /** Stops the job through its family; resolves once its closing events were sent. */
  cancel: () => Promise<{ cancelled: boolean }>;
  /** What it has done already (a resume). */
  progress?: JobProgress;
  /** Least ms between two progress events (default {@link JOB_PROGRESS_EVERY_MS}; 0: every update). */
  everyMs?: number;
  /** Open without the `running` event (the opener announces it with its first `progress`). */
  quiet?: boolean;
}

/** A report that announces nothing: a table without a {@link RunningJobs}, or a start without a kind. */
const SILENT: JobReport = { progress: () => {}, close: () => {}, withdraw: () => {}, closed: false };

/**
 * The lab's running jobs of every family, oldest first, and the one `job` event: a family opens
 * each job it runs (kind, its own id, how to cancel it), reports its progress and closes it. So
 * one list answers `listJobs` and one call cancels any job (`cancelJob`), while the family keeps
 * its detail events for the views that need them. Progress events are throttled per job
 * (`everyMs`, leading and trailing edge), so a family's burst of updates costs at most one `job`
 * event per window; `running` at open and the closing event are sent at once. Summaries are cut
 * at 400 characters, messages at MAX_EVENT_TEXT.
 */
export class RunningJobs {
  private readonly jobs = new Map<string, { info: RunningJob; cancel: () => Promise<{ cancelled: boolean }> }>();
  private readonly emit: (event: JobEvent) => void;

  /** `emit` receives every `job` event (a throw is dropped). */
  constructor(emit: (event: JobEvent) => void) {
    this.emit = jobEmitter(emit);
  }

  /**
   * Lists the job and announces it `running` (unless `quiet`); returns its report.
   * @throws Error when a job of that kind and id is open already (a programming error: families refuse a running id with their own BUSY first).
   */
  open(job: OpenJob): JobReport {
    const key = `${job.kind}:${job.id}`;
    if (this.jobs.has(key)) throw new Error(`RunningJobs.open: ${key} is running already`);
    const info: RunningJob = { kind: job.kind, id: job.id, status: 'running', startedAt: Date.now() };
    const entry = { info, cancel: job.cancel };
    this.jobs.set(key, entry);
    const everyMs = job.everyMs ?? JOB_PROGRESS_EVERY_MS;
    let sentAt = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    const fold = (u: JobProgress) => {
      if (u.done !== undefined) info.done = u.done;
      if (u.total !== undefined) info.total = u.total;
      if (u.summary !== undefined) info.summary = u.summary.slice(0, MAX_SUMMARY);
    };
    const announce = (status: JobStatus, message?: string) => {
      const { kind, id, done, total, summary } = info;
      this.emit({ type: 'job', kind, id, status, ...(done !== undefined && { done }), ...(total !== undefined && { total }), ...(summary !== undefined && { summary }), ...(message !== undefined && { message: message.slice(0, MAX_EVENT_TEXT) }) });
    };
    const sendProgress = () => {
      timer = undefined;
      sentAt = Date.now();
      announce('running');
    };
    const end = () => {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (this.jobs.get(key) === entry) this.jobs.delete(key);
    };
    if (job.progress) fold(job.progress);
    if (!job.quiet) sendProgress();
    return {
      progress: (update) => {
        if (closed) return;
        fold(update);
        const wait = everyMs - (Date.now() - sentAt);
        if (wait <= 0) sendProgress();
        else timer ??= setTimeout(sendProgress, wait);
      },
      close: (status, message, update) => {
        if (closed) return;
        if (update) fold(update);
        end();
        announce(status, message);
      },
      withdraw: () => {
        if (!closed) end();
      },
      get closed() {
        return closed;
      },
    };
  }

  /** The open jobs, oldest first (copies). */
  list(): RunningJob[] {
    return [...this.jobs.values()].map((j) => ({ ...j.info }));
  }

  /** Whether the job `kind`/`id` is open. */
  has(kind: string, id: string): boolean {
    return this.jobs.has(`${kind}:${id}`);
  }

  /** Cancels the job through its family; resolves once its closing events were sent. `{cancelled: false}` when no such job runs. */
  cancel(kind: string, id: string): Promise<{ cancelled: boolean }> {
    const job = this.jobs.get(`${kind}:${id}`);
    return job ? job.cancel() : Promise.resolve({ cancelled: false });
  }
}

interface Entry<Meta> {
  meta: Meta;
  controller: AbortController;
  finished: Promise<void>;
  report: JobReport;
}

/** The running jobs of one kind in one lab, by id (see the module comment). `Meta`: what the owner keeps beside each job. */
export class JobTable<Meta = undefined> {
  private readonly jobs = new Map<string, Entry<Meta>>();

  /** `running`: where jobs started with a kind are listed and announced (none: nothing is). */
  constructor(private readonly running?: RunningJobs) {}

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
   *
   * `job` (its registered kind, its progress so far): the job is opened on the table's
   * {@link RunningJobs} (listed, announced `running`, cancellable by kind and id) and `body` gets
   * its report (also `report(id)`): the family reports progress there and closes it before its
   * own closing event; a body that settles without closing it is closed `cancelled` when aborted,
   * else `completed` (`failed` when it rejected).
   */
  start(id: string, meta: Meta, body: (signal: AbortSignal, report: JobReport) => Promise<void>, cleanup?: () => void, job?: { kind: string; progress?: JobProgress; everyMs?: number; quiet?: boolean }): void {
    if (this.jobs.has(id)) throw new Error(`JobTable.start: ${id} is running already`);
    const controller = new AbortController();
    const report = this.running && job ? this.running.open({ ...job, id, cancel: () => this.cancel(id) }) : SILENT;
    const entry = { meta, controller, report } as Entry<Meta>;
    this.jobs.set(id, entry);
    entry.finished = body(controller.signal, report).then(
      () => report.close(controller.signal.aborted ? 'cancelled' : 'completed'),
      (err: unknown) => {
        report.close('failed', errorText(err));
        throw err;
      },
    ).finally(() => {
      cleanup?.();
      this.jobs.delete(id);
    });
  }

  /** What the owner keeps beside the running job `id` (undefined when it does not run here). */
  meta(id: string): Meta | undefined {
    return this.jobs.get(id)?.meta;
  }

  /** The report of the running job `id` (undefined when it does not run here). */
  report(id: string): JobReport | undefined {
    return this.jobs.get(id)?.report;
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

/** What a job owner (MassJobs, StudyJobs, TrainLoopJobs, ModelDownloads) offers over its table: cancel one job, wait for one, stop them all. */
export abstract class JobOwner<Meta = undefined> {
  protected readonly jobs: JobTable<Meta>;

  /** `running`: the lab's list of running jobs, where this owner's jobs are listed and announced. */
  constructor(running: RunningJobs) {
    this.jobs = new JobTable<Meta>(running);
  }

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

/** Options of {@link LabJobs}. */
export interface LabJobsOptions {
  /** The kinds it runs (default: core/jobs `builtinJobKinds()`). */
  registry: JobRegistry;
  /** Receives every `job` event (must not throw; a throw is dropped); unused when `running` is given. */
  emit: (event: JobEvent) => void;
  /** The lab's list of running jobs its jobs join (default: one of its own over `emit`). */
  running?: RunningJobs;
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
 * runs, `running` again on each progress update, then `completed` / `cancelled` / `failed`),
 * on the lab's {@link RunningJobs} beside the other families' jobs.
 * The CLI (`flowlab job`) and the lab host (`startJob` and friends) both run kinds through it.
 */
export class LabJobs {
  private readonly running: RunningJobs;
  /** Its jobs by id, each kept with its kind. */
  private readonly table: JobTable<string>;

  constructor(private readonly o: LabJobsOptions) {
    this.running = o.running ?? new RunningJobs(o.emit);
    this.table = new JobTable<string>(this.running);
  }

  /** The registered kinds. */
  kinds(): JobKindInfo[] {
    return this.o.registry.list();
  }

  /** The jobs it runs now (not the other families' on a shared list), oldest first. */
  list(): RunningJob[] {
    return this.running.list().filter((j) => this.table.meta(j.id) === j.kind);
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
    if (!resume) {
      const via = k.resumeVia ? `: resume it with ${k.resumeVia.method} (${k.resumeVia.command} <id>)` : '';
      throw new JobError('NOT_RESUMABLE', 'kind', `job kind "${kind}" ${k.resumeVia ? 'is not resumed through the job table' : 'cannot be resumed'}${via}`);
    }
    if (this.table.has(id)) throw new JobError('BUSY', 'id', `job ${id} is running here`);
    const run = await this.launch(k, id, (ctx) => resume(ctx));
    return { kind, id, ...(run.pending !== undefined && { pending: run.pending }) };
  }

  /** Cancels a running job (its signal aborted); resolves once it has settled and its closing `job` event was sent. `{cancelled: false}` when it does not run here (or is of another kind). */
  async cancel(kind: string, id: string): Promise<{ cancelled: boolean }> {
    if (this.table.meta(id) !== kind) return { cancelled: false };
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
    let progress: JobProgress = {};
    return new Promise<JobRun>((resolve, reject) => {
      // Every update announced (everyMs 0): a kind's `fold` decides what an update is.
      this.table.start(id, kind.name, async (signal, report) => {
        const ctx: JobContext<unknown> = {
          id, signal, deps: this.o.deps,
          update: (u) => {
            progress = kind.fold(progress, u);
            report.progress(progress);
          },
        };
        let run: JobRun;
        try {
          run = await begin(ctx);
        } catch (err) {
          report.withdraw();
          reject(err);
          return;
        }
        report.progress({});
        resolve(run);
        const end = await run.done.catch((err: unknown): JobEnd => ({ status: 'failed', message: errorText(err) }));
        report.close(end.status, end.message);
      }, undefined, { kind: kind.name, everyMs: 0, quiet: true });
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
