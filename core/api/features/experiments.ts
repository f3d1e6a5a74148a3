/**
 * The experiments feature: the stored experiments with their progress, scores and where they
 * belong (a train loop's iteration, a study's cell), one experiment in full, its runs, and two
 * experiments compared as `flowlab compare` does. Store reads, answered in-process.
 */
import * as z from 'zod';
import { compareRuns, type CompareReport } from '../../experiments/compare.ts';
import type { RunRecord } from '../../results/index.ts';
import { StoreError, type ExperimentSummary as StoreExperimentSummary, type Store } from '../../store/index.ts';
import { defineFeature } from '../feature.ts';
import { Count, Id, NoPayload } from '../fields.ts';

export type { CompareReport, PairedDelta } from '../../experiments/compare.ts';

/**
 * What an experiment belongs to: a train loop (`config.trainLoop.loopId`; `iteration` for a
 * training iteration's rollouts, `phase` `heldout-before` / `heldout-after` for its held-out
 * evaluations) or a study (`config.source` `study <id>`, or an id derived from the study's:
 * `<study-id>.<cell>` for cells, `<study-id>.<unit>.tl<n>` for its train loops).
 */
export interface ExperimentGroupRef {
  kind: 'train-loop' | 'study';
  /** The train loop's or the study's id. */
  id: string;
  /** A study's experiment that is also a train loop's: the loop's id. */
  loopId?: string;
  iteration?: number;
  phase?: string;
}

/** The fields `listExperiments` adds to each stored row (ExperimentSummary). */
export interface ExperimentMeta {
  /** Absent for a standalone experiment. */
  group?: ExperimentGroupRef;
  /** Base names of the model files its roles ran (`config.models.models`), sorted, distinct; empty when none is recorded. */
  models: string[];
}

/**
 * One row of the experiments list: the stored experiment with its progress and scores, without
 * the workflow text and run configuration (`getExperiment` has those).
 */
export type ExperimentSummary = Omit<StoreExperimentSummary, 'workflowYaml' | 'config'> & ExperimentMeta;

/** One experiment in full: the stored row (workflow text, config) plus its progress and scores. */
export type ExperimentDetail = StoreExperimentSummary;

/** `getExperiment`'s payload. */
export interface GetExperimentPayload {
  id: string;
}

/** `listRuns`' payload. */
export interface ListRunsPayload {
  experimentId: string;
}

/** `compareExperiments`'s payload: baseline `a`, compared `b`, the bootstrap's seed (default 0). */
export interface CompareExperimentsPayload {
  a: string;
  b: string;
  seed?: number;
}

/** `compareExperiments`'s answer: the paired report and the CLI command that prints the same table. */
export interface CompareView extends CompareReport {
  /** Workflow name, dataset and split of each side. */
  sides: { a: CompareSide; b: CompareSide };
}

export interface CompareSide {
  workflowName: string;
  dataset: string;
  split: string;
  runs: number;
}

/** The experiments methods (store reads, synchronous on the host). */
export interface ExperimentsApi {
  /** All experiments, newest first, with progress and scores. */
  listExperiments(payload?: Record<string, never>): ExperimentSummary[];
  /** One experiment with its workflow text and config. Errors: `NOT_FOUND`. */
  getExperiment(payload: GetExperimentPayload): ExperimentDetail;
  /** The stored runs of an experiment, in task order. Errors: `NOT_FOUND` (no such experiment). */
  listRuns(payload: ListRunsPayload): RunRecord[];
  /**
   * Two experiments paired by dataset task id, as `flowlab compare a b --seed S --json` prints
   * them (`pairs` 0 when they share no task). Errors: `NOT_FOUND` (either experiment).
   */
  compareExperiments(payload: CompareExperimentsPayload): CompareView;
}

export const experimentsFeature = defineFeature<ExperimentsApi>()({
  name: 'experiments',
  payloads: {
    listExperiments: NoPayload,
    getExperiment: z.strictObject({ id: Id }),
    listRuns: z.strictObject({ experimentId: Id }),
    compareExperiments: z.strictObject({ a: Id, b: Id, seed: Count(0, 2_147_483_647).optional() }),
  },
  handlers: ({ store }: { store: Store }) => ({
    listExperiments: () => store.listExperiments().map(toSummary),
    getExperiment: ({ id }) => {
      const row = store.getExperiment(id); // NOT_FOUND when absent
      // The store computes progress and scores in its list query; reuse it so both views agree.
      const summary = store.listExperiments().find((e) => e.id === row.id);
      if (!summary) throw new StoreError('NOT_FOUND', `no experiment ${id}`, id);
      return summary;
    },
    listRuns: ({ experimentId }) => store.listRuns(experimentId),
    compareExperiments: ({ a, b, seed }) => compareExperiments(store, a, b, seed),
  }),
});

/** A study id as core/studies/cells.ts `studyIdOf` makes it, at the start of a derived id. */
const STUDY_PREFIX = /^(st-.+?-[0-9a-f]{8})\./;

const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const baseName = (file: string) => file.split(/[\\/]/).pop() ?? file;

/**
 * Where an experiment belongs and which model files it ran, from its id and stored config
 * (`config.trainLoop` of core/training/steps.ts, `config.source` of core/experiments/spec.ts,
 * `config.models` a ModelConfig). Never throws: anything malformed is left out.
 */
export function experimentMetaOf(id: string, config: unknown): ExperimentMeta {
  const c = obj(config);
  const models = obj(obj(c?.['models'])?.['models']);
  const files = models ? [...new Set(Object.values(models).filter((f): f is string => typeof f === 'string').map(baseName))].sort() : [];
  const loop = obj(c?.['trainLoop']);
  const loopId = typeof loop?.['loopId'] === 'string' ? (loop['loopId'] as string) : undefined;
  const source = typeof c?.['source'] === 'string' ? (c['source'] as string) : '';
  const studyId = source.startsWith('study ') ? source.slice(6) : (STUDY_PREFIX.exec(loopId ?? id)?.[1] ?? undefined);
  const where: Pick<ExperimentGroupRef, 'iteration' | 'phase'> = {
    ...(Number.isInteger(loop?.['iteration']) && { iteration: loop!['iteration'] as number }),
    ...(typeof loop?.['phase'] === 'string' && { phase: loop!['phase'] as string }),
  };
  let group: ExperimentGroupRef | undefined;
  if (studyId) group = { kind: 'study', id: studyId, ...(loopId && { loopId }), ...where };
  else if (loopId) group = { kind: 'train-loop', id: loopId, ...where };
  return { ...(group && { group }), models: files };
}

/** `compareExperiments`: `flowlab compare`'s report with each side's workflow, dataset and split. */
export function compareExperiments(store: Store, a: string, b: string, seed = 0): CompareView {
  const ea = store.getExperiment(a); // NOT_FOUND
  const eb = store.getExperiment(b);
  const ra = store.listRuns(ea.id);
  const rb = store.listRuns(eb.id);
  const side = (e: typeof ea, runs: readonly RunRecord[]) => ({ workflowName: e.workflowName, dataset: e.dataset, split: e.split, runs: runs.length });
  return { ...compareRuns(ea.id, ra, eb.id, rb, seed), sides: { a: side(ea, ra), b: side(eb, rb) } };
}

function toSummary(e: StoreExperimentSummary): ExperimentSummary {
  const { workflowYaml: _yaml, config, ...summary } = e;
  return { ...summary, ...experimentMetaOf(e.id, config) };
}
