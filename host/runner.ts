import os from 'node:os';
import path from 'node:path';
import { ApiError, type ActiveRun, type DistillCardRequest, type ForkRunRequest, type ForkRunResult, type LabEvent, type LibraryCard, type ResumeRunPayload, type StartRunRequest, type StartTrainLoopRequest } from '../core/api/index.ts';
import { distillInLab, teacherOf } from './distill.ts';
import { forkInLab } from './fork.ts';
import { resumeTrainLoop, startExperiment, startTrainLoop, trainableRoles, trainLoopOf, type ExperimentEvent, type ExperimentHandle, type ExperimentSpec, type TrainLoopHandle } from '../core/experiments/index.ts';
import type { ModelConfig, ModelProvider, ModelRequestField } from '../core/model/index.ts';
import { StoreError, type Store } from '../core/store/index.ts';
import { getDataset, resolveDataDir, type DatasetLocation } from '../core/tasks/index.ts';
import { defaultTools, type ToolRegistry } from '../core/tools/index.ts';
import type { CodeSandbox } from '../core/sandbox/index.ts';
import { PyodideSandbox } from '../models/sandbox/index.ts';
import { newLoopId, type Trainer } from '../core/training/index.ts';
import { llamaProvider, loadTrainer } from '../models/factory.ts';
import { ModelFileError, verifyModelFiles, withFingerprints } from '../models/resolve.ts';
import type { ModelPaths } from './modelPaths.ts';
import { apiErrorOf, apiFieldOf, parseRequestWorkflow, requestCards, resolveRequestModels } from './request.ts';
import { TRAIN_LOOP_DEFAULTS, trainLoopLabEvent, trainLoopSpecOf } from './trainLoop.ts';
import { MassJobs } from './massJobs.ts';
import { StudyJobs } from './studyJobs.ts';

/** A provider the runner can pre-load (node-llama-cpp's loads every model file on `load()`). */
export type LoadableProvider = ModelProvider;

/** Options of {@link LabRunner}. */
export interface LabRunnerOptions {
  /** The open store experiments are written to (the runner never closes it). */
  store: Store;
  /** Receives every LabEvent, in order per experiment. Must not throw (a throw is ignored). */
  emit: (event: LabEvent) => void;
  /** Where datasets are read (`dataDir`, else `<sharedDir>/data`; see core/tasks `resolveDataDir`). */
  datasets?: DatasetLocation;
  /** The code sandbox for code datasets and `code_runner`. Default: a `PyodideSandbox` (models/sandbox), closed by `dispose`. */
  sandbox?: CodeSandbox;
  /** Relative `models.<ref>.path` entries of a workflow resolve against this folder. */
  modelDir: string;
  /** Builds the model provider of a run. Default: node-llama-cpp (`llamaProvider` of models/factory.ts). */
  createProvider?: (config: ModelConfig) => Promise<LoadableProvider>;
  /** Checks a model file before anything loads; throws an Error naming the file. Default: `readCheckedGgufInfo` (header, then finite weights). */
  checkModel?: (file: string) => Promise<unknown>;
  /**
   * Where train loops write their versions (`<versionsDir>/<loopId>/<role>/iter-<k>.gguf`).
   * Default: `flowlab-versions/` beside the database file (as `flowlab train-loop` does), or
   * in the system's temporary folder for a `:memory:` store.
   */
  versionsDir?: string;
  /** Loads the trainer of train loops. Default: TensorFlow.js (`loadTrainer` of models/factory.ts). */
  loadTrainer?: () => Promise<Trainer>;
  /**
   * Where request model paths may point (host/modelPaths.ts); a path outside is refused with
   * `FORBIDDEN` before anything reads it. Default: unconfined (the desktop app).
   */
  modelPaths?: ModelPaths;
  /** Study jobs (host/studyJobs.ts): the shipped plans' folder, and the folders a plan's workflows must lie in (undefined: any). Default: `examples/studies` of the working folder. */
  studies?: { plansDir: string; workflowRoots?: readonly string[] };
}

interface ActiveLoop {
  handle: TrainLoopHandle;
  files: string[];
  finished: Promise<void>;
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
}

const M = 'startRun';

/**
 * Runs experiments in the background for the lab (desktop app, `flowlab serve`) through the
 * experiment service (core/experiments/service.ts), the same one the CLI uses: a request is
 * mapped into the shared model resolver and an experiment spec, recorded exactly as `flowlab
 * run` / `blame-eval` / `rollouts` would (so `flowlab resume` and `replay` work on it), and the
 * service's progress events are forwarded as `LabEvent`s.
 *
 * Concurrency: several experiments may run at once, but a model file is used by one experiment
 * at a time (a second `start` naming it is refused with `BUSY`), since each experiment loads its
 * own copy of its models and two runs on one CPU only slow each other down. Train loops
 * (`startTrainLoop`, the service of `flowlab train-loop`) claim their starting model files the
 * same way.
 */
export class LabRunner {
  private readonly active = new Map<string, Active>();
  private readonly loops = new Map<string, ActiveLoop>();
  /** Model files claimed by experiments and train loops being started or running -> holder label. */
  private readonly claimed = new Map<string, string>();
  /** Where HumanEval/MBPP grading and `code_runner` run code; its interpreters start on first use. */
  private readonly sandbox: CodeSandbox;
  private readonly tools: ToolRegistry;
  private readonly createProvider: (config: ModelConfig) => Promise<LoadableProvider>;
  private readonly checkModel: (file: string) => Promise<unknown>;
  private disposed = false;
  /** The folder train loops write versions under (see `LabRunnerOptions.versionsDir`). */
  readonly versionsDir: string;
  /** MASS jobs (evolve, rank, rsi: host/massJobs.ts), sharing this runner's model-file claims. */
  readonly mass: MassJobs;
  /** Study jobs (`flowlab study` from the window: host/studyJobs.ts), sharing the model-file claims. */
  readonly studies: StudyJobs;

  constructor(private readonly options: LabRunnerOptions) {
    this.sandbox = options.sandbox ?? new PyodideSandbox();
    this.tools = defaultTools({ sandbox: this.sandbox });
    this.createProvider = options.createProvider ?? llamaProvider;
    this.checkModel =
      options.checkModel ??
      (async (file) => {
        const { readCheckedGgufInfo } = await import('../models/llama/index.ts');
        return readCheckedGgufInfo(file);
      });
    this.versionsDir = LabRunner.versionsDirOf(options.store, options.versionsDir);
    // What background jobs (MASS, studies) need of the runner: a model file confined and checked
    // before it loads (FORBIDDEN / BAD_REQUEST naming `field`), and the shared model-file claims.
    const jobFiles = {
      checkModel: async (file: string, method: string, field: string) => {
        if (this.disposed) throw new ApiError('UNAVAILABLE', `${method}: the lab is shutting down`, method);
        options.modelPaths?.check(file, method, field);
        await this.checkModel(file).catch((err: unknown) => {
          throw new ApiError('BAD_REQUEST', `${method}: ${err instanceof Error ? err.message : String(err)}`, method, field, { cause: err });
        });
      },
      claim: (files: string[], method: string, holder: string) => this.claim(files, method, holder),
      release: (files: string[]) => this.release(files),
    };
    this.mass = new MassJobs({
      store: options.store, emit: (e) => this.emit(e), tools: this.tools, createProvider: this.createProvider, loadTrainer: options.loadTrainer ?? loadTrainer,
      ...jobFiles,
    });
    const location = options.datasets ?? {};
    this.studies = new StudyJobs({
      store: options.store, emit: (e) => this.emit(e), tools: this.tools, loadTrainer: options.loadTrainer ?? loadTrainer, versionsDir: this.versionsDir,
      models: { create: this.createProvider, fingerprint: withFingerprints, verify: verifyModelFiles },
      datasets: (name, dataDir) => getDataset(name, dataDir === undefined ? { ...location, sandbox: this.sandbox } : { dataDir, sandbox: this.sandbox }),
      dataDir: resolveDataDir(location),
      plansDir: options.studies?.plansDir ?? path.resolve('examples', 'studies'),
      ...(options.studies?.workflowRoots && { workflowRoots: options.studies.workflowRoots }),
      ...jobFiles,
    });
  }

  /** The versions folder a runner over `store` uses (see `LabRunnerOptions.versionsDir`), absolute. */
  static versionsDirOf(store: Store, versionsDir?: string): string {
    const db = store.file;
    return path.resolve(versionsDir ?? path.join(db === ':memory:' || db === '' ? os.tmpdir() : path.dirname(path.resolve(db)), 'flowlab-versions'));
  }

  /**
   * Validates `req`, loads its models, creates the experiment and starts it in the background.
   * Resolves with the experiment id once it runs; the `experiment` event with status `running`
   * is emitted before that.
   *
   * Experiment record: kind `run`; `blame-eval` with `config.simulated: true` when `inject` is
   * given; `rollouts` for `kind: 'rollouts'`. `config` = `{offset, dataDir, models: ModelConfig
   * (with fingerprints), cards?, roleVersions?, inject?, simulated?, rollouts?, source: 'lab'}`,
   * the shape the CLI writes.
   *
   * Errors (ApiError, method `startRun`, field named): `BAD_REQUEST` for an invalid workflow (the
   * message lists every located issue), an unknown dataset or split, an offset past the split, a
   * bad fault spec or one naming an unknown role or node, a role without a model, an unknown
   * role in `models.roles` / `roleLora` / `roleVersions`, an unknown weight version, an unknown
   * card, a missing or invalid model file (named), a rollouts request without `group`;
   * `UNAVAILABLE` when the dataset's files are absent or the runner is disposed; `BUSY` when a
   * model file is in use; `FORBIDDEN` when a model or adapter path (request or workflow) lies
   * outside a confined host's model folders (`modelPaths`).
   */
  async start(req: StartRunRequest): Promise<{ experimentId: string }> {
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${M}: the lab is shutting down`, M);
    const { store } = this.options;
    const graph = parseRequestWorkflow(req.workflowText, this.tools);
    const { config, fieldOf, notes } = resolveRequestModels(graph, req, store, this.options.modelDir);
    const cards = requestCards(graph, req, store);
    if (cards && (req.inject?.length || req.kind === 'rollouts')) throw new ApiError('BAD_REQUEST', `${M}: hint cards are for runs only (not with inject or rollouts)`, M, 'cards');
    if (req.kind === 'rollouts' && req.group === undefined) throw new ApiError('BAD_REQUEST', `${M}: a rollouts request needs group (rollouts per task)`, M, 'group');

    const files = await this.checkFiles(config, fieldOf, M);
    const location = this.options.datasets ?? {};
    const base = {
      workflow: { graph, text: req.workflowText },
      dataset: req.dataset, split: req.split, limit: req.limit, offset: req.offset ?? 0, seed: req.seed,
      dataDir: resolveDataDir(location), models: config, source: 'lab', ...(req.parallel !== undefined && { parallel: req.parallel }),
    };
    const spec: ExperimentSpec = req.inject?.length
      ? { ...base, kind: 'blame-eval', inject: req.inject, ...(req.runs !== undefined && { runs: req.runs }) }
      : req.kind === 'rollouts'
        ? { ...base, kind: 'rollouts', group: req.group!, temperature: req.temperature ?? 0.8, mode: req.mode ?? 'multi-agent', recordTokens: Boolean(req.recordTokens) }
        : { ...base, kind: 'run', ...(cards && { cards }), ...(req.roleVersions && Object.keys(req.roleVersions).length && { roleVersions: req.roleVersions }) };

    return { experimentId: await this.launch(spec, files, M, undefined, notes) };
  }

  /**
   * Resumes a stored experiment in the background, as `flowlab resume` does (the experiment
   * service's `resume`): its pending tasks only, with the recorded models (moved files given
   * again in `models`, checked against their fingerprints), seeds, faults and cards. Resolves
   * with the tasks left (`pending: 0`: nothing to do, nothing started).
   * Errors (ApiError, method `resumeRun`): `BAD_REQUEST` (a model file missing or changed, a
   * hint card gone, a running experiment without `force`, a model that fails to load),
   * `UNAVAILABLE` (disposed), `BUSY` (a model file in use, or the experiment runs here),
   * `FORBIDDEN` (a given or recorded model file outside a confined host's model folders).
   */
  async resume(req: ResumeRunPayload): Promise<{ experimentId: string; pending: number; loopId?: string }> {
    const R = 'resumeRun';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${R}: the lab is shutting down`, R);
    if (trainLoopOf(this.options.store, req.experimentId)) return this.resumeTrainLoop(req);
    if (this.active.has(req.experimentId)) throw new ApiError('BUSY', `${R}: experiment ${req.experimentId} is running here`, R, 'experimentId');
    const exp = this.options.store.getExperiment(req.experimentId);
    const stored = (exp.config as { models?: ModelConfig } | null)?.models;
    const paths = this.options.modelPaths;
    if (paths) {
      if (req.models?.default) paths.check(req.models.default, R, 'models.default');
      for (const [role, file] of Object.entries(req.models?.roles ?? {})) paths.check(file, R, `models.roles.${role}`);
      // The recorded files too: a database made elsewhere may name any path.
      for (const file of Object.values(stored?.models ?? {})) paths.check(file, R, 'experimentId');
    }
    const files = [...new Set([...Object.values(stored?.models ?? {}), ...(req.models?.default ? [req.models.default] : []), ...Object.values(req.models?.roles ?? {})])];
    const spec: ExperimentSpec = { kind: 'resume', experimentId: req.experimentId, ...(req.models && { models: req.models }), ...(req.force && { force: true }) };
    let total = 0;
    let done = 0;
    const id = await this.launch(spec, files, R, (e) => {
      if (e.type === 'started') ({ total, done } = e);
    });
    return { experimentId: id, pending: total - done };
  }

  /** Claims `files`, starts `spec` through the service and follows it; resolves with the experiment id once it runs (or had nothing to do). */
  private async launch(spec: ExperimentSpec, files: string[], method: string, also?: (e: ExperimentEvent) => void, notes: readonly string[] = []): Promise<string> {
    const { store } = this.options;
    const location = this.options.datasets ?? {};
    this.claim(files, method);
    let settle!: () => void;
    const finished = new Promise<void>((resolve) => (settle = resolve));
    const active: Active = { experimentId: '', done: 0, total: 0, startedAt: Date.now(), controller: new AbortController(), files, finished, notes };
    let handle: ExperimentHandle;
    let started = false;
    try {
      handle = await startExperiment(spec, {
        store,
        models: { create: this.createProvider, fingerprint: withFingerprints, verify: verifyModelFiles },
        tools: this.tools,
        datasets: (name, dataDir) => getDataset(name, dataDir === undefined ? { ...location, sandbox: this.sandbox } : { dataDir, sandbox: this.sandbox }),
      }, {
        onEvent: (e) => {
          started ||= e.type === 'started';
          also?.(e);
          this.forward(active, e);
        },
        signal: active.controller.signal,
      });
    } catch (err) {
      this.release(files);
      settle();
      if (err instanceof ModelFileError) throw new ApiError('BAD_REQUEST', `${method}: ${err.message}`, method, 'models', { cause: err });
      const mapped = apiErrorOf(err, method);
      if (spec.kind === 'resume' && !(mapped instanceof ApiError) && !(mapped instanceof StoreError) && mapped instanceof Error) {
        throw new ApiError('BAD_REQUEST', `${method}: ${mapped.message}`, method, 'experimentId', { cause: mapped });
      }
      throw mapped;
    }
    if (!started) {
      this.release(files);
      settle();
    }
    void handle.done.then(settle);
    return handle.experimentId;
  }

  /**
   * Starts `flowlab train-loop` in the background through the same service (`startTrainLoop` of
   * core/experiments/trainLoop.ts), with the request mapped as the CLI maps its flags
   * (host/trainLoop.ts `trainLoopSpecOf`; models through the shared resolver, `contextSize`
   * default 512). Versions go under `versionsDir`. Emits `trainLoop` `running` before it
   * resolves with the loop id, then `trainHeldout` / `trainRollout` / `trainIteration` events
   * and a closing `trainLoop` (`completed`, `cancelled`, or `failed` with the error's message).
   *
   * Errors (ApiError, method `startTrainLoop`, field named): `BAD_REQUEST` for an invalid
   * workflow, an unknown or untrainable role in `roles`, a role without a model, an unknown role
   * in `models.roles` / `roleVersions`, an unknown weight version, an unknown dataset or split
   * (`split`, `heldoutSplit`), an empty training split, a missing or invalid model file;
   * `UNAVAILABLE` when the dataset's files are absent, the trainer cannot load or the runner is
   * disposed; `BUSY` when a model file is in use by an experiment or another loop.
   */
  async startTrainLoop(req: StartTrainLoopRequest): Promise<{ loopId: string }> {
    const T = 'startTrainLoop';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${T}: the lab is shutting down`, T);
    const { store } = this.options;
    const location = this.options.datasets ?? {};
    const graph = parseRequestWorkflow(req.workflowText, this.tools, T);
    let dataset;
    let roles: string[];
    try {
      roles = trainableRoles({ graph, text: req.workflowText }, req.roles);
      dataset = getDataset(req.dataset, { ...location, sandbox: this.sandbox });
    } catch (err) {
      throw apiErrorOf(err, T);
    }
    const resolved = resolveRequestModels(graph, { ...req, contextSize: req.contextSize ?? TRAIN_LOOP_DEFAULTS.contextSize }, store, this.options.modelDir, T);
    const spec = { ...trainLoopSpecOf(req, graph, req.workflowText, resolved, store, dataset, { versionsDir: this.versionsDir, dataDir: resolveDataDir(location) }), loopId: newLoopId() };
    const files = await this.checkFiles(resolved.config, resolved.fieldOf, T);
    const loopId = spec.loopId;
    this.claim(files, T, `train loop ${loopId}`);
    let handle: TrainLoopHandle;
    let done = 0;
    try {
      let trainer: Trainer;
      try {
        trainer = await (this.options.loadTrainer ?? loadTrainer)();
      } catch (err) {
        throw new ApiError('UNAVAILABLE', `${T}: the trainer cannot load: ${err instanceof Error ? err.message : String(err)}`, T, undefined, { cause: err });
      }
      if (this.disposed) throw new ApiError('UNAVAILABLE', `${T}: the lab is shutting down`, T);
      handle = startTrainLoop(spec, {
        store,
        models: { create: this.createProvider, fingerprint: withFingerprints },
        tools: this.tools,
        trainer,
        datasets: (name, dataDir) => getDataset(name, dataDir === undefined ? { ...location, sandbox: this.sandbox } : { dataDir, sandbox: this.sandbox }),
      }, {
        onEvent: (e) => {
          if (e.type === 'iteration') done = e.metrics.iteration;
          this.emit(trainLoopLabEvent(loopId, e));
        },
      });
    } catch (err) {
      this.release(files);
      throw apiErrorOf(err, T);
    }
    this.follow(handle, files, roles, spec.iterations, 0, () => done);
    return { loopId };
  }

  /**
   * Resumes a stored train loop in the background (`resumeRun` given the loop's id or the id of
   * one of its experiments), as `flowlab resume` does (core/experiments/trainLoopResume.ts): from
   * its last complete iteration, same loop id, lineage and numbering, its stored rollouts used
   * again; versions under the loop's own folder. Emits `trainLoop` `running` (with the
   * iterations done) before it resolves, then the loop's events as for `startTrainLoop`.
   * Resolves with `pending`: iterations left (0: it completed, nothing started).
   * Errors (ApiError, method `resumeRun`): `BAD_REQUEST` (a starting model file missing or
   * changed, a loop running in another live process without `force`), `UNAVAILABLE` (no
   * trainer, disposed), `BUSY` (it runs here, or a model file is in use).
   */
  private async resumeTrainLoop(req: ResumeRunPayload): Promise<{ experimentId: string; pending: number; loopId: string }> {
    const R = 'resumeRun';
    const { store } = this.options;
    const row = trainLoopOf(store, req.experimentId)!;
    if (this.loops.has(row.id)) throw new ApiError('BUSY', `${R}: train loop ${row.id} is running here`, R, 'experimentId');
    if (row.status === 'completed') return { experimentId: req.experimentId, pending: 0, loopId: row.id };
    const plan = row.plan as { models?: ModelConfig; roles?: string[] };
    const files = [...new Set([...Object.values(plan.models?.models ?? {}), ...(req.models?.default ? [req.models.default] : []), ...Object.values(req.models?.roles ?? {})])];
    this.claim(files, R, `train loop ${row.id}`);
    const location = this.options.datasets ?? {};
    let handle: TrainLoopHandle;
    let done = row.done;
    try {
      let trainer: Trainer;
      try {
        trainer = await (this.options.loadTrainer ?? loadTrainer)();
      } catch (err) {
        throw new ApiError('UNAVAILABLE', `${R}: the trainer cannot load: ${err instanceof Error ? err.message : String(err)}`, R, undefined, { cause: err });
      }
      if (this.disposed) throw new ApiError('UNAVAILABLE', `${R}: the lab is shutting down`, R);
      let started;
      try {
        started = resumeTrainLoop({ id: row.id, ...(req.models && { models: req.models }), ...(req.force && { force: true }) }, {
          store,
          models: { create: this.createProvider, fingerprint: withFingerprints, verify: verifyModelFiles },
          tools: this.tools,
          trainer,
          datasets: (name, dataDir) => getDataset(name, dataDir === undefined ? location : { dataDir }),
        }, {
          onEvent: (e) => {
            if (e.type === 'iteration') done = e.metrics.iteration;
            this.emit(trainLoopLabEvent(row.id, e));
          },
        });
      } catch (err) {
        if (err instanceof ApiError || err instanceof StoreError) throw err;
        throw new ApiError('BAD_REQUEST', `${R}: ${err instanceof Error ? err.message : String(err)}`, R, err instanceof ModelFileError ? 'models' : 'experimentId', { cause: err });
      }
      if (started.nothing) {
        this.release(files);
        return { experimentId: req.experimentId, pending: 0, loopId: row.id };
      }
      handle = started.handle;
    } catch (err) {
      this.release(files);
      throw apiErrorOf(err, R);
    }
    this.follow(handle, files, plan.roles ?? [], row.iterations, row.done, () => done);
    return { experimentId: req.experimentId, pending: row.iterations - row.done, loopId: row.id };
  }

  /** Tracks a started loop: its closing `trainLoop` event, the files released, the loop forgotten; emits `trainLoop` running. */
  private follow(handle: TrainLoopHandle, files: string[], roles: string[], iterations: number, doneBefore: number, doneNow: () => number = () => doneBefore): void {
    const loopId = handle.loopId;
    const base = { type: 'trainLoop' as const, loopId, roles, iterations };
    const finished = handle.done.then(
      (report) => this.emit({ ...base, status: report.cancelled ? 'cancelled' : 'completed', done: report.iterations.length }),
      (err: unknown) => this.emit({ ...base, status: 'failed', done: doneNow(), message: err instanceof Error ? err.message : String(err) }),
    ).finally(() => {
      this.release(files);
      this.loops.delete(loopId);
    });
    this.loops.set(loopId, { handle, files, finished });
    this.emit({ ...base, status: 'running', done: doneBefore });
  }

  /**
   * Stops a train loop after the iteration in flight (the versions written so far stay
   * recorded; the held-out evaluation after is skipped). Resolves once it has stopped and its
   * closing `trainLoop` event was emitted. `{cancelled: false}` when it is not running here.
   */
  /**
   * Distils a hint card as `flowlab distill` does (host/distill.ts), holding the teacher's model
   * file meanwhile (`BUSY` for others, as an experiment holds its files).
   */
  async distill(req: DistillCardRequest): Promise<LibraryCard> {
    const D = 'distillCard';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${D}: the lab is shutting down`, D);
    const { store } = this.options;
    const { file } = teacherOf(store, this.tools, req);
    this.options.modelPaths?.check(file, D, req.teacher ? 'teacher' : 'experimentId');
    await this.checkModel(file).catch((err: unknown) => {
      throw new ApiError('BAD_REQUEST', `${D}: ${err instanceof Error ? err.message : String(err)}`, D, req.teacher ? 'teacher' : 'experimentId', { cause: err });
    });
    return distillInLab({
      store, tools: this.tools,
      loadProvider: async (config) => {
        const provider = await this.createProvider(config);
        await provider.load?.();
        return provider;
      },
      claim: (f) => {
        this.claim([f], D, `a card being distilled`);
        return () => this.release([f]);
      },
    }, req);
  }

  /**
   * Forks a stored run as `flowlab fork` does (host/fork.ts): its models' files checked (confined
   * to the model folders) and held meanwhile (`BUSY` for others).
   */
  async fork(req: ForkRunRequest): Promise<ForkRunResult> {
    const F = 'forkRun';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${F}: the lab is shutting down`, F);
    return forkInLab({
      store: this.options.store, tools: this.tools, createProvider: this.createProvider,
      claim: async (files) => {
        for (const f of files) {
          this.options.modelPaths?.check(f, F, f === req.roleModel?.path ? 'roleModel.path' : 'runId');
          await this.checkModel(f).catch((err: unknown) => {
            throw new ApiError('BAD_REQUEST', `${F}: ${err instanceof Error ? err.message : String(err)}`, F, 'runId', { cause: err });
          });
        }
        this.claim(files, F, 'a fork being run');
        return () => this.release(files);
      },
    }, req);
  }

  async cancelTrainLoop(loopId: string): Promise<{ cancelled: boolean }> {
    const loop = this.loops.get(loopId);
    if (!loop) return { cancelled: false };
    loop.handle.cancel();
    await loop.finished;
    return { cancelled: true };
  }

  /** Train loops running here now, oldest first. */
  trainLoops(): string[] {
    return [...this.loops.keys()];
  }

  /** Resolves when the train loop has ended and its closing event was emitted (at once when it is not running here). */
  async trainLoopSettled(loopId: string): Promise<void> {
    await this.loops.get(loopId)?.finished;
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

  /** Cancels every running experiment and train loop and waits for them to stop; later `start`s are refused. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.active.values()];
    for (const a of all) a.controller.abort();
    const loops = [...this.loops.values()];
    for (const l of loops) l.handle.cancel();
    await Promise.all([...all, ...loops].map((a) => a.finished));
    await this.mass.dispose();
    await this.studies.dispose();
    await this.sandbox.close();
  }

  /** The service's events as LabEvents; the experiment's bookkeeping (active list, claimed files) follows them. */
  private forward(active: Active, e: ExperimentEvent): void {
    switch (e.type) {
      case 'started':
        active.experimentId = e.experimentId;
        active.done = e.done;
        active.total = e.total;
        this.active.set(e.experimentId, active);
        for (const file of active.files) this.claimed.set(file, `experiment ${e.experimentId}`);
        this.emit({ type: 'experiment', experimentId: e.experimentId, status: 'running', done: e.done, total: e.total, ...(active.notes.length > 0 && { message: active.notes.join('; ') }) });
        return;
      case 'node': {
        const { type: _t, ...rest } = e;
        this.emit({ type: 'node', ...rest });
        return;
      }
      case 'run': {
        if (e.status !== 'cancelled') active.done = e.done;
        const { correctRuns: _c, ...rest } = e;
        this.emit(rest);
        return;
      }
      case 'finished': {
        this.release(active.files);
        this.active.delete(e.experimentId);
        const end: LabEvent = { type: 'experiment', experimentId: e.experimentId, status: e.status, done: e.done, total: e.total };
        if (e.message !== undefined) end.message = e.message;
        this.emit(end);
        return;
      }
      default:
        // notes and the halted event: the finished event carries the reason
        return;
    }
  }

  /** Claims `files` for a new experiment or loop (holder label: `experiment <id>`, `train loop <id>`; '' while starting). Errors: BUSY `models`. */
  /**
   * The distinct model files of `config`, each checked (`checkModel`) before anything loads.
   * Errors: ApiError BAD_REQUEST of `method`, naming the request field that chose the bad file.
   */
  private async checkFiles(config: ModelConfig, fieldOf: ReadonlyMap<string, { field: ModelRequestField; role?: string }>, method: string): Promise<string[]> {
    const files = [...new Set(Object.values(config.models))];
    const paths = this.options.modelPaths;
    if (paths) {
      for (const file of files) {
        const at = fieldOf.get(file);
        if (at?.field === 'roleVersions') continue; // a version's file comes from the store, not the request
        paths.check(file, method, at ? apiFieldOf(at.field, at.role) : 'models');
      }
      for (const [ref, adapters] of Object.entries(config.loras ?? {})) {
        const role = Object.entries(config.roleModels ?? {}).find(([, r]) => r === ref)?.[0];
        for (const a of adapters) paths.check(a.path, method, role ? `roleLora.${role}` : 'roleLora');
      }
    }
    for (const file of files) {
      try {
        await this.checkModel(file);
      } catch (err) {
        const at = fieldOf.get(file);
        throw new ApiError('BAD_REQUEST', `${method}: ${err instanceof Error ? err.message : String(err)}`, method, at && apiFieldOf(at.field, at.role), { cause: err });
      }
    }
    return files;
  }

  private claim(files: string[], method: string, holder = ''): void {
    for (const file of files) {
      const holder = this.claimed.get(file);
      if (holder !== undefined) {
        throw new ApiError('BUSY', `${method}: model ${file} is in use by ${holder === '' ? 'an experiment being started' : holder}; wait for it or cancel it`, method, 'models');
      }
    }
    for (const file of files) this.claimed.set(file, holder);
  }

  private release(files: string[]): void {
    for (const file of files) this.claimed.delete(file);
  }

  private emit(event: LabEvent): void {
    try {
      this.options.emit(event);
    } catch {
      // a broken listener must not break the run
    }
  }
}
