/**
 * The Runs table's pure parts: the task label every view uses (task index, `task/rollout` in a
 * rollout group, as `flowlab ls` prints it), the experiment picker's labels (distinct even when
 * experiments share a workflow and dataset), and the rows a scrolled viewport shows.
 */
import type { ExperimentSummary, RunHit } from '../../core/api/client.ts';
import { kindLabel, taskLabel } from './vocabulary.ts';

export { taskLabel };

/**
 * An experiment picker's label: workflow, kind, date (UTC, to the minute) and id, so two
 * experiments of one workflow and dataset never read alike (the id is unique); a blame-eval says
 * its faults are SIMULATED.
 */
export function experimentOptionLabel(e: Pick<ExperimentSummary, 'id' | 'kind' | 'workflowName' | 'dataset' | 'createdAt'>): string {
  const kind = kindLabel(e.kind);
  const when = new Date(e.createdAt).toISOString().slice(0, 16).replace('T', ' ');
  return `${e.workflowName} / ${e.dataset} · ${kind} · ${when} · ${e.id}`;
}

/**
 * The Trace and Ladder pickers' label: the experiment's number (`#n`, 1 for the oldest; see
 * {@link experimentNumbers}), workflow, the time it was created to the second (UTC, month-day),
 * then accuracy and id. A closed select shows only its start — in the 1280 px window about 26
 * characters, so experiments of one workflow made within a few seconds (MASS steps, seeded
 * labs) still read alike after the time moved forward — so a short number unique to each comes first.
 */
export function pickerLabel(e: Pick<ExperimentSummary, 'id' | 'workflowName' | 'createdAt'>, accuracy: string, n: number): string {
  const when = new Date(e.createdAt).toISOString().slice(5, 19).replace('T', ' ');
  return `#${n} ${e.workflowName} · ${when} · ${accuracy} · ${e.id}`;
}

/**
 * Each experiment's number in the pickers: its place in `newestFirst` (the list as
 * listExperiments gives it) counted from the oldest, so a new experiment never renumbers the others.
 */
export function experimentNumbers(newestFirst: ReadonlyArray<Pick<ExperimentSummary, 'id'>>): Map<string, number> {
  return new Map(newestFirst.map((e, i) => [e.id as string, newestFirst.length - i]));
}

/**
 * The rows a viewport shows: from the first row under `scrollTop` to the last row above
 * `scrollTop + height`, widened by `overscan` rows each side and kept within `0..total-1`
 * (`last < first` when there is nothing to show). Rows are `rowHeight` pixels high.
 */
export function visibleRows(scrollTop: number, height: number, rowHeight: number, total: number, overscan = 10): { first: number; last: number } {
  if (total <= 0 || rowHeight <= 0) return { first: 0, last: -1 };
  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(total - 1, Math.ceil((scrollTop + height) / rowHeight) + overscan - 1);
  return { first, last };
}
