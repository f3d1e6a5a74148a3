/**
 * The lab's background jobs by id, the shape MASS jobs (host/massJobs.ts), study jobs
 * (host/studyJobs.ts) and model downloads (host/downloads.ts) share: at most one job per id, each
 * with its own `AbortController`; a cancel aborts the job's signal and waits until it has
 * settled (its closing event sent, its cleanup run); dispose cancels them all. What a job does,
 * which events it sends and how it reads its own end stay with its owner: `start` takes the
 * whole body, closing events included, and the table only keeps it until it settles. The
 * owners extend {@link JobOwner} for their public `cancel`, `settled` and `dispose`.
 */

/** Longest line or message of a pushed job event, characters (longer ones are cut). */
export const MAX_EVENT_TEXT = 2000;

/** A thrown value's message for a job's closing event, cut at MAX_EVENT_TEXT. */
export function errorText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).slice(0, MAX_EVENT_TEXT);
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
