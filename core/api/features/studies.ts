/**
 * The studies feature (store reads): each study with its plan, the progress of every cell (a
 * `run` experiment) and training unit (a train loop), and the table (core/studies/table.ts:
 * accuracy with 95% bootstrap intervals, deltas against the baseline with the sign test, tokens
 * and seconds per task). A study's cells and units come from its plan (core/studies/cells.ts),
 * each cell's progress from its experiment, the table from the stored runs (studyTableNow).
 */
import * as z from 'zod';
import { studyCells, trainingUnits } from '../../studies/cells.ts';
import { PlanSchema, type StudyPlan } from '../../studies/plan.ts';
import { studyTableNow, type StudyState } from '../../studies/run.ts';
import type { StudyTable } from '../../studies/table.ts';
import { isPidAlive, type Store } from '../../store/index.ts';
import type { StudyRow } from '../../store/studies.ts';
import { defineFeature } from '../feature.ts';
import { Id } from '../fields.ts';

export type { StudyTable, StudyTableEntry, StudyDelta } from '../../studies/table.ts';

/** One study in the list. */
export interface StudySummaryView {
  id: string;
  name: string;
  status: 'planned' | 'running' | 'completed' | 'stopped' | 'interrupted' | 'failed';
  planFile: string | null;
  createdAt: number;
  updatedAt: number;
  cells: number;
  /** Cells whose experiment has every planned run stored. */
  cellsDone: number;
  runsDone: number;
  runsPlanned: number;
}

/** One cell: a condition on a zone with a seed and a model, stored as one experiment. */
export interface StudyCellView {
  key: string;
  condition: string;
  zone: string;
  seed: number;
  model: string;
  experimentId: string;
  /** The experiment's status, or `pending` when it does not exist yet. */
  status: 'pending' | 'running' | 'completed' | 'interrupted' | 'cancelled' | 'failed';
  done: number;
  total: number;
  /** Training conditions: the unit whose versions the cell evaluates. */
  unit: string | null;
}

/** One training unit: a train loop of a training condition for a seed and a model. */
export interface StudyUnitView {
  key: string;
  condition: string;
  seed: number;
  model: string;
  iterations: number;
  /** Finished: its loop id, versions (role -> id) and wall seconds. */
  loopId: string | null;
  versions: Record<string, string>;
  seconds: number | null;
  /** The loop's stored iteration experiments (all attempts). */
  experimentIds: string[];
}

/** `getStudy`'s answer. */
export interface StudyDetail {
  summary: StudySummaryView;
  /** The validated plan (defaults filled, paths resolved). */
  plan: unknown;
  cells: StudyCellView[];
  units: StudyUnitView[];
  table: StudyTable;
  /** The dry run's estimate (whole study), and the wall seconds of every invocation. */
  estimate: { seconds: number; tokens: number; calls: number; runs: number } | null;
  wallSeconds: number[];
  /** Zones skipped (their dataset is not in this build). */
  skippedZones: string[];
}

/** The studies methods (store reads, synchronous on the host). */
export interface StudiesApi {
  /** Every study, newest first, with its progress. */
  listStudies(payload?: Record<string, never>): StudySummaryView[];
  /** One study: plan, cells, units and the table. Errors: `NOT_FOUND`. */
  getStudy(payload: { studyId: string }): StudyDetail;
}

export const studiesFeature = defineFeature<StudiesApi>()({
  name: 'studies',
  payloads: {
    listStudies: z.strictObject({}).optional(),
    getStudy: z.strictObject({ studyId: Id }),
  },
  handlers: ({ store }: { store: Store }) => ({
    listStudies: () => listStudyViews(store),
    getStudy: ({ studyId }) => buildStudyDetail(store, studyId),
  }),
});

const planOf = (row: StudyRow): StudyPlan => PlanSchema.parse(row.plan);

function cellViews(store: Store, row: StudyRow, plan: StudyPlan): StudyCellView[] {
  const state = row.state as StudyState;
  return studyCells(plan, row.id, new Set(state.skippedZones ?? [])).map((c) => {
    const exp = store.findExperiment(c.experimentId);
    const done = exp ? store.listTasks(c.experimentId).length - store.pendingTasks(c.experimentId).length : 0;
    return {
      key: c.key, condition: c.condition.id, zone: c.zone.id, seed: c.seed, model: c.model.id, experimentId: c.experimentId,
      status: exp ? exp.status : 'pending', done, total: c.zone.limit, unit: c.unitKey ?? null,
    };
  });
}

function summaryOf(row: StudyRow, cells: readonly StudyCellView[]): StudySummaryView {
  return {
    id: row.id, name: row.name, status: row.status === 'running' && row.pid !== undefined && !isPidAlive(row.pid) ? 'interrupted' : row.status, planFile: row.planFile ?? null, createdAt: row.createdAt, updatedAt: row.updatedAt,
    cells: cells.length, cellsDone: cells.filter((c) => c.done >= c.total).length, runsDone: cells.reduce((s, c) => s + c.done, 0), runsPlanned: cells.reduce((s, c) => s + c.total, 0),
  };
}

/** Every study, newest first. */
export function listStudyViews(store: Store): StudySummaryView[] {
  return store.studies.list().map((row) => summaryOf(row, cellViews(store, row, planOf(row))));
}

/** One study in full. Errors: StoreError `NOT_FOUND` (the API answers NOT_FOUND). */
export function buildStudyDetail(store: Store, studyId: string): StudyDetail {
  const row = store.studies.get(studyId);
  const plan = planOf(row);
  const state = row.state as StudyState;
  const cells = cellViews(store, row, plan);
  const loopExperiments = new Map<string, string[]>();
  for (const e of store.listExperiments()) {
    const loopId = e.config?.trainLoop?.loopId;
    if (loopId?.startsWith(`${row.id}.`)) loopExperiments.set(loopId, [...(loopExperiments.get(loopId) ?? []), e.id]);
  }
  const units: StudyUnitView[] = trainingUnits(plan).map((u) => {
    const r = state.units?.[u.key];
    const prefix = `${row.id}.${u.key.replaceAll('/', '.')}.tl`;
    return {
      key: u.key, condition: u.condition.id, seed: u.seed, model: u.model.id, iterations: u.condition.train!.iterations,
      loopId: r?.loopId ?? null, versions: r?.versions ?? {}, seconds: r?.seconds ?? null,
      experimentIds: [...loopExperiments].filter(([id]) => id.startsWith(prefix)).flatMap(([, ids]) => ids).reverse(),
    };
  });
  const e = state.estimate;
  return {
    summary: summaryOf(row, cells), plan: row.plan, cells, units, table: studyTableNow(store, plan, row.id, state),
    estimate: e ? { seconds: e.seconds, tokens: e.tokens, calls: e.calls, runs: e.runs } : null, wallSeconds: state.wallSeconds ?? [], skippedZones: state.skippedZones ?? [],
  };
}
