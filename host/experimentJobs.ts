/**
 * Experiments in the lab's background (`startRun`, `resumeRun`, `cancelRun`, `activeRuns`):
 * each started through the experiment service (core/experiments/service.ts), the one the CLI
 * uses, holding its model files (host/modelFiles.ts) from its start to its end, its progress
 * events forwarded as `LabEvent`s, and cancelled through its own signal. Each running experiment
 * is also on the lab's list of running jobs (host/jobs.ts `RunningJobs`) as a job of its kind
 * (`run`, `blame-eval`, `rollouts`), announced with the one `job` event.
 */
import { ApiError, type ActiveRun, type LabEvent } from '../core/api/index.ts';
import { startExperiment, type ExperimentEvent, type ExperimentHandle, type ExperimentSpec } from '../core/experiments/index.ts';
import type { ModelConfig, ModelProvider } from '../core/model/index.ts';
import { StoreError, type Store } from '../core/store/index.ts';
import type { Dataset } from '../core/tasks/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import { ModelFileError, verifyModelFiles, withFingerprints } from '../models/resolve.ts';
import { RunningJobs, type JobReport } from './jobs.ts';
import type { ModelFiles } from './modelFiles.ts';
import { apiErrorOf } from './request.ts';

/** What experiments need of the lab (its runner's parts). */
export interface ExperimentJobsOptions {
  store: Store;
  /** Receives the forwarded events (must not throw). */
  emit: (event: LabEvent) => void;
  tools: ToolRegistry;
  files: ModelFiles;
  createProvider: (config: ModelConfig) => Promise<ModelProvider>;
  /** A dataset by name, graded with the lab's sandbox. */
  datasets: (name: string, dataDir?: string) => Dataset;
  /** The lab's list of running jobs (default: one of its own over `emit`). */
  running?: RunningJobs;
}

interface Active {
  experimentId: string;
  done: number;
  total: number;
  startedAt: number;
  controller: AbortController;
  /** The model files this experiment holds (one experiment per model file at a time). */
  files: string[];
  finished: Promise<void>;
  /** What the request's resolution changed (threads lowered to the cores): the `running` event's message. */
  notes: readonly string[];
  /** Its entry on the lab's list of running jobs, from its `started` event on. */
  job?: JobReport;
}

/** The lab's running experiments (see the module comment). */
export class ExperimentJobs {
  private readonly active = new Map<string, Active>();
  private readonly running: RunningJobs;

  constructor(private readonly o: ExperimentJobsOptions) {
    this.running = o.running ?? new RunningJobs(o.emit);
  }

  /** Whether the experiment runs here now. */
  has(experimentId: string): boolean {
    return this.active.has(experimentId);
  }

  /**
   * Claims `files`, starts `spec` through the experiment service and follows it; resolves with
   * the experiment id once it runs (or had nothing to do). Errors (ApiError of `method`):
   * `BUSY` (a file held), `BAD_REQUEST` (a model file that changed or is missing, a resume the
   * service refuses), and the service's errors mapped by `apiErrorOf`.
   */
  async launch(spec: ExperimentSpec, files: string[], method: string, also?: (e: ExperimentEvent) => void, notes: readonly string[] = []): Promise<string> {
    const { store, files: held } = this.o;
    held.claim(files, method);
    let settle!: () => void;
    const finished = new Promise<void>((resolve) => (settle = resolve));
    const active: Active = { experimentId: '', done: 0, total: 0, startedAt: Date.now(), controller: new AbortController(), files, finished, notes };
    let handle: ExperimentHandle;
    let started = false;
    try {
      handle = await startExperiment(spec, {
        store,
        models: { create: this.o.createProvider, fingerprint: withFingerprints, verify: verifyModelFiles },
        tools: this.o.tools,
        datasets: this.o.datasets,
      }, {
        onEvent: (e) => {
          started ||= e.type === 'started';
          also?.(e);
          this.forward(active, e);
        },
        signal: active.controller.signal,
      });
    } catch (err) {
      held.release(files);
      settle();
      if (err instanceof ModelFileError) throw new ApiError('BAD_REQUEST', `${method}: ${err.message}`, method, 'models', { cause: err });
      const mapped = apiErrorOf(err, method);
      if (spec.kind === 'resume' && !(mapped instanceof ApiError) && !(mapped instanceof StoreError) && mapped instanceof Error) {
        throw new ApiError('BAD_REQUEST', `${method}: ${mapped.message}`, method, 'experimentId', { cause: mapped });
      }
      throw mapped;
    }
    if (!started) {
      held.release(files);
      settle();
    }
    void handle.done.then(settle);
    return handle.experimentId;
  }

  /**
   * Cancels a running experiment: the run in flight is dropped (not stored), the experiment is
   * marked `cancelled` (resumable with `flowlab resume`). Resolves once it has stopped and the
   * `cancelled` event was emitted. `{cancelled: false}` when it is not running here.
   */
  async cancel(experimentId: string): Promise<{ cancelled: boolean }> {
    const active = this.active.get(experimentId);
    if (!active) return { cancelled: false };
    active.controller.abort();
    await active.finished;
    return { cancelled: true };
  }

  /** Experiments running now, oldest first: id, runs stored (`done`) of `total`, start time (epoch ms). */
  list(): ActiveRun[] {
    return [...this.active.values()].map((a) => ({ experimentId: a.experimentId, done: a.done, total: a.total, startedAt: a.startedAt }));
  }

  /** Resolves when the experiment's background run has ended (at once when it is not running here). */
  async settled(experimentId: string): Promise<void> {
    await this.active.get(experimentId)?.finished;
  }

  /** Cancels every running experiment and waits for them to stop. */
  async dispose(): Promise<void> {
    const all = [...this.active.values()];
    for (const a of all) a.controller.abort();
    await Promise.all(all.map((a) => a.finished));
  }

  /** The service's events as LabEvents; the experiment's bookkeeping (active list, claimed files) follows them. */
  private forward(active: Active, e: ExperimentEvent): void {
    switch (e.type) {
      case 'started':
        active.experimentId = e.experimentId;
        active.done = e.done;
        active.total = e.total;
        this.active.set(e.experimentId, active);
        for (const file of active.files) this.o.files.relabel([file], `experiment ${e.experimentId}`);
        this.o.emit({ type: 'experiment', experimentId: e.experimentId, status: 'running', done: e.done, total: e.total, ...(active.notes.length > 0 && { message: active.notes.join('; ') }) });
        active.job = this.running.open({ kind: e.kind, id: e.experimentId, cancel: () => this.cancel(e.experimentId), progress: { done: e.done, total: e.total } });
        return;
      case 'node': {
        const { type: _t, ...rest } = e;
        this.o.emit({ type: 'node', ...rest });
        return;
      }
      case 'run': {
        if (e.status !== 'cancelled') active.done = e.done;
        const { correctRuns, ...rest } = e;
        this.o.emit(rest);
        if (e.status !== 'cancelled') active.job?.progress({ done: e.done, total: e.total, summary: `${correctRuns} correct of ${e.done} runs` });
        return;
      }
      case 'finished': {
        this.o.files.release(active.files);
        this.active.delete(e.experimentId);
        const end: LabEvent = { type: 'experiment', experimentId: e.experimentId, status: e.status, done: e.done, total: e.total };
        if (e.message !== undefined) end.message = e.message;
        active.job?.close(e.status, e.message, { done: e.done, total: e.total });
        this.o.emit(end);
        return;
      }
      default:
        // notes and the halted event: the finished event carries the reason
        return;
    }
  }
}
