/**
 * The lab's API for studies (types only): each study with its plan, the progress of every cell
 * (a `run` experiment) and training unit (a train loop), and the table (core/studies/table.ts:
 * accuracy with 95% bootstrap intervals, deltas against the baseline with the sign test, tokens
 * and seconds per task). Store reads answered by `createHandlers` (studyHandlers.ts). Imports only
 * types, so the renderer can use it.
 */
import type { StudyTable, StudyTableEntry, StudyDelta } from '../studies/table.ts';

export type { StudyTable, StudyTableEntry, StudyDelta };

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

export interface StudiesApiAdditions {
  /** Every study, newest first, with its progress. */
  listStudies(payload?: Record<string, never>): StudySummaryView[];
  /** One study: plan, cells, units and the table. Errors: `NOT_FOUND`. */
  getStudy(payload: { studyId: string }): StudyDetail;
}
