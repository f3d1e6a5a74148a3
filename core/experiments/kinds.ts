/**
 * What each experiment kind adds to the experiment service's one path (service.ts), one entry
 * per kind instead of a branch per kind in each step: the kind's checks before anything loads,
 * the models it runs with, what it adds to the stored config and how it plans its tasks, what it
 * reads back from a stored row on resume, and what it adds to the execution plan.
 *
 * - `run`: every task once; hint cards and weight versions recorded (cards wired at execution).
 * - `blame-eval`: SIMULATED faults (`inject`, checked against the workflow) over `runs` runs
 *   cycling the tasks; recorded `{inject, simulated: true}`.
 * - `rollouts`: G on-policy rollouts per task (`rolloutIndex`), sampled together at temperature
 *   T (topK 0, topP 1, minP 0); recorded `rollouts` (group, temperature, mode, learning roles).
 */
import type { FaultSpec } from '../faults/inject.ts';
import type { ModelConfig } from '../model/config.ts';
import { rolloutIndex, rolloutTaskId } from '../rollouts/groups.ts';
import { formatMode, learningRoles, parseMode } from '../rollouts/modes.ts';
import type { RolloutsConfig } from '../rollouts/store.ts';
import { storedRollouts } from '../store/config.ts';
import type { ExperimentRow, PlannedTask } from '../store/types.ts';
import type { Task } from '../tasks/types.ts';
import type { Graph } from '../workflow/graph.ts';
import { checkFaultSpecs } from '../faults/experimentFaults.ts';
import type { Prepared } from './lifecycle.ts';
import { ExperimentSpecError, type ExperimentSpec } from './spec.ts';

/** A new experiment's spec of kind `K`. */
type SpecOf<K extends KindName> = Extract<ExperimentSpec, { kind: K }>;
type KindName = 'run' | 'blame-eval' | 'rollouts';

/** What a kind checked or read back: its fault specs, its rollouts config. */
export interface KindState {
  specs: FaultSpec[];
  rollouts?: RolloutsConfig;
}

/** What one kind adds to the service's path (see the module comment). */
interface ExperimentKindPlan<K extends KindName> {
  /** Checks the kind's own options against the workflow, before anything loads. @throws ExperimentSpecError (located). */
  check(spec: SpecOf<K>, graph: Graph): KindState;
  /** The models it runs with. */
  models(models: ModelConfig, state: KindState): ModelConfig;
  /** What it adds to the stored config, and its planned tasks (`tasks` from `offset`). */
  plan(spec: SpecOf<K>, tasks: readonly Task[], offset: number, state: KindState): { config: Record<string, unknown>; planned: PlannedTask[] };
  /** What a stored experiment of the kind brings back on resume. */
  restore(exp: ExperimentRow, graph: Graph): KindState;
  /** What it adds to the execution plan. */
  wire(base: Prepared, exp: ExperimentRow, state: KindState): Prepared;
}

/** Sampling of every agent node in rollouts: on-policy (temperature T, no truncation). */
const onPolicy = (temperature: number) => ({ temperature, topK: 0, topP: 1, minP: 0 });

const planned = (t: Task, taskIndex: number, taskId = t.id): PlannedTask => ({ taskIndex, taskId, input: t.input, expected: t.expected, ...(t.meta && { meta: t.meta }) });

const run: ExperimentKindPlan<'run'> = {
  check: () => ({ specs: [] }),
  models: (models) => models,
  plan(spec, tasks, offset) {
    const config: Record<string, unknown> = {};
    if (spec.cards) config.cards = spec.cards;
    const versions = Object.entries(spec.roleVersions ?? {});
    if (versions.length) config.roleVersions = versions.map(([role, id]) => `${role}=${id}`);
    return { config, planned: tasks.map((t) => planned(t, t.index - offset)) };
  },
  restore: () => ({ specs: [] }),
  wire: (base) => base, // hint cards are wired by the service (they need the provider)
};

const blameEval: ExperimentKindPlan<'blame-eval'> = {
  check: (spec, graph) => ({ specs: checkFaultSpecs(graph, spec.inject) }),
  models: (models) => models,
  plan(spec, tasks) {
    const runs = spec.runs ?? spec.limit;
    return { config: { inject: [...spec.inject], simulated: true }, planned: Array.from({ length: runs }, (_, i) => planned(tasks[i % tasks.length]!, i)) };
  },
  restore: (exp, graph) => ({ specs: checkFaultSpecs(graph, exp.config?.inject ?? []) }),
  wire: (base, exp, state) => ({ ...base, faults: { specs: state.specs, inject: (exp.config?.inject ?? []).slice() } }),
};

const rollouts: ExperimentKindPlan<'rollouts'> = {
  check(spec, graph) {
    let mode;
    try {
      mode = parseMode(spec.mode);
    } catch (err) {
      throw new ExperimentSpecError('BAD_MODE', 'mode', (err as Error).message, {}, { cause: err });
    }
    return { specs: [], rollouts: { group: spec.group, temperature: spec.temperature, mode: formatMode(mode), learningRoles: learningRoles(graph, mode), ...(spec.recordTokens && { recordTokens: true }) } };
  },
  models: (models, state) => ({ ...models, sequences: Math.max(4, state.rollouts!.group), batching: models.batching ?? 'isolated' }),
  plan(_spec, tasks, _offset, state) {
    const G = state.rollouts!.group;
    return { config: { rollouts: state.rollouts }, planned: tasks.flatMap((t, ti) => Array.from({ length: G }, (_, g) => planned(t, rolloutIndex(ti, g, G), rolloutTaskId(t.id, g)))) };
  },
  restore: (exp) => {
    const r = storedRollouts(exp);
    return { specs: [], ...(r && { rollouts: r }) };
  },
  wire: (base, _exp, state) => (state.rollouts ? { ...base, rollouts: state.rollouts, sampling: onPolicy(state.rollouts.temperature), recordTokens: state.rollouts.recordTokens } : base),
};

/** The plan of each kind the service starts (`import`, `mass`, `fork` experiments are made elsewhere and not resumed here). */
export const EXPERIMENT_KIND_PLANS: { [K in KindName]: ExperimentKindPlan<K> } = { run, 'blame-eval': blameEval, rollouts };

/** The plan of a stored experiment's kind (a kind the service does not start reads as `run`: nothing added). */
export function planOfKind(kind: string): ExperimentKindPlan<KindName> {
  return (kind === 'blame-eval' || kind === 'rollouts' ? EXPERIMENT_KIND_PLANS[kind] : run) as ExperimentKindPlan<KindName>;
}
