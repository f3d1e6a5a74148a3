/**
 * What the run-diff panel shows, as pure functions of the API's data (core/api `diffRuns`): the
 * runs a trace can be diffed with, each aligned node run's one-line summary, and values clipped
 * around the first character where they differ.
 */
import { DIFF_ASPECT_LABEL, differsText as differsTextOf, type AlignedNode, type Difference, type ExperimentSummary, type RunRecord } from '../../core/api/client.ts';
import type { Loadable } from '../store/loadable.ts';

/** Each aspect as the panel names it (core/trace's labels, shared with the CLI). */
export const ASPECT_LABEL = DIFF_ASPECT_LABEL;

/** A run the picker offers. */
export interface DiffCandidate {
  runId: string;
  label: string;
}

/** The picker's groups: the same task in other experiments of the workflow, then this experiment's other tasks. */
export interface DiffCandidateGroup {
  label: string;
  runs: DiffCandidate[];
}

/**
 * The runs `run` can be diffed with: its task (same task index) in every other listed experiment
 * of the same workflow (newest first, as listed), then the other runs of its own experiment.
 * Experiments whose runs are not loaded are left out. Empty groups are dropped.
 */
export function diffCandidates(
  run: RunRecord,
  workflowName: string | undefined,
  experiments: readonly ExperimentSummary[],
  runsByExperiment: Readonly<Record<string, Loadable<RunRecord[]>>>,
  ownRuns: readonly RunRecord[],
): DiffCandidateGroup[] {
  const sameTask: DiffCandidate[] = [];
  for (const e of experiments) {
    if (e.id === run.experimentId || (workflowName !== undefined && e.workflowName !== workflowName)) continue;
    const runs = runsByExperiment[e.id];
    const match = runs?.status === 'ready' ? runs.data.find((r) => r.taskIndex === run.taskIndex) : undefined;
    if (match) sameTask.push({ runId: match.runId, label: `${e.id} · task ${match.taskIndex} · seed ${e.seed}${match.correct ? ' · ✓' : ' · ✗'}` });
  }
  const others = ownRuns.filter((r) => r.runId !== run.runId).map((r) => ({ runId: r.runId, label: `task ${r.taskIndex} (${r.taskId})${r.correct ? ' · ✓' : ' · ✗'}` }));
  return [
    { label: `Task ${run.taskIndex} in other experiments${workflowName ? ` of ${workflowName}` : ''}`, runs: sameTask },
    { label: 'Other tasks of this experiment', runs: others },
  ].filter((g) => g.runs.length > 0);
}

/** What differs in a node run, grouped by aspect: `input (plan) · prompt (call 0 prompt)`; `same` when nothing does. */
export function differsText(n: AlignedNode): string {
  return differsTextOf(n) || 'same';
}

/**
 * `value` clipped to about `width` characters around `offset` (the first differing character),
 * with `…` where text was cut; `(none)` for an absent value.
 */
export function clipAround(value: string | undefined, offset: number | undefined, width = 80): string {
  if (value === undefined) return '(none)';
  if (value.length <= width) return value;
  const from = offset === undefined ? 0 : Math.max(0, offset - Math.floor(width / 4));
  return (from > 0 ? '…' : '') + value.slice(from, from + width) + (value.length > from + width ? '…' : '');
}

/** The value a side shows in the table: the node run's first difference on that side (clipped), else nothing. */
export function sideValue(n: AlignedNode, side: 'a' | 'b', width = 48): string {
  const d: Difference | undefined = n.differences[0];
  if (!d || d.aspect === 'presence') return '';
  return clipAround(d[side], d.offset, width);
}
