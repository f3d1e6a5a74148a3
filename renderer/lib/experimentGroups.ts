/**
 * Experiments that stay readable (pure): a train loop's iterations and held-out evaluations, and
 * a study's cells and train loops, are one entry of the Experiments, Trace and Rollouts lists,
 * opened to show them; the lists filter by workflow, dataset, kind and model. Grouping reads the
 * `group` the API adds to each experiment (core/api/features/experiments.ts `ExperimentMeta`).
 */
import { kindLabel } from './vocabulary.ts';
import type { ExperimentStatus, ExperimentSummary } from '../../core/api/client.ts';
import type { ExperimentGroupRef } from '../../core/api/client.ts';

/** An experiment as the lists read it (the API's summary; `models` may be absent from an older host). */
export type ListedExperiment = Pick<ExperimentSummary, 'id' | 'workflowName' | 'dataset' | 'split' | 'kind' | 'status' | 'createdAt' | 'runsDone' | 'runsCorrect' | 'tasksPlanned'> & {
  group?: ExperimentGroupRef | undefined;
  models?: string[] | undefined;
};

/** One entry of a list: an experiment on its own, or a loop's / study's experiments together. */
export type ListEntry<E extends ListedExperiment> =
  | { type: 'single'; key: string; experiment: E }
  | { type: 'group'; key: string; group: GroupSummary; members: E[] };

/** What a group's row shows: its experiments' totals. */
export interface GroupSummary {
  kind: ExperimentGroupRef['kind'];
  id: string;
  /** `train loop tl-…` / `study st-…`. */
  label: string;
  workflows: string[];
  datasets: string[];
  models: string[];
  experiments: number;
  runsDone: number;
  runsCorrect: number;
  tasksPlanned: number;
  /** runsCorrect / runsDone; null with no runs. */
  accuracy: number | null;
  /** `running` when any member runs; else the newest member's status. */
  status: ExperimentStatus;
  /** The newest member's creation time, epoch ms. */
  createdAt: number;
}

const distinct = (xs: Iterable<string>) => [...new Set(xs)].sort();

/** The label of a group: what it is and its id. */
export function groupTitle(ref: Pick<ExperimentGroupRef, 'kind' | 'id'>): string {
  return `${ref.kind === 'study' ? 'study' : 'train loop'} ${ref.id}`;
}

/** Where an experiment sits in its group, in words: `iteration 3`, `held-out before`, `cell …`. */
export function memberLabel(e: ListedExperiment): string {
  const g = e.group;
  if (!g) return '';
  if (g.iteration !== undefined) return `iteration ${g.iteration}`;
  if (g.phase) return g.phase.replace(/^heldout-/, 'held-out ');
  if (g.kind === 'study' && e.id.startsWith(`${g.id}.`)) return `cell ${e.id.slice(g.id.length + 1)}`;
  return kindLabel(e.kind);
}

/**
 * Groups a list (newest first) into entries, in the order of each entry's newest experiment;
 * a group's members keep list order. Experiments without a group stay single.
 */
export function groupExperiments<E extends ListedExperiment>(list: readonly E[]): Array<ListEntry<E>> {
  const entries: Array<ListEntry<E>> = [];
  const groups = new Map<string, { ref: ExperimentGroupRef; members: E[] }>();
  for (const e of list) {
    if (!e.group) {
      entries.push({ type: 'single', key: e.id, experiment: e });
      continue;
    }
    const key = `${e.group.kind}:${e.group.id}`;
    let g = groups.get(key);
    if (!g) {
      g = { ref: e.group, members: [] };
      groups.set(key, g);
      entries.push({ type: 'group', key, group: null as unknown as GroupSummary, members: g.members });
    }
    g.members.push(e);
  }
  return entries.map((entry) => (entry.type === 'group' ? { ...entry, group: summarizeGroup(groups.get(entry.key)!.ref, entry.members) } : entry));
}

/** A group's totals over its members (newest first). */
export function summarizeGroup(ref: Pick<ExperimentGroupRef, 'kind' | 'id'>, members: readonly ListedExperiment[]): GroupSummary {
  const sum = (f: (e: ListedExperiment) => number) => members.reduce((s, e) => s + f(e), 0);
  const runsDone = sum((e) => e.runsDone);
  const runsCorrect = sum((e) => e.runsCorrect);
  const newest = members.reduce<ListedExperiment | undefined>((a, e) => (!a || e.createdAt > a.createdAt ? e : a), undefined);
  return {
    kind: ref.kind,
    id: ref.id,
    label: groupTitle(ref),
    workflows: distinct(members.map((e) => e.workflowName)),
    datasets: distinct(members.map((e) => e.dataset)),
    models: distinct(members.flatMap((e) => e.models ?? [])),
    experiments: members.length,
    runsDone,
    runsCorrect,
    tasksPlanned: sum((e) => e.tasksPlanned),
    accuracy: runsDone ? runsCorrect / runsDone : null,
    status: members.some((e) => e.status === 'running') ? 'running' : (newest?.status ?? 'completed'),
    createdAt: newest?.createdAt ?? 0,
  };
}

/** The list filters; '' matches everything. `kind` matches an experiment's kind or its group's (`train-loop`, `study`). */
export interface ExperimentFilter {
  workflow: string;
  dataset: string;
  kind: string;
  model: string;
}

export const NO_FILTER: ExperimentFilter = { workflow: '', dataset: '', kind: '', model: '' };

/** Whether an experiment passes every filter. */
export function matchesFilter(e: ListedExperiment, f: ExperimentFilter): boolean {
  return (
    (!f.workflow || e.workflowName === f.workflow) &&
    (!f.dataset || e.dataset === f.dataset) &&
    (!f.kind || e.kind === f.kind || e.group?.kind === f.kind) &&
    (!f.model || (e.models ?? []).includes(f.model))
  );
}

/** The experiments passing the filter, in list order. */
export function filterExperiments<E extends ListedExperiment>(list: readonly E[], f: ExperimentFilter): E[] {
  return list.filter((e) => matchesFilter(e, f));
}

/** Whether any filter is set. */
export function isFiltering(f: ExperimentFilter): boolean {
  return Boolean(f.workflow || f.dataset || f.kind || f.model);
}

/** The values each filter can take, from the whole list, sorted. */
export function filterOptions(list: readonly ListedExperiment[]): Record<keyof ExperimentFilter, string[]> {
  return {
    workflow: distinct(list.map((e) => e.workflowName)),
    dataset: distinct(list.map((e) => e.dataset)),
    kind: distinct(list.flatMap((e) => (e.group ? [e.kind, e.group.kind] : [e.kind]))),
    model: distinct(list.flatMap((e) => e.models ?? [])),
  };
}

/** The model column's text: the files' base names, `–` when none is recorded. */
export function modelText(models: readonly string[] | undefined): string {
  return models?.length ? models.join(', ') : '–';
}

/**
 * The rollouts experiments the Rollouts view may open by default, in the order to try: standalone
 * ones (newest first), then a train loop's iterations (newest first). A training iteration is
 * only opened when its groups carry a learning signal (`hasLearningSignal`).
 */
export function rolloutsCandidates<E extends ListedExperiment>(list: readonly E[]): { standalone: E[]; iterations: E[] } {
  const rollouts = list.filter((e) => e.kind === 'rollouts');
  return { standalone: rollouts.filter((e) => !e.group), iterations: rollouts.filter((e) => e.group) };
}

/** Whether some stored group of a rollouts experiment teaches something (not every role at zero spread). */
export function hasLearningSignal(view: { groups: ReadonlyArray<{ rollouts: readonly unknown[]; noSignal: boolean }> }): boolean {
  return view.groups.some((g) => g.rollouts.length > 0 && !g.noSignal);
}
