/**
 * Train loops in the lab's background (`startTrainLoop`, `resumeRun` of a loop, `cancelTrainLoop`):
 * the service of `flowlab train-loop` and `flowlab resume <loop>` (core/experiments), run in the
 * job table every background job family shares (host/jobs.ts `JobTable`), holding their starting
 * model files (host/modelFiles.ts) while they run, and told as `trainLoop` events
 * (host/trainLoop.ts `trainLoopLabEvent`), each loop also a `train-loop` job on the lab's `RunningJobs` (the one `job` event).
 */
import { ApiError, type LabEvent, type ResumeRunPayload, type StartTrainLoopRequest } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import { loopPlanOf, resumeTrainLoop, startTrainLoop, trainableRoles, trainLoopOf, type ServiceDeps, type TrainLoopHandle } from '../core/experiments/index.ts';
import type { ModelConfig, ModelProvider } from '../core/model/index.ts';
import { StoreError, type Store } from '../core/store/index.ts';
import { resolveDataDir, type Dataset, type DatasetLocation } from '../core/tasks/index.ts';
import type { ToolRegistry } from '../core/tools/index.ts';
import { newLoopId, type Trainer } from '../core/training/index.ts';
import { ModelFileError, verifyModelFiles, withFingerprints } from '../models/resolve.ts';
import { errorText, JobOwner, RunningJobs } from './jobs.ts';
import type { ModelFiles } from './modelFiles.ts';
import { apiErrorOf, parseRequestWorkflow, resolveRequestModels } from './request.ts';
import { TRAIN_LOOP_DEFAULTS, trainLoopLabEvent, trainLoopSpecOf } from './trainLoop.ts';

/** What train loops need of the lab (its runner's parts). */
export interface TrainLoopJobsOptions {
  store: Store;
  emit: (event: LabEvent) => void;
  tools: ToolRegistry;
  files: ModelFiles;
  createProvider: (config: ModelConfig) => Promise<ModelProvider>;
  loadTrainer: () => Promise<Trainer>;
  /** A dataset by name, graded with the lab's sandbox (start and resume alike). */
  datasets: (name: string, dataDir?: string) => Dataset;
  location: DatasetLocation;
  versionsDir: string;
  modelDir: string;
  disposed: () => boolean;
  /** The lab's list of running jobs, where loops are listed and announced as `train-loop` jobs (default: one of its own over `emit`). */
  running?: RunningJobs;
}

/** What the table keeps beside a running loop. */
interface LoopMeta {
  loopId: string;
}

/** The lab's train loops (see the module comment). */
export class TrainLoopJobs extends JobOwner<LoopMeta> {
  constructor(private readonly o: TrainLoopJobsOptions) {
    super(o.running ?? new RunningJobs(o.emit));
  }

  /**
   * Starts `flowlab train-loop` in the background (the request mapped as the CLI maps its flags:
   * host/trainLoop.ts `trainLoopSpecOf`). Emits `trainLoop` `running` before it resolves with
   * the loop id, then `trainHeldout` / `trainRollout` / `trainIteration` and a closing `trainLoop`.
   * Errors (ApiError `startTrainLoop`, field named): `BAD_REQUEST` (workflow, roles, dataset,
   * split, models, versions, a missing or invalid model file), `UNAVAILABLE` (dataset files
   * absent, no trainer, shutting down), `BUSY` (a model file in use).
   */
  async start(req: StartTrainLoopRequest): Promise<{ loopId: string }> {
    const T = 'startTrainLoop';
    const { store } = this.o;
    const graph = parseRequestWorkflow(req.workflowText, this.o.tools, T);
    let dataset;
    let roles: string[];
    try {
      roles = trainableRoles({ graph, text: req.workflowText }, req.roles);
      dataset = this.o.datasets(req.dataset);
    } catch (err) {
      throw apiErrorOf(err, T);
    }
    const resolved = resolveRequestModels(graph, { ...req, contextSize: req.contextSize ?? TRAIN_LOOP_DEFAULTS.contextSize }, store, this.o.modelDir, T);
    const spec = { ...trainLoopSpecOf(req, graph, req.workflowText, resolved, store, dataset, { versionsDir: this.o.versionsDir, dataDir: resolveDataDir(this.o.location) }), loopId: newLoopId() };
    const files = await this.o.files.checkConfig(resolved.config, resolved.fieldOf, T);
    this.o.files.claim(files, T, `train loop ${spec.loopId}`);
    let handle: TrainLoopHandle;
    let done = 0;
    try {
      const trainer = await this.trainer(T);
      handle = startTrainLoop(spec, { ...this.deps(), trainer }, {
        onEvent: (e) => {
          if (e.type === 'iteration') done = e.metrics.iteration;
          this.o.emit(trainLoopLabEvent(spec.loopId, e));
          this.progress(spec.loopId, e);
        },
      });
    } catch (err) {
      this.o.files.release(files);
      throw apiErrorOf(err, T);
    }
    this.follow(handle, files, roles, spec.iterations, 0, () => done);
    return { loopId: spec.loopId };
  }

  /**
   * Resumes a stored train loop (`resumeRun` given the loop's id or one of its experiments'), as
   * `flowlab resume` does: from its last complete iteration, same id, lineage and numbering.
   * Resolves with `pending` iterations (0: it completed, nothing started).
   * Errors (ApiError `resumeRun`): `BAD_REQUEST` (a starting model file missing or changed, a
   * loop running in another live process without `force`), `FORBIDDEN` naming `experimentId` (a
   * recorded model a confined host refuses: host/modelPaths.ts `checkModel`), `UNAVAILABLE` (no trainer, shutting
   * down), `BUSY` (it runs here, or a model file is in use).
   */
  async resume(req: ResumeRunPayload): Promise<{ experimentId: string; pending: number; loopId: string }> {
    const R = 'resumeRun';
    const row = trainLoopOf(this.o.store, req.experimentId)!;
    if (this.jobs.has(row.id)) throw new ApiError('BUSY', `${R}: train loop ${row.id} is running here`, R, 'experimentId');
    if (row.status === 'completed') return { experimentId: req.experimentId, pending: 0, loopId: row.id };
    const plan = loopPlanOf(row);
    // The recorded models by the host's rule (a database made elsewhere may name any path, or an endpoint with a key).
    for (const ref of Object.values(plan.models.models)) this.o.files.confine(ref, R, 'experimentId');
    const files = [...new Set([...Object.values(plan.models.models), ...(req.models?.default ? [req.models.default] : []), ...Object.values(req.models?.roles ?? {})])];
    this.o.files.claim(files, R, `train loop ${row.id}`);
    let handle: TrainLoopHandle;
    let done = row.done;
    try {
      const trainer = await this.trainer(R);
      let started;
      try {
        started = resumeTrainLoop({ id: row.id, ...(req.models && { models: req.models }), ...(req.force && { force: true }) }, { ...this.deps(), trainer }, {
          onEvent: (e) => {
            if (e.type === 'iteration') done = e.metrics.iteration;
            this.o.emit(trainLoopLabEvent(row.id, e));
            this.progress(row.id, e);
          },
        });
      } catch (err) {
        if (err instanceof ApiError || err instanceof StoreError) throw err;
        throw new ApiError('BAD_REQUEST', `${R}: ${errorMessage(err)}`, R, err instanceof ModelFileError ? 'models' : 'experimentId', { cause: err });
      }
      if (started.nothing) {
        this.o.files.release(files);
        return { experimentId: req.experimentId, pending: 0, loopId: row.id };
      }
      handle = started.handle;
    } catch (err) {
      this.o.files.release(files);
      throw apiErrorOf(err, R);
    }
    this.follow(handle, files, plan.roles, row.iterations, row.done, () => done);
    return { experimentId: req.experimentId, pending: row.iterations - row.done, loopId: row.id };
  }

  /** Train loops running here now, oldest first. */
  running(): string[] {
    return this.jobs.metas().map((m) => m.loopId);
  }

  /** The service deps of a loop: the store, the model port, the tools, the lab's datasets (with its sandbox). */
  private deps(): ServiceDeps {
    return { store: this.o.store, models: { create: this.o.createProvider, fingerprint: withFingerprints, verify: verifyModelFiles }, tools: this.o.tools, datasets: this.o.datasets };
  }

  /** The trainer, loaded. @throws ApiError `UNAVAILABLE` (it cannot load, or the lab is shutting down). */
  private async trainer(method: string): Promise<Trainer> {
    let trainer: Trainer;
    try {
      trainer = await this.o.loadTrainer();
    } catch (err) {
      throw new ApiError('UNAVAILABLE', `${method}: the trainer cannot load: ${errorMessage(err)}`, method, undefined, { cause: err });
    }
    if (this.o.disposed()) throw new ApiError('UNAVAILABLE', `${method}: the lab is shutting down`, method);
    return trainer;
  }

  /** A loop event as the `train-loop` job's progress: iterations done, the last score. */
  private progress(loopId: string, e: Parameters<typeof trainLoopLabEvent>[1]): void {
    if (e.type === 'iteration') this.jobs.report(loopId)?.progress({ done: e.metrics.iteration, summary: `iteration ${e.metrics.iteration}: score ${e.metrics.score.toFixed(3)}` });
  }

  /** Runs a started loop in the job table: `trainLoop` running now, its closing event when it ends, its files released. */
  private follow(handle: TrainLoopHandle, files: string[], roles: string[], iterations: number, doneBefore: number, doneNow: () => number): void {
    const loopId = handle.loopId;
    const base = { type: 'trainLoop' as const, loopId, roles, iterations };
    const emit = this.o.emit;
    emit({ ...base, status: 'running', done: doneBefore });
    this.jobs.start(loopId, { loopId }, async (signal, job) => {
      signal.addEventListener('abort', () => handle.cancel(), { once: true });
      try {
        const report = await handle.done;
        const status = report.cancelled ? 'cancelled' : 'completed';
        job.close(status, undefined, { done: report.iterations.length });
        emit({ ...base, status, done: report.iterations.length });
      } catch (err) {
        job.close('failed', errorText(err), { done: doneNow() });
        emit({ ...base, status: 'failed', done: doneNow(), message: errorMessage(err) });
      }
    }, () => this.o.files.release(files), { kind: 'train-loop', progress: { done: doneBefore, total: iterations } });
  }
}
