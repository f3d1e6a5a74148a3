import path from 'node:path';
import { ApiError, type ActiveRun, type DistillCardRequest, type ForkRunRequest, type ForkRunResult, type LabEvent, type LibraryCard, type ResumeRunPayload, type StartRunRequest, type StartTrainLoopRequest } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import { besideDatabase } from './dataFolder.ts';
import { distillInLab, teacherOf } from './distill.ts';
import { forkInLab } from './fork.ts';
import { trainLoopOf, type ExperimentSpec } from '../core/experiments/index.ts';
import { isEndpointRef, type ModelConfig, type ModelProvider } from '../core/model/index.ts';
import { buildExperimentSpec } from '../core/jobs/index.ts';
import { storedModels, type Store } from '../core/store/index.ts';
import { getDataset, resolveDataDir, type DatasetLocation } from '../core/tasks/index.ts';
import { defaultTools, type ToolRegistry } from '../core/tools/index.ts';
import type { CodeSandbox } from '../core/sandbox/index.ts';
import { PyodideSandbox } from '../models/sandbox/index.ts';
import type { Trainer } from '../core/training/index.ts';
import { llamaProvider, loadTrainer } from '../models/factory.ts';
import { verifyModelFiles, withFingerprints } from '../models/resolve.ts';
import type { ModelPaths } from './modelPaths.ts';
import { apiErrorOf, parseRequestWorkflow, requestCards, resolveRequestModels } from './request.ts';
import { MassJobs } from './massJobs.ts';
import { StudyJobs } from './studyJobs.ts';
import { ModelFiles } from './modelFiles.ts';
import { TrainLoopJobs } from './trainLoopJobs.ts';
import { ExperimentJobs } from './experimentJobs.ts';
import { RunningJobs } from './jobs.ts';

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
  /** The lab's list of running jobs every family here joins (host/jobs.ts; default: one of its own over `emit`). */
  running?: RunningJobs;
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
 *
 * The runner maps requests and composes the job families, each in its own file: experiments
 * (host/experimentJobs.ts), train loops (host/trainLoopJobs.ts), MASS jobs (host/massJobs.ts),
 * studies (host/studyJobs.ts), all holding model files through one `ModelFiles`
 * (host/modelFiles.ts); the table of background jobs they share is host/jobs.ts, and every job
 * of every family is on one `RunningJobs` (`running`), announced with the one `job` event.
 */
export class LabRunner {
  /** The model files held by every job family here (one job per file at a time). */
  private readonly files: ModelFiles;
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
  /** Train loops (`startTrainLoop`, a loop's `resumeRun`: host/trainLoopJobs.ts), sharing the model-file claims. */
  readonly loops: TrainLoopJobs;
  /** Experiments (`startRun`, `resumeRun`: host/experimentJobs.ts), sharing the model-file claims. */
  private readonly experiments: ExperimentJobs;
  /** Every running job of every family here, by kind and id (`listJobs`, `cancelJob`). */
  readonly running: RunningJobs;

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
    this.files = new ModelFiles({ checkModel: this.checkModel, ...(options.modelPaths && { modelPaths: options.modelPaths }), disposed: () => this.disposed });
    const running = (this.running = options.running ?? new RunningJobs((e) => this.emit(e)));
    // What background jobs (MASS, studies) need of the runner: a model file confined and checked
    // before it loads (FORBIDDEN / BAD_REQUEST naming `field`), and the shared model-file claims.
    const jobFiles = {
      checkModel: (file: string, method: string, field: string) => this.files.checkOne(file, method, field),
      confine: (ref: string, method: string, field: string) => this.files.confine(ref, method, field),
      claim: (files: string[], method: string, holder: string) => this.files.claim(files, method, holder),
      release: (files: string[]) => this.files.release(files),
      running,
    };
    this.mass = new MassJobs({
      store: options.store, emit: (e) => this.emit(e), tools: this.tools, createProvider: this.createProvider, loadTrainer: options.loadTrainer ?? loadTrainer,
      ...jobFiles,
    });
    const location = options.datasets ?? {};
    this.studies = new StudyJobs({
      store: options.store, emit: (e) => this.emit(e), tools: this.tools, loadTrainer: options.loadTrainer ?? loadTrainer, versionsDir: this.versionsDir,
      models: { create: this.createProvider, fingerprint: withFingerprints, verify: verifyModelFiles },
      datasets: this.datasets,
      dataDir: resolveDataDir(location),
      plansDir: options.studies?.plansDir ?? path.resolve('examples', 'studies'),
      ...(options.studies?.workflowRoots && { workflowRoots: options.studies.workflowRoots }),
      ...jobFiles,
    });
    this.experiments = new ExperimentJobs({ store: options.store, emit: (e) => this.emit(e), tools: this.tools, files: this.files, createProvider: this.createProvider, datasets: this.datasets, running });
    this.loops = new TrainLoopJobs({
      store: options.store, emit: (e) => this.emit(e), tools: this.tools, files: this.files, createProvider: this.createProvider, loadTrainer: options.loadTrainer ?? loadTrainer,
      datasets: this.datasets, location, versionsDir: this.versionsDir, modelDir: options.modelDir, disposed: () => this.disposed, running,
    });
  }

  /** A dataset by name for every job of this lab (start and resume alike), graded with the lab's sandbox: from `dataDir` when given, else the lab's data location. */
  private readonly datasets = (name: string, dataDir?: string) => {
    const location = this.options.datasets ?? {};
    return getDataset(name, dataDir === undefined ? { ...location, sandbox: this.sandbox } : { dataDir, sandbox: this.sandbox });
  };

  /** The versions folder a runner over `store` uses (see `LabRunnerOptions.versionsDir`), absolute. */
  static versionsDirOf(store: Store, versionsDir?: string): string {
    const db = store.file;
    return path.resolve(versionsDir ?? besideDatabase(db, ['flowlab-versions']));
  }

  /**
   * Holds one model file for a holder outside the job families (the playground's generation):
   * ApiError `BUSY` of `method` (field `models`) naming the job that has it; returns the release.
   */
  holdModelFile(file: string, method: string, holder: string): () => void {
    this.files.claim([file], method, holder);
    return () => this.files.release([file]);
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
    if (req.kind === 'rollouts' && req.inject?.length) throw new ApiError('BAD_REQUEST', `${M}: inject (SIMULATED faults) is for a blame evaluation; rollouts do not take it`, M, 'inject');

    const files = await this.files.checkConfig(config, fieldOf, M);
    const location = this.options.datasets ?? {};
    // The request's fields as the spec's (the CLI builds the same input): the kind's schema refuses a field the kind does not use.
    let spec: ExperimentSpec;
    try {
      spec = buildExperimentSpec({
        kind: req.inject?.length ? 'blame-eval' : req.kind ?? 'run',
        workflow: { graph, text: req.workflowText },
        dataset: req.dataset, split: req.split, limit: req.limit, offset: req.offset ?? 0, seed: req.seed,
        dataDir: resolveDataDir(location), models: config, source: 'lab', parallel: req.parallel,
        inject: req.inject?.length ? req.inject : undefined, runs: req.runs,
        group: req.group, temperature: req.temperature, mode: req.mode, recordTokens: req.kind === 'rollouts' ? Boolean(req.recordTokens) : req.recordTokens || undefined,
        cards, roleVersions: req.roleVersions && Object.keys(req.roleVersions).length ? req.roleVersions : undefined,
      });
    } catch (err) {
      throw apiErrorOf(err, M);
    }

    return { experimentId: await this.experiments.launch(spec, files, M, undefined, notes) };
  }

  /**
   * Resumes a stored experiment in the background, as `flowlab resume` does (the experiment
   * service's `resume`): its pending tasks only, with the recorded models (moved files given
   * again in `models`, checked against their fingerprints), seeds, faults and cards. Resolves
   * with the tasks left (`pending: 0`: nothing to do, nothing started).
   * Errors (ApiError, method `resumeRun`): `BAD_REQUEST` (a model file missing or changed, a
   * hint card gone, a running experiment without `force`, a model that fails to load),
   * `UNAVAILABLE` (disposed), `BUSY` (a model file in use, or the experiment runs here),
   * `FORBIDDEN` (a given or recorded model file outside a confined host's model folders, or a
   * recorded endpoint with `key=` / `keychain=` there: host/modelPaths.ts `checkModel`).
   */
  async resume(req: ResumeRunPayload): Promise<{ experimentId: string; pending: number; loopId?: string }> {
    const R = 'resumeRun';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${R}: the lab is shutting down`, R);
    const paths = this.options.modelPaths;
    if (paths) {
      if (req.models?.default) paths.checkModel(req.models.default, R, 'models.default');
      for (const [role, file] of Object.entries(req.models?.roles ?? {})) paths.checkModel(file, R, `models.roles.${role}`);
    }
    if (trainLoopOf(this.options.store, req.experimentId)) return this.loops.resume(req);
    if (this.experiments.has(req.experimentId)) throw new ApiError('BUSY', `${R}: experiment ${req.experimentId} is running here`, R, 'experimentId');
    const exp = this.options.store.getExperiment(req.experimentId);
    const stored = storedModels(exp);
    // The recorded models too: a database made elsewhere may name any path, or an endpoint with a key.
    for (const file of Object.values(stored?.models ?? {})) paths?.checkModel(file, R, 'experimentId');
    const files = [...new Set([...Object.values(stored?.models ?? {}), ...(req.models?.default ? [req.models.default] : []), ...Object.values(req.models?.roles ?? {})])];
    const spec: ExperimentSpec = { kind: 'resume', experimentId: req.experimentId, ...(req.models && { models: req.models }), ...(req.force && { force: true }) };
    let total = 0;
    let done = 0;
    const id = await this.experiments.launch(spec, files, R, (e) => {
      if (e.type === 'started') ({ total, done } = e);
    });
    return { experimentId: id, pending: total - done };
  }

  /** Starts `flowlab train-loop` in the background: host/trainLoopJobs.ts `start` (its errors and events). */
  startTrainLoop(req: StartTrainLoopRequest): Promise<{ loopId: string }> {
    if (this.disposed) return Promise.reject(new ApiError('UNAVAILABLE', 'startTrainLoop: the lab is shutting down', 'startTrainLoop'));
    return this.loops.start(req);
  }

  /**
   * Distils a hint card as `flowlab distill` does (host/distill.ts), holding the teacher's model
   * file meanwhile (`BUSY` for others, as an experiment holds its files).
   */
  async distill(req: DistillCardRequest): Promise<LibraryCard> {
    const D = 'distillCard';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${D}: the lab is shutting down`, D);
    const { store } = this.options;
    const { file } = teacherOf(store, this.tools, req);
    await this.files.checkOne(file, D, req.teacher ? 'teacher' : 'experimentId');
    return distillInLab({
      store, tools: this.tools,
      loadProvider: async (config) => {
        const provider = await this.createProvider(config);
        await provider.load?.();
        return provider;
      },
      claim: (f) => {
        this.files.claim([f], D, `a card being distilled`);
        return () => this.files.release([f]);
      },
    }, req);
  }

  /**
   * Forks a stored run as `flowlab fork` does (host/fork.ts): its models checked by the host's rule
   * (files confined to the model folders; on a confined host no endpoint with a key:
   * host/modelPaths.ts `checkModel`, `FORBIDDEN` naming `runId`) and its files held meanwhile (`BUSY` for others).
   */
  async fork(req: ForkRunRequest): Promise<ForkRunResult> {
    const F = 'forkRun';
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${F}: the lab is shutting down`, F);
    return forkInLab({
      store: this.options.store, tools: this.tools, createProvider: this.createProvider,
      claim: async (refs) => {
        // Every model the fork would use, endpoints included (a stored run may record one with a key), by the one host rule.
        for (const f of refs) this.options.modelPaths?.checkModel(f, F, f === req.roleModel?.path ? 'roleModel.path' : 'runId');
        const files = refs.filter((f) => !isEndpointRef(f));
        for (const f of files) {
          await this.checkModel(f).catch((err: unknown) => {
            throw new ApiError('BAD_REQUEST', `${F}: ${errorMessage(err)}`, F, 'runId', { cause: err });
          });
        }
        this.files.claim(files, F, 'a fork being run');
        return () => this.files.release(files);
      },
    }, req);
  }

  /**
   * Stops a train loop after the iteration in flight (the versions written so far stay
   * recorded; the held-out evaluation after is skipped). Resolves once it has stopped and its
   * closing `trainLoop` event was emitted. `{cancelled: false}` when it is not running here.
   */
  cancelTrainLoop(loopId: string): Promise<{ cancelled: boolean }> {
    return this.loops.cancel(loopId);
  }

  /** Train loops running here now, oldest first. */
  trainLoops(): string[] {
    return this.loops.running();
  }

  /** Resolves when the train loop has ended and its closing event was emitted (at once when it is not running here). */
  trainLoopSettled(loopId: string): Promise<void> {
    return this.loops.settled(loopId);
  }

  /** Cancels a running experiment (host/experimentJobs.ts `cancel`). */
  cancel(experimentId: string): Promise<{ cancelled: boolean }> {
    return this.experiments.cancel(experimentId);
  }

  /** Experiments running now, oldest first: id, runs stored (`done`) of `total`, start time (epoch ms). */
  list(): ActiveRun[] {
    return this.experiments.list();
  }

  /** Resolves when the experiment's background run has ended (at once when it is not running here). */
  settled(experimentId: string): Promise<void> {
    return this.experiments.settled(experimentId);
  }

  /** Cancels every running experiment and train loop and waits for them to stop; later `start`s are refused. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([this.experiments.dispose(), this.loops.dispose()]);
    await this.mass.dispose();
    await this.studies.dispose();
    await this.sandbox.close();
  }

  private emit(event: LabEvent): void {
    try {
      this.options.emit(event);
    } catch {
      // a broken listener must not break the run
    }
  }
}
