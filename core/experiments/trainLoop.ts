/**
 * Train-loop experiments through the service's ports: per-role weight updates from on-policy
 * rollouts (core/training/loop.ts runTrainLoop), with the providers built by the model port
 * (loaded before use, reloaded after every write) and progress as the loop's events.
 */
import { finishTrainLoopRecord, recordTrainLoop, trainLoopFingerprint } from '../repro/trainLoop.ts';
import type { RoleName } from '../ids.ts';
import { rolesThatRun } from '../workflow/index.ts';
import type { ModelConfig } from '../model/config.ts';
import { loadedProvider, type ModelProvider } from '../model/provider.ts';
import { getDataset } from '../tasks/registry.ts';
import { defaultTools } from '../tools/index.ts';
import { newLoopId, runTrainLoop, type LoopEvent, type LoopModels, type TrainLoopReport } from '../training/loop.ts';
import type { Trainer } from '../training/port.ts';
import type { TrainLoopSchedule } from '../training/types.ts';
import { ExperimentSpecError, type ServiceDeps, type WorkflowSource } from './spec.ts';

/**
 * What a train loop is: the workflow, the roles it trains, the data, the models it starts from,
 * and its schedule (TrainLoopSchedule, core/training/types.ts; here `maxGradNorm` is required).
 */
export interface TrainLoopSpec extends TrainLoopSchedule {
  workflow: WorkflowSource;
  dataset: string;
  /** Data folder (stored as `config.dataDir`). */
  dataDir?: string;
  /** Training split: iteration k takes the next `tasksPerIteration` tasks. */
  split: string;
  heldoutSplit: string;
  /** Held-out tasks (0: no held-out evaluation). */
  heldout: number;
  /** Roles trained (default: every role running an agent node); see trainableRoles. */
  roles?: readonly string[];
  maxGradNorm: number;
  /** The starting models (models/resolve.ts); trained roles' files are replaced by each new version. */
  models: ModelConfig;
  /** The loop's id (default: a fresh `newLoopId()` of core/training/loop.ts). */
  loopId?: string;
}

/** A running train loop. */
export interface TrainLoopHandle {
  /** The loop's id (its experiments' `config.trainLoop.loopId`, its versions' folder). */
  loopId: string;
  on(listener: (event: LoopEvent) => void): () => void;
  /** Stops after the iteration in flight; the versions written so far stay recorded. */
  cancel(): void;
  /** The loop's report; rejects with the error that stopped it (a model that fails to load, a trainer error). */
  done: Promise<TrainLoopReport>;
}

/**
 * The roles a train loop trains: `roles`, or every role running an agent node. Errors:
 * ExperimentSpecError (field `roles`) — NO_ROLE (no agent node), UNKNOWN_ROLE, NOT_TRAINABLE
 * (a role that runs no agent node).
 */
export function trainableRoles(workflow: WorkflowSource, roles?: readonly string[]): string[] {
  const { graph } = workflow;
  const agents: string[] = rolesThatRun(graph);
  const picked = roles?.length ? [...roles] : agents;
  if (!picked.length) throw new ExperimentSpecError('NO_ROLE', 'roles', 'no role to train: the workflow has no agent node');
  const all = [...graph.roles.keys()] as string[];
  for (const r of picked) {
    if (!graph.roles.has(r as RoleName)) throw new ExperimentSpecError('UNKNOWN_ROLE', 'roles', `roles names "${r}", which the workflow does not have (roles: ${all.join(', ')})`, { role: r, roles: all });
    if (!agents.includes(r)) throw new ExperimentSpecError('NOT_TRAINABLE', 'roles', `roles names "${r}", which runs no agent node (nothing to train)`, { role: r });
  }
  return picked;
}

/**
 * Starts a train loop in the background. Every provider is built by the model port and loaded
 * before use; the stored config of each of its experiments carries the starting models (with
 * fingerprints) and the data folder. Errors (before it starts): ExperimentSpecError from
 * trainableRoles, NO_TASKS (field `split`) for an empty training split, DatasetError.
 */
export function startTrainLoop(spec: TrainLoopSpec, deps: ServiceDeps & { trainer: Trainer }, options: { onEvent?: (e: LoopEvent) => void; signal?: AbortSignal } = {}): TrainLoopHandle {
  return launchTrainLoop(spec, deps, options, false);
}

/**
 * What a stored train loop's plan holds (store.trainLoops `plan`): its spec as data — the
 * workflow's text and file instead of the graph, each start version's id, the starting models
 * with fingerprints (checked again on resume), the roles as resolved.
 */
export interface TrainLoopPlan extends Omit<TrainLoopSpec, 'workflow' | 'startVersions' | 'roles' | 'versionsDir' | 'loopId'> {
  workflow: { text: string; file?: string };
  roles: string[];
  startVersions: Record<string, string>;
}

/** Starts (`resume` false) or resumes (`spec.loopId`'s stored loop) a train loop; see startTrainLoop. */
export function launchTrainLoop(spec: TrainLoopSpec, deps: ServiceDeps & { trainer: Trainer }, options: { onEvent?: (e: LoopEvent) => void; signal?: AbortSignal }, resume: boolean): TrainLoopHandle {
  const roles = trainableRoles(spec.workflow, spec.roles);
  const dataset = (deps.datasets ?? ((n, d) => getDataset(n, { dataDir: d })))(spec.dataset, spec.dataDir);
  const trainTasks = dataset.load({ split: spec.split, limit: spec.tasksPerIteration * spec.iterations });
  if (!trainTasks.length) throw new ExperimentSpecError('NO_TASKS', 'split', `no tasks in ${dataset.name}/${spec.split}`, { text: `${dataset.name}/${spec.split}` });
  const heldoutTasks = spec.heldout > 0 ? dataset.load({ split: spec.heldoutSplit, limit: spec.heldout }) : [];
  const listeners = new Set<(e: LoopEvent) => void>();
  if (options.onEvent) listeners.add(options.onEvent);
  const controller = new AbortController();
  options.signal?.addEventListener('abort', () => controller.abort(), { once: true });
  const loopId = spec.loopId ?? newLoopId();
  const parallel = Math.min(64, spec.tasksPerIteration * spec.group);
  const base = spec.models;
  const recorded = deps.models.fingerprint ? deps.models.fingerprint(base) : base;
  const { workflow: _w, startVersions: sv, versionsDir: _v, loopId: _l, ...rest } = spec;
  const plan: TrainLoopPlan = {
    ...rest, workflow: { text: spec.workflow.text, ...(spec.workflow.file !== undefined && { file: spec.workflow.file }) }, roles, models: recorded,
    startVersions: Object.fromEntries(Object.entries(sv ?? {}).map(([role, v]) => [role, v.id])),
  };
  const cfgOf = (m: LoopModels): ModelConfig => ({ ...base, models: m.models, roleModels: m.roleModels, sequences: Math.max(4, parallel), batching: base.batching ?? 'isolated', exactAttention: true });
  const makeProvider = (m: LoopModels): Promise<ModelProvider> => loadedProvider(deps.models.create, cfgOf(m));
  // The reproducibility record (core/repro): the plan, the starting files and the sampling settings.
  recordTrainLoop(deps.store, loopId, trainLoopFingerprint(JSON.parse(JSON.stringify(plan)) as Record<string, unknown>, { ...cfgOf({ models: base.models, roleModels: base.roleModels }), ...(recorded.fingerprints && { fingerprints: recorded.fingerprints }) }, deps.models.environment?.()));
  const done = runTrainLoop({
    store: deps.store,
    graph: spec.workflow.graph,
    workflow: { yaml: spec.workflow.text, ...(spec.workflow.file !== undefined && { file: spec.workflow.file }) },
    dataset: { name: dataset.name, grader: dataset.grader, ...(dataset.classOf && { classOf: dataset.classOf }), ...(dataset.novelty?.[spec.heldoutSplit] !== undefined && { heldoutNovelty: dataset.novelty[spec.heldoutSplit] }) },
    trainTasks, heldoutTasks, tools: deps.tools ?? defaultTools(), trainer: deps.trainer, makeProvider,
    models: { models: base.models, roleModels: base.roleModels }, roles, startVersions: spec.startVersions ?? {},
    group: spec.group, iterations: spec.iterations, tasksPerIteration: spec.tasksPerIteration, lr: spec.lr, kl: spec.kl, temperature: spec.temperature,
    maxGradNorm: spec.maxGradNorm, heldoutSamples: spec.heldoutSamples, heldoutTemperature: spec.heldoutTemperature, seed: spec.seed, versionsDir: spec.versionsDir,
    ...(spec.sft && { sft: spec.sft }), ...(spec.entropy ? { entropy: spec.entropy } : {}),
    parallel, signal: controller.signal, loopId, resume, plan: JSON.parse(JSON.stringify(plan)) as Record<string, unknown>,
    config: { models: recorded, dataDir: spec.dataDir },
    onEvent: (e) => {
      for (const l of [...listeners]) {
        try {
          l(e);
        } catch {
          // a broken listener must not break the loop
        }
      }
    },
  }).then((report) => {
    if (deps.store.trainLoops.find(loopId)?.status === 'completed') finishTrainLoopRecord(deps.store, loopId);
    return report;
  });
  return {
    loopId,
    on: (l) => {
      listeners.add(l);
      return () => void listeners.delete(l);
    },
    cancel: () => controller.abort(),
    done,
  };
}
