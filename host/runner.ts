import path from 'node:path';
import { ApiError, type ActiveRun, type LabEvent, type StartRunRequest } from '../core/api/index.ts';
import { executePending } from '../core/experiments/index.ts';
import { FaultInjector, FaultSpecError, parseFaultSpec, type FaultSpec } from '../core/faults/index.ts';
import type { ExperimentId, NodeId } from '../core/ids.ts';
import type { ModelProvider } from '../core/model/index.ts';
import { computeWorkflowHash, type Store } from '../core/store/index.ts';
import { DatasetError, getDataset, resolveDataDir, type Dataset, type DatasetLocation, type Task } from '../core/tasks/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import type { TraceSink } from '../core/trace/index.ts';
import { formatIssue, parseWorkflow, SpecError, type Graph } from '../core/workflow/index.ts';
import { llamaProvider, withFingerprints, type ModelConfig } from '../cli/compose.ts';

/** A provider the runner can pre-load (node-llama-cpp's loads every model file on `load()`). */
export type LoadableProvider = ModelProvider & { load?(ref?: string): Promise<unknown> };

/** Options of {@link LabRunner}. */
export interface LabRunnerOptions {
  /** The open store experiments are written to (the runner never closes it). */
  store: Store;
  /** Receives every LabEvent, in order per experiment. Must not throw (a throw is ignored). */
  emit: (event: LabEvent) => void;
  /** Where datasets are read (`dataDir`, else `<sharedDir>/data`; see core/tasks `resolveDataDir`). */
  datasets?: DatasetLocation;
  /** Relative `models.<ref>.path` entries of a workflow resolve against this folder. */
  modelDir: string;
  /** Builds the model provider of a run. Default: node-llama-cpp (`llamaProvider` of cli/compose.ts). */
  createProvider?: (config: ModelConfig) => Promise<LoadableProvider>;
  /** Checks a model file before anything loads; throws an Error naming the file. Default: `readGgufInfo`. */
  checkModel?: (file: string) => Promise<unknown>;
}

interface Active {
  experimentId: ExperimentId;
  done: number;
  total: number;
  startedAt: number;
  controller: AbortController;
  /** The model files this experiment holds (one experiment per model file at a time). */
  files: string[];
  finished: Promise<void>;
}

const M = 'startRun';

/**
 * Runs experiments in the background for the lab (desktop app, `flowlab serve`): validates a
 * request, records the experiment exactly as `flowlab run` / `blame-eval` would (so `flowlab
 * resume` and `replay` work on it), runs its tasks with `executePending`, and reports progress as
 * `LabEvent`s.
 *
 * Concurrency: several experiments may run at once, but a model file is used by one experiment
 * at a time (a second `start` naming it is refused with `BUSY`), since each experiment loads its
 * own copy of its models and two runs on one CPU only slow each other down.
 */
export class LabRunner {
  private readonly active = new Map<string, Active>();
  /** Model files claimed by experiments being started or running. */
  private readonly claimed = new Map<string, string>();
  private readonly tools = defaultTools();
  private readonly createProvider: (config: ModelConfig) => Promise<LoadableProvider>;
  private readonly checkModel: (file: string) => Promise<unknown>;
  private disposed = false;

  constructor(private readonly options: LabRunnerOptions) {
    this.createProvider = options.createProvider ?? llamaProvider;
    this.checkModel =
      options.checkModel ??
      (async (file) => {
        const { readGgufInfo } = await import('../models/llama/index.ts');
        return readGgufInfo(file);
      });
  }

  /**
   * Validates `req`, loads its models, creates the experiment and starts it in the background.
   * Resolves with the experiment id once it runs; the `experiment` event with status `running`
   * is emitted before that.
   *
   * Experiment record: kind `run`, or `blame-eval` with `config.simulated: true` when `inject` is
   * given; `config` = `{offset, dataDir, models: ModelConfig (with fingerprints), inject?,
   * simulated?, source: 'lab'}`, the shape `flowlab run` / `blame-eval` write.
   *
   * Errors (ApiError, method `startRun`, field named): `BAD_REQUEST` for an invalid workflow (the
   * message lists every located issue), an unknown dataset or split, an offset past the split, a
   * bad fault spec or one naming an unknown role or node, a role without a model, an unknown
   * role in `models.roles`, a missing or invalid model file (named); `UNAVAILABLE` when the
   * dataset's files are absent or the runner is disposed; `BUSY` when a model file is in use.
   */
  async start(req: StartRunRequest): Promise<{ experimentId: string }> {
    if (this.disposed) throw new ApiError('UNAVAILABLE', `${M}: the lab is shutting down`, M);
    const graph = this.parse(req.workflowText);
    const { dataset, tasks } = this.loadTasks(req);
    const specs = this.faultSpecs(graph, req.inject ?? []);
    const { config, fieldOf } = this.resolveModels(graph, req);

    const files = [...new Set(Object.values(config.models))];
    for (const file of files) {
      try {
        await this.checkModel(file);
      } catch (err) {
        throw new ApiError('BAD_REQUEST', `${M}: ${err instanceof Error ? err.message : String(err)}`, M, fieldOf.get(file), { cause: err });
      }
    }
    this.claim(files);
    let provider: LoadableProvider | undefined;
    try {
      provider = await this.createProvider(config);
      await provider.load?.();
    } catch (err) {
      await provider?.dispose().catch(() => {});
      this.release(files);
      throw new ApiError('BAD_REQUEST', `${M}: ${err instanceof Error ? err.message : String(err)}`, M, 'models', { cause: err });
    }

    const offset = req.offset ?? 0;
    const simulated = specs.length > 0;
    let experimentId: ExperimentId;
    try {
      const exp = this.options.store.createExperiment({
        kind: simulated ? 'blame-eval' : 'run',
        workflowName: graph.name,
        workflowYaml: req.workflowText,
        workflowHash: computeWorkflowHash(req.workflowText),
        dataset: dataset.name,
        split: req.split,
        limit: req.limit,
        seed: req.seed,
        config: {
          offset,
          dataDir: resolveDataDir(this.options.datasets ?? {}),
          models: withFingerprints(config),
          ...(simulated ? { inject: req.inject, simulated: true } : {}),
          source: 'lab',
        },
        tasks: tasks.map((t) => ({ taskIndex: t.index - offset, taskId: t.id, input: t.input, expected: t.expected })),
      });
      experimentId = exp.id;
    } catch (err) {
      await provider.dispose().catch(() => {});
      this.release(files);
      throw err;
    }

    const active: Active = {
      experimentId,
      done: 0,
      total: tasks.length,
      startedAt: Date.now(),
      controller: new AbortController(),
      files,
      finished: Promise.resolve(),
    };
    this.active.set(experimentId, active);
    for (const file of files) this.claimed.set(file, experimentId);
    this.emit({ type: 'experiment', experimentId, status: 'running', done: 0, total: tasks.length });
    active.finished = this.execute(active, graph, dataset, provider, specs, config, req.seed);
    return { experimentId };
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

  /** Cancels every running experiment and waits for them to stop; later `start`s are refused. Idempotent. */
  async dispose(): Promise<void> {
    this.disposed = true;
    const all = [...this.active.values()];
    for (const a of all) a.controller.abort();
    await Promise.all(all.map((a) => a.finished));
  }

  private async execute(active: Active, graph: Graph, dataset: Dataset, inner: LoadableProvider, specs: FaultSpec[], config: ModelConfig, seed: number): Promise<void> {
    const { store } = this.options;
    const { experimentId, controller } = active;
    const roleOf = new Map(graph.nodes.map((n) => [n.id, n.role]));
    const injector = specs.length ? new FaultInjector(specs, seed, (id: NodeId) => roleOf.get(id)) : undefined;
    const provider = injector ? injector.wrapProvider(inner) : inner;
    const tools = injector ? injector.wrapTools(this.tools) : this.tools;
    /** The run whose nodes are running and that is not stored yet. */
    let inFlight: { runId: string; taskIndex: number } | undefined;
    const taskIndexOf = (runId: string) => Number(runId.slice(experimentId.length + 1));

    const sink: TraceSink = {
      nodeStarted: ({ runId, nodeId, attempt }) => {
        inFlight = { runId, taskIndex: taskIndexOf(runId) };
        this.emit({ type: 'node', experimentId, runId, nodeId, attempt, phase: 'started' });
      },
      nodeFinished: (e) => {
        const event: Extract<LabEvent, { type: 'node' }> = { type: 'node', experimentId, runId: e.runId, nodeId: e.nodeId, attempt: e.attempt, phase: 'finished', status: e.status };
        if (e.failureClass) event.failureClass = e.failureClass;
        if (injector?.faultAt(String(taskIndexOf(e.runId)), e.nodeId, e.attempt)) event.simulated = true;
        this.emit(event);
      },
    };

    let status: 'completed' | 'cancelled' | 'failed' = 'completed';
    let message: string | undefined;
    try {
      active.done = active.total - store.pendingTasks(experimentId).length;
      const res = await executePending({
        store,
        experimentId,
        graph,
        grader: dataset.grader,
        provider,
        tools,
        seed,
        signal: controller.signal,
        modelFor: (role) => config.roleModels[role] ?? 'default',
        sink,
        faultAt: injector ? (k, n, a) => injector.faultAt(k, n, a) : undefined,
        onRun: (run, done, total) => {
          active.done = done;
          inFlight = undefined;
          this.emit({ type: 'run', experimentId, runId: run.runId, taskIndex: run.taskIndex, done, total, status: run.status, correct: run.correct });
        },
      });
      if (res.cancelled) status = 'cancelled';
      else if (res.halted) {
        // A model that cannot be found or loaded: the task stays pending; `flowlab resume` finishes it.
        status = 'failed';
        message = res.halted;
      }
    } catch (err) {
      status = 'failed';
      message = err instanceof Error ? err.message : String(err);
    }
    if (status === 'cancelled' && inFlight) {
      this.emit({ type: 'run', experimentId, runId: inFlight.runId, taskIndex: inFlight.taskIndex, done: active.done, total: active.total, status: 'cancelled', correct: false });
    }
    try {
      store.finishExperiment(experimentId, status);
    } catch (err) {
      if (status !== 'failed') message = `could not record the end of the experiment: ${err instanceof Error ? err.message : String(err)}`;
      status = 'failed';
    }
    await inner.dispose().catch(() => {});
    this.release(active.files);
    this.active.delete(experimentId);
    const end: LabEvent = { type: 'experiment', experimentId, status, done: active.done, total: active.total };
    if (message !== undefined) end.message = message;
    this.emit(end);
  }

  private parse(text: string): Graph {
    try {
      return parseWorkflow(text, { tools: this.tools }).graph;
    } catch (err) {
      if (err instanceof SpecError) {
        const n = err.issues.length;
        throw new ApiError('BAD_REQUEST', `${M}: the workflow has ${n} issue${n === 1 ? '' : 's'}: ${err.issues.map(formatIssue).join('; ')}`, M, 'workflowText', { cause: err });
      }
      throw err;
    }
  }

  private loadTasks(req: StartRunRequest): { dataset: Dataset; tasks: Task[] } {
    const offset = req.offset ?? 0;
    let dataset: Dataset;
    let tasks: Task[];
    try {
      dataset = getDataset(req.dataset, this.options.datasets ?? {});
      tasks = dataset.load({ split: req.split, limit: req.limit, offset });
    } catch (err) {
      if (err instanceof DatasetError) {
        const field = err.code === 'UNKNOWN_SPLIT' ? 'split' : err.code === 'BAD_OPTIONS' ? 'limit' : 'dataset';
        const code = err.code === 'DATASET_NOT_FOUND' ? 'UNAVAILABLE' : err.code === 'BAD_LINE' ? 'INTERNAL' : 'BAD_REQUEST';
        throw new ApiError(code, `${M}: ${err.message}`, M, field, { cause: err });
      }
      throw err;
    }
    if (tasks.length === 0) {
      throw new ApiError('BAD_REQUEST', `${M}: no tasks: ${dataset.name}/${req.split} has no task at offset ${offset}`, M, 'offset');
    }
    return { dataset, tasks };
  }

  private faultSpecs(graph: Graph, inject: readonly string[]): FaultSpec[] {
    return inject.map((text, i) => {
      let spec: FaultSpec;
      try {
        spec = parseFaultSpec(text);
      } catch (err) {
        if (err instanceof FaultSpecError) throw new ApiError('BAD_REQUEST', `${M}: ${err.message}`, M, `inject.${i}`, { cause: err });
        throw err;
      }
      if (spec.role && !graph.roles.has(spec.role)) {
        throw new ApiError('BAD_REQUEST', `${M}: inject "${text}" names role "${spec.role}", which the workflow does not have (roles: ${[...graph.roles.keys()].join(', ')})`, M, `inject.${i}`);
      }
      if (spec.node && !graph.nodes.some((n) => n.id === spec.node)) {
        throw new ApiError('BAD_REQUEST', `${M}: inject "${text}" names node "${spec.node}", which the workflow does not have`, M, `inject.${i}`);
      }
      return spec;
    });
  }

  /**
   * Which GGUF file each role uses, as `resolveModels` in cli/compose.ts does: a per-role choice
   * (`models.roles`) beats the workflow's `models.<ref>.path` (relative paths resolve against the
   * model folder), which beats `models.default` for roles on the `default` reference.
   */
  private resolveModels(graph: Graph, req: StartRunRequest): { config: ModelConfig; fieldOf: Map<string, string> } {
    const chosen = req.models.roles ?? {};
    const roleNames = [...graph.roles.keys()];
    for (const role of Object.keys(chosen)) {
      if (!graph.roles.has(role as never)) {
        throw new ApiError('BAD_REQUEST', `${M}: a model is chosen for role "${role}", which the workflow does not have (roles: ${roleNames.join(', ')})`, M, `models.roles.${role}`);
      }
    }
    const models: Record<string, string> = {};
    const roleModels: Record<string, string> = {};
    const fieldOf = new Map<string, string>();
    for (const role of graph.roles.values()) {
      const override = chosen[role.name];
      if (override) {
        const ref = `role:${role.name}`;
        models[ref] = path.resolve(override);
        roleModels[role.name] = ref;
        if (!fieldOf.has(models[ref]!)) fieldOf.set(models[ref]!, `models.roles.${role.name}`);
        continue;
      }
      const fromDoc = graph.models.get(role.model)?.path;
      const file = fromDoc !== undefined ? path.resolve(this.options.modelDir, fromDoc) : role.model === 'default' ? req.models.default : undefined;
      if (!file) {
        throw new ApiError('BAD_REQUEST', `${M}: role "${role.name}" has no model: choose a default model or one for role "${role.name}"`, M, 'models.default');
      }
      models[role.model] = path.resolve(file);
      roleModels[role.name] = role.model;
      if (!fieldOf.has(models[role.model]!)) fieldOf.set(models[role.model]!, fromDoc !== undefined ? 'workflowText' : 'models.default');
    }
    const config: ModelConfig = { models, roleModels, gpu: false };
    if (req.threads !== undefined) config.threads = req.threads;
    return { config, fieldOf };
  }

  private claim(files: string[]): void {
    for (const file of files) {
      const holder = this.claimed.get(file);
      if (holder !== undefined) {
        throw new ApiError('BUSY', `${M}: model ${file} is in use by ${holder === '' ? 'an experiment being started' : `experiment ${holder}`}; wait for it or cancel it`, M, 'models');
      }
    }
    for (const file of files) this.claimed.set(file, '');
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
