/**
 * The store reads behind `listStudies` and `getStudy` (studies.ts has the shapes): a study's
 * cells and units from its plan (core/studies/cells.ts), each cell's progress from its
 * experiment, and the table from the stored runs (core/studies/run.ts studyTableNow).
 */
import { studyCells, trainingUnits } from '../studies/cells.ts';
import { PlanSchema, type StudyPlan } from '../studies/plan.ts';
import { studyTableNow, type StudyState } from '../studies/run.ts';
import { isPidAlive, type Store } from '../store/index.ts';
import type { StudyRow } from '../store/studies.ts';
import type { StudyCellView, StudyDetail, StudySummaryView, StudyUnitView } from './studies.ts';

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
