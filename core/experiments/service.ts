/**
 * The experiment service: one way to start, run, cancel and finish an experiment of any kind
 * (run, blame-eval, rollouts, resume), shared by the CLI and the lab. It creates the experiment
 * with its planned task list, loads the models through the model port before anything is
 * recorded, runs the pending tasks (executePending), wires hint cards, SIMULATED faults and
 * rollout sampling, halts on a model that fails mid-run, stores rollout advantages, marks the
 * end, and reports typed progress events. Faces only map their input to a spec and listen.
 */
import { recordExperiment } from '../repro/experiment.ts';
import { assertCardsAvailable, cardHooksFor } from '../distill/hooks.ts';
import { labelClassOf } from '../guards/index.ts';
import { errorMessage } from '../errors.ts';
import { defaultParallel } from '../schedule/index.ts';
import type { RolloutsConfig } from '../rollouts/store.ts';
import type { RoleName } from '../ids.ts';
import type { ModelConfig } from '../model/config.ts';
import { loadedProvider, type ModelProvider } from '../model/provider.ts';
import { computeWorkflowHash } from '../store/ids.ts';
import type { ExperimentRow } from '../store/types.ts';
import { missingConfigField, storedModels } from '../store/config.ts';
import { getDataset } from '../tasks/registry.ts';
import type { Dataset, Task } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { blameReportOf } from '../faults/experimentFaults.ts';
import { planOfKind, type KindState } from './kinds.ts';
import { executeExperiment, type Prepared } from './lifecycle.ts';
import {
  ExperimentSpecError,
  type ExperimentEvent,
  type ExperimentHandle,
  type ExperimentOutcome,
  type ExperimentSpec,
  type NewExperimentSpec,
  type ResumeSpec,
  type ServiceDeps,
  type StartOptions,
} from './spec.ts';
import { summarizeRuns } from './summary.ts';

/**
 * Starts an experiment. Resolves once it is created (or, for `resume`, claimed) and running in
 * the background, with its id, an event subscription, `cancel()` and `done` (the outcome; never
 * rejects). Events emitted before this resolves reach `options.onEvent` only.
 *
 * Recorded config (the shape `resume` and `replay` read): `{workflowFile?, offset, dataDir?,
 * models: ModelConfig with fingerprints, source?, corpus?}` plus `cards?`, `roleVersions?` (`role=id`
 * strings) for `run`, `{inject, simulated: true}` for `blame-eval`, `rollouts` for `rollouts`.
 *
 * Errors (before anything is recorded): ExperimentSpecError (NO_TASKS, BAD_FAULT, UNKNOWN_ROLE,
 * UNKNOWN_NODE, TOOL_FAULT_KIND, DESIGN_FAULT_ROLE, BAD_MODE, RUNNING, NO_DEFAULT_REF, MODEL_LOAD with the
 * provider's error as `cause`), DatasetError from the dataset, SpecError from a stored workflow,
 * StoreError (unknown experiment), and the model port's `verify` errors on resume.
 */
export async function startExperiment(spec: ExperimentSpec, deps: ServiceDeps, options: StartOptions = {}): Promise<ExperimentHandle> {
  const listeners = new Set<(e: ExperimentEvent) => void>();
  if (options.onEvent) listeners.add(options.onEvent);
  const emit = (event: ExperimentEvent) => {
    for (const l of [...listeners]) {
      try {
        l(event);
      } catch {
        // a broken listener must not break the run
      }
    }
  };
  const on = (l: (e: ExperimentEvent) => void) => {
    listeners.add(l);
    return () => void listeners.delete(l);
  };
  const prepared = spec.kind === 'resume' ? await prepareResume(spec, deps, emit) : await prepareNew(spec, deps, emit);
  if ('outcome' in prepared) return { experimentId: prepared.outcome.experimentId, on, cancel: () => {}, done: Promise.resolve(prepared.outcome) };
  const controller = new AbortController();
  if (options.signal?.aborted) controller.abort();
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const { exp } = prepared;
  const total = deps.store.listTasks(exp.id).length;
  emit({ type: 'started', experimentId: exp.id, kind: exp.kind, resumed: prepared.resumed, done: total - deps.store.pendingTasks(exp.id).length, total, config: exp.config });
  const done = executeExperiment(prepared, deps.store, controller.signal, emit);
  return { experimentId: exp.id, on, cancel: () => controller.abort(), done };
}

const toolsOf = (deps: ServiceDeps) => deps.tools ?? defaultTools();
const datasetOf = (deps: ServiceDeps, name: string, dataDir?: string): Dataset => (deps.datasets ?? ((n, d) => getDataset(n, { dataDir: d })))(name, dataDir);

/** Builds and loads the provider; a load failure disposes it and throws MODEL_LOAD (nothing recorded). */
async function loadProvider(deps: ServiceDeps, cfg: ModelConfig): Promise<ModelProvider> {
  try {
    return await loadedProvider(deps.models.create, cfg);
  } catch (err) {
    throw new ExperimentSpecError('MODEL_LOAD', 'models', errorMessage(err), {}, { cause: err });
  }
}

function loadTasks(deps: ServiceDeps, spec: NewExperimentSpec, emit: (e: ExperimentEvent) => void): { dataset: Dataset; tasks: Task[] } {
  const offset = spec.offset ?? 0;
  const dataset = datasetOf(deps, spec.dataset, spec.dataDir);
  const tasks = dataset.load({ split: spec.split, limit: spec.limit, offset });
  if (tasks.length === 0) throw new ExperimentSpecError('NO_TASKS', 'offset', `no tasks: ${dataset.name}/${spec.split} has no task at offset ${offset}`, { text: `${dataset.name}/${spec.split}` });
  if (tasks.length < spec.limit) emit({ type: 'note', message: `Note: ${dataset.name}/${spec.split} has only ${tasks.length} task(s) from offset ${offset}; running those.` });
  return { dataset, tasks };
}

async function prepareNew(spec: Exclude<ExperimentSpec, ResumeSpec>, deps: ServiceDeps, emit: (e: ExperimentEvent) => void): Promise<Prepared> {
  const { graph } = spec.workflow;
  const tools = toolsOf(deps);
  const offset = spec.offset ?? 0;
  const kind = planOfKind(spec.kind);
  const state = kind.check(spec, graph);
  const { dataset, tasks } = loadTasks(deps, spec, emit);
  const models: ModelConfig = kind.models(spec.models, state);
  const provider = await loadProvider(deps, models);

  const config: Record<string, unknown> = {
    ...(spec.workflow.file !== undefined && { workflowFile: spec.workflow.file }),
    offset,
    ...(spec.dataDir !== undefined && { dataDir: spec.dataDir }),
    models: deps.models.fingerprint ? deps.models.fingerprint(models) : models,
  };
  const { config: added, planned } = kind.plan(spec, tasks, offset, state);
  Object.assign(config, added);
  if (spec.source !== undefined) config.source = spec.source;
  if (spec.corpus !== undefined) config.corpus = spec.corpus;

  let exp: ExperimentRow;
  try {
    exp = deps.store.createExperiment({
      ...(spec.experimentId !== undefined && { id: spec.experimentId }),
      kind: spec.kind,
      workflowName: graph.name,
      workflowYaml: spec.workflow.text,
      workflowHash: computeWorkflowHash(spec.workflow.text),
      dataset: dataset.name,
      split: spec.split,
      limit: spec.limit,
      seed: spec.seed,
      config,
      tasks: planned,
    });
  } catch (err) {
    await provider.dispose().catch(() => {});
    throw err;
  }
  return wire({ deps, exp, graph, dataset, provider, tools, models, state, resumed: false, emit, parallel: spec.parallel });
}

/** Throws `err` (an expression, for `??`). */
function throwing(err: Error): never {
  throw err;
}

/** Points model references at new paths (a moved file); the model port's `verify` checks they are the same files. */
export function overrideModels(cfg: ModelConfig, over: ResumeSpec['models']): ModelConfig {
  const models = { ...cfg.models };
  if (over?.default) {
    if (!('default' in models)) throw new ExperimentSpecError('NO_DEFAULT_REF', 'models.default', 'this experiment has no "default" model reference');
    models.default = over.default;
  }
  for (const [role, file] of Object.entries(over?.roles ?? {})) {
    const ref = cfg.roleModels[role];
    const roles = Object.keys(cfg.roleModels);
    if (!ref) throw new ExperimentSpecError('UNKNOWN_ROLE', `models.roles.${role}`, `the experiment has no role "${role}" (roles: ${roles.join(', ')})`, { role, roles });
    models[ref] = file;
  }
  return { ...cfg, models };
}

async function prepareResume(spec: ResumeSpec, deps: ServiceDeps, emit: (e: ExperimentEvent) => void): Promise<Prepared | { outcome: ExperimentOutcome }> {
  const { store } = deps;
  let exp = store.getExperiment(spec.experimentId);
  const config = exp.config ?? {};
  const tools = toolsOf(deps);
  const workflowFile = config.workflowFile ? config.workflowFile.split(/[\\/]/).pop() : undefined;
  const { graph } = parseWorkflow(exp.workflowYaml, { tools, file: workflowFile });
  const dataset = datasetOf(deps, exp.dataset, config.dataDir);
  const pending = store.pendingTasks(exp.id).length;
  if (pending === 0) {
    const total = store.listTasks(exp.id).length;
    const outcome: ExperimentOutcome = {
      experimentId: exp.id,
      kind: exp.kind,
      status: exp.status === 'completed' || exp.status === 'cancelled' || exp.status === 'failed' ? exp.status : 'completed',
      report: summarizeRuns(exp.id, store.listRuns(exp.id), { tasksPlanned: total, wallSeconds: 0, status: exp.status, classOf: labelClassOf(exp.dataset) }),
      nothingPending: true,
    };
    if (exp.kind === 'blame-eval') outcome.blame = { inject: config.inject ?? [], report: blameReportOf(store, exp.id, graph, tools) };
    return { outcome };
  }
  if (exp.status === 'running' && !spec.force) {
    throw new ExperimentSpecError('RUNNING', 'force', `experiment ${exp.id} is marked running in process ${exp.pid}; stop that process, or pass --force if that pid was reused by another program`, { pid: exp.pid ?? null });
  }
  const recorded = storedModels(exp) ?? throwing(missingConfigField(exp.id, 'config.models'));
  const models = overrideModels(recorded, spec.models);
  deps.models.verify?.(recorded, models); // the same model files and adapters as when it started, or refuse
  assertCardsAvailable(store, exp); // the same hint cards as when it started, or refuse
  const provider = await loadProvider(deps, models);
  try {
    if (spec.force && exp.status === 'running') store.setExperimentStatus(exp.id, 'interrupted');
    exp = store.claimExperiment(exp.id);
  } catch (err) {
    await provider.dispose().catch(() => {});
    throw err;
  }
  const state = planOfKind(exp.kind).restore(exp, graph);
  return wire({ deps, exp, graph, dataset, provider, tools, models, state, resumed: true, emit, parallel: spec.parallel });
}

/** The execution plan of a prepared experiment: faults, rollout sampling or hint cards by kind. */
function wire(a: {
  deps: ServiceDeps;
  exp: ExperimentRow;
  graph: Prepared['graph'];
  dataset: Dataset;
  provider: ModelProvider;
  tools: Prepared['tools'];
  models: ModelConfig;
  state: KindState;
  resumed: boolean;
  emit: (e: ExperimentEvent) => void;
  parallel?: number;
}): Prepared {
  const modelFor = (role: RoleName) => a.models.roleModels[role] ?? 'default';
  // The reproducibility record (core/repro): what determines this experiment, before any task runs.
  recordExperiment(a.deps.store, a.exp, storedModels(a.exp) ?? a.models, a.deps.models.environment?.());
  const base: Prepared = { exp: a.exp, graph: a.graph, grader: a.dataset.grader, provider: a.provider, tools: a.tools, modelFor, resumed: a.resumed, parallel: parallelOf({ ...a, rollouts: a.state.rollouts }) };
  const wired = planOfKind(a.exp.kind).wire(base, a.exp, a.state);
  if (wired !== base) return wired; // faults or rollout sampling; otherwise hint cards, below
  try {
    const cards = cardHooksFor(a.deps.store, a.exp, a.graph, a.provider, modelFor, (line) => a.emit({ type: 'note', experimentId: a.exp.id, message: line.replace(/\n$/, '') }));
    return cards ? { ...base, cards } : base;
  } catch (err) {
    void a.provider.dispose().catch(() => {});
    throw err;
  }
}

/** Tasks in flight: the spec's, else the models' default (core/schedule defaultParallel), said in a note when above 1. */
function parallelOf(a: { exp: ExperimentRow; models: ModelConfig; parallel?: number; rollouts?: RolloutsConfig; emit: (e: ExperimentEvent) => void }): number {
  if (a.parallel !== undefined) return a.parallel;
  if (a.rollouts) return a.rollouts.group;
  const d = defaultParallel(a.models);
  if (d.parallel > 1) a.emit({ type: 'note', experimentId: a.exp.id, message: `${d.parallel} tasks in flight (default: ${d.why}; --parallel sets it)` });
  return d.parallel;
}
