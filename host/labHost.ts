import path from 'node:path';
import type { LabEvent, LabHost } from '../core/api/index.ts';
import type { Store } from '../core/store/index.ts';
import { isPrivateDatabase } from './dataFolder.ts';
import { listDatasets } from './datasets.ts';
import { listExamples } from './examples.ts';
import { ModelPaths, type ModelPathRoots } from './modelPaths.ts';
import { ModelCatalog, readGgufHeader, testGeneration, type ReadModelHeader } from './models.ts';
import { llamaProvider } from '../models/factory.ts';
import { LabRunner, type LabRunnerOptions, type LoadableProvider } from './runner.ts';
import { WorkflowFolder } from './workflowFiles.ts';
import { watchStore } from './storeWatch.ts';
import type { ModelConfig } from '../core/model/index.ts';
import { ApiError } from '../core/api/index.ts';
import { llamaBinaryStatus, type LlamaBinaryStatus } from '../models/llama/binary.ts';
import { ModelDownloads } from './downloads.ts';
import { Playground } from './playground.ts';
import { asJobApi, LabJobs, RunningJobs } from './jobs.ts';
import { builtinJobKinds, type JobRegistry } from '../core/jobs/index.ts';

/** Options of {@link createLabHost}. */
export interface LabHostOptions {
  /** The open store (the host never closes it; close it after `dispose()`). */
  store: Store;
  /**
   * The database file (`:memory:` allowed). The list of models added by path is kept next to
   * it, in `<dbFile>.models.json` (in memory only for `:memory:`).
   */
  dbFile: string;
  /** The model folder: its `*.gguf` files are listed; relative model paths in workflows resolve here. */
  modelDir: string;
  /** The folder of example workflows (`examples/` of the app). */
  examplesDir: string;
  /** The shared folder whose `data/` holds the datasets. Default: `$FLOWLAB_SHARED`, else `<cwd>/../shared`. */
  sharedDir?: string;
  /** A data folder to use instead of `<sharedDir>/data`. */
  dataDir?: string;
  /**
   * The user's data folder (the desktop app's, or the folder of `flowlab serve`'s database): its
   * `datasets/` is the data folder when no shared folder is named or found (core/tasks/paths.ts).
   */
  userDataDir?: string;
  /** Receives every LabEvent (SSE fan-out, the utility process's port, tests). */
  emit: (event: LabEvent) => void;
  /** @internal tests: the provider factory (default node-llama-cpp) and model checks. */
  createProvider?: (config: ModelConfig) => Promise<LoadableProvider>;
  /** @internal tests: the model file check before a run (default `readGgufInfo`). */
  checkModel?: (file: string) => Promise<unknown>;
  /** Where train loops write their versions. Default: `flowlab-versions/` beside `dbFile` (LabRunner's `versionsDir`). */
  versionsDir?: string;
  /** @internal tests: the trainer of train loops (default TensorFlow.js). */
  loadTrainer?: LabRunnerOptions['loadTrainer'];
  /** The job kinds `startJob` / `resumeJob` / `listJobKinds` serve (host/jobs.ts `LabJobs`). Default: core/jobs `builtinJobKinds()`. */
  jobKinds?: JobRegistry;
  /** @internal tests: the code sandbox of code datasets and `code_runner` (LabRunner's `sandbox`; default a PyodideSandbox). */
  sandbox?: LabRunnerOptions['sandbox'];
  /** @internal tests: the GGUF header reader of the catalogue. */
  readHeader?: ReadModelHeader;
  /**
   * Confines every model path a request names (`addModel`, `testModel`, `startRun`,
   * `resumeRun`, `startTrainLoop`, a workflow's `models.<ref>.path`) to `modelDir`, the versions
   * folder and these folders and files (host/modelPaths.ts); anything else is `FORBIDDEN`
   * before it is read, and models added earlier outside them are not listed; an endpoint
   * reference with `key=` / `keychain=`, however a request reaches one, is `FORBIDDEN` too
   * (host/modelPaths.ts `checkModel`). `flowlab serve` always confines. Undefined: unconfined (the desktop app, whose user picks files).
   */
  modelRoots?: ModelPathRoots;
  /** The workflows folder the editor saves to and opens from (host/workflowFiles.ts). Default: `flowlab-workflows/` beside `dbFile`. */
  workflowsDir?: string;
  /**
   * How often the store is checked for writes by anyone (the CLI included), pushing a `stored`
   * event when something changed (host/storeWatch.ts), in ms. Default 0: off (`flowlab serve`
   * and the desktop app's worker pass `STORE_WATCH_MS`).
   */
  watchStoreMs?: number;
  /**
   * Whether node-llama-cpp's llama.cpp binary for this machine is installed (models/llama/binary.ts;
   * tests inject a missing one). When it is not, the models are listed with `unavailable` and
   * the calls that would load one (`testModel`, `startRun`, `resumeRun`, `startTrainLoop`) answer
   * `UNAVAILABLE` with the message, instead of failing inside. Default: `llamaBinaryStatus()`, checked once.
   */
  llamaBinary?: () => LlamaBinaryStatus;
  /**
   * Model downloads into `modelDir` (host/downloads.ts): `allowPrivateHosts` lets them reach
   * hosts on this machine or a private network (default refused with FORBIDDEN; `flowlab serve
   * --allow-private-downloads`, tests); `fetch` (@internal tests) replaces the global fetch.
   */
  downloads?: { allowPrivateHosts?: boolean; fetch?: typeof fetch };
}

/** The lab host plus its lifecycle. */
export interface LabHostHandle extends LabHost {
  /** The runner, for hosts and tests that wait on an experiment (`runner.settled(id)`). */
  readonly runner: LabRunner;
  /** The model downloads, for tests that wait on one (`downloads.settled(id)`). */
  readonly downloads: ModelDownloads;
  /** The Models view's playground (`startGeneration`), for tests that wait on a generation (`playground.settled(id)`). */
  readonly playground: Playground;
  /** Jobs of any registered kind (`startJob` and friends), for tests that wait on one (`jobs.settled(id)`). */
  readonly jobs: LabJobs;
  /** Every running job of every family (`listJobs`, `cancelJob`; host/jobs.ts). */
  readonly running: RunningJobs;
  /** Cancels running experiments and waits for them to stop (the store stays open). Idempotent. */
  dispose(): Promise<void>;
}

/** Completion tokens of `testModel` when the payload gives none. */
export const DEFAULT_TEST_TOKENS = 24;

/**
 * The node-side lab both the Electron utility process and `flowlab serve` use: examples,
 * datasets, the model catalogue, test generations and the background runner, over one open
 * store. Payloads are expected validated (by `createHandlers`).
 */
export function createLabHost(options: LabHostOptions): LabHostHandle {
  const datasets = {
    ...(options.sharedDir !== undefined ? { sharedDir: options.sharedDir } : {}),
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.userDataDir !== undefined ? { userDataDir: options.userDataDir } : {}),
  };
  const catalog = new ModelCatalog({
    modelDir: options.modelDir,
    ...(isPrivateDatabase(options.dbFile) ? {} : { addedFile: `${path.resolve(options.dbFile)}.models.json` }),
    ...(options.readHeader ? { readHeader: options.readHeader } : {}),
  });
  const versionsDir = LabRunner.versionsDirOf(options.store, options.versionsDir);
  const roots = options.modelRoots;
  const paths = new ModelPaths(roots && { folders: [options.modelDir, versionsDir, ...roots.folders], files: roots.files ?? [] });
  // One list of running jobs for every family here: experiments, train loops, MASS, studies, downloads and `startJob` kinds.
  const running = new RunningJobs(options.emit);
  const runner = new LabRunner({
    running,
    modelPaths: paths,
    store: options.store,
    emit: options.emit,
    datasets,
    modelDir: path.resolve(options.modelDir),
    studies: { plansDir: path.join(options.examplesDir, 'studies'), ...(roots && { workflowRoots: [options.examplesDir, options.workflowsDir ?? WorkflowFolder.beside(options.dbFile)] }) },
    ...(options.createProvider ? { createProvider: options.createProvider } : {}),
    ...(options.checkModel ? { checkModel: options.checkModel } : {}),
    ...(options.versionsDir !== undefined ? { versionsDir: options.versionsDir } : {}),
    ...(options.loadTrainer ? { loadTrainer: options.loadTrainer } : {}),
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
  });
  const watchMs = options.watchStoreMs ?? 0;
  const watch = watchMs > 0 ? watchStore(options.store, options.emit, watchMs) : null;
  const workflows = new WorkflowFolder(options.workflowsDir ?? WorkflowFolder.beside(options.dbFile));
  let binary: LlamaBinaryStatus | undefined;
  const jobs = new LabJobs({ registry: options.jobKinds ?? builtinJobKinds(), emit: options.emit, running, deps: { store: options.store } });
  const downloads = new ModelDownloads({
    modelDir: options.modelDir, emit: options.emit, running,
    ...(options.downloads?.allowPrivateHosts && { allowPrivateHosts: true }), ...(options.downloads?.fetch && { fetch: options.downloads.fetch }),
  });
  const binaryStatus = () => (binary ??= (options.llamaBinary ?? llamaBinaryStatus)());
  const playground = new Playground({
    emit: options.emit,
    createProvider: options.createProvider ?? llamaProvider,
    checkModel: options.readHeader ?? readGgufHeader,
    modelPaths: paths,
    hold: (file, method, holder) => runner.holdModelFile(file, method, holder),
    needLocalModels: (method) => {
      const status = binaryStatus();
      if (!status.ok) throw new ApiError('UNAVAILABLE', `${method}: local models are unavailable: ${status.message}`, method);
    },
  });
  /** Rejects with `UNAVAILABLE` (the binary's message) before `method` would load a local model. */
  const needLocalModels = async <T>(method: string, then: () => Promise<T>): Promise<T> => {
    const status = binaryStatus();
    if (!status.ok) throw new ApiError('UNAVAILABLE', `${method}: local models are unavailable: ${status.message}`, method);
    return then();
  };
  /**
   * `resumeJob` of an experiment kind or a train loop, routed to `resumeRun` (as `flowlab resume`):
   * the stored row must be of that kind. Errors (ApiError, method `resumeJob`): NOT_FOUND naming
   * `id`, BAD_REQUEST naming `kind` (the id is another kind's), and `resumeRun`'s own.
   */
  const resumeThroughRun = async (kind: string, id: string): Promise<{ kind: string; id: string; pending?: number }> => {
    const M = 'resumeJob';
    if (kind === 'train-loop') {
      if (!options.store.trainLoops.find(id)) throw new ApiError('NOT_FOUND', `${M}: no train loop ${id}`, M, 'id');
    } else {
      const row = options.store.findExperiment(id);
      if (!row) throw new ApiError('NOT_FOUND', `${M}: no experiment ${id}`, M, 'id');
      if (row.kind !== kind) throw new ApiError('BAD_REQUEST', `${M}: experiment ${id} is a ${row.kind} experiment, not a ${kind} one`, M, 'kind');
    }
    const r = await needLocalModels(M, () => runner.resume({ experimentId: id }));
    return r.loopId ? { kind: 'train-loop', id: r.loopId, pending: r.pending } : { kind, id: r.experimentId, pending: r.pending };
  };
  return {
    runner,
    downloads,
    playground,
    listExamples: () => listExamples(options.examplesDir),
    listDatasets: () => listDatasets(datasets),
    listModels: async () => {
      const status = binaryStatus();
      const entries = (await catalog.list()).filter((m) => paths.allows(m.path));
      return status.ok ? entries : entries.map((m) => ({ ...m, unavailable: status.message! }));
    },
    addModel: ({ path: file }) => {
      paths.check(file, 'addModel', 'path');
      return catalog.add(file);
    },
    testModel: ({ path: file, prompt, maxTokens }) => {
      paths.check(file, 'testModel', 'path');
      return needLocalModels('testModel', () => testGeneration(file, prompt, maxTokens ?? DEFAULT_TEST_TOKENS));
    },
    startRun: (req) => needLocalModels('startRun', () => runner.start(req)),
    cancelRun: ({ experimentId }) => runner.cancel(experimentId),
    resumeRun: (payload) => needLocalModels('resumeRun', () => runner.resume(payload)),
    activeRuns: () => runner.list(),
    startTrainLoop: (req) => needLocalModels('startTrainLoop', () => runner.startTrainLoop(req)),
    cancelTrainLoop: ({ loopId }) => runner.cancelTrainLoop(loopId),
    listWorkflowFiles: () => workflows.list(),
    readWorkflowFile: (payload) => workflows.read(payload),
    saveWorkflowFile: (payload) => workflows.save(payload),
    dispose: () => {
      watch?.stop();
      return Promise.all([downloads.dispose(), playground.dispose(), runner.dispose(), jobs.dispose()]).then(() => {});
    },
    startEvolve: (req) => runner.mass.startEvolve(req),
    startRank: (req) => runner.mass.startRank(req),
    startRsi: (req) => runner.mass.startRsi(req),
    cancelMass: ({ jobId }) => runner.mass.cancel(jobId),
    distillCard: (req) => runner.distill(req),
    forkRun: (req) => needLocalModels('forkRun', () => runner.fork(req)),
    startDownload: (req) => downloads.start(req),
    cancelDownload: ({ downloadId }) => downloads.cancel(downloadId),
    startGeneration: (req) => playground.start(req),
    cancelGeneration: ({ generationId }) => playground.cancel(generationId),
    listStudyPlans: () => runner.studies.plans(),
    startStudy: (req) => needLocalModels('startStudy', () => runner.studies.start(req)),
    cancelStudy: ({ studyId }) => runner.studies.cancel(studyId),
    jobs,
    running,
    listJobKinds: () => jobs.kinds(),
    listJobs: () => running.list(),
    startJob: ({ kind, spec }) => asJobApi('startJob', () => jobs.start(kind, spec)),
    cancelJob: ({ kind, id }) => running.cancel(kind, id),
    resumeJob: ({ kind, id }) => (jobs.kinds().find((k) => k.name === kind)?.resumeVia?.method === 'resumeRun' ? resumeThroughRun(kind, id) : asJobApi('resumeJob', () => jobs.resume(kind, id))),
  };
}
