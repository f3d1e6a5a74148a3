/**
 * Experiment-level numbers the Experiments view and chart show (pure): failures by class summed
 * over an experiment's runs, and whether anything in it was simulated (fault injection).
 */
import type { FailureClass, RunRecord } from '../../core/api/client.ts';

export const FAILURE_CLASSES = ['wiring', 'execution', 'cascade', 'infrastructure'] as const satisfies readonly FailureClass[];

export type FailureCounts = Record<FailureClass, number>;

/** Node failures per class over all runs (each run's `failures`). */
export function failuresByClass(runs: ReadonlyArray<Pick<RunRecord, 'failures'>>): FailureCounts {
  const out: FailureCounts = { wiring: 0, execution: 0, cascade: 0, infrastructure: 0 };
  for (const r of runs) for (const c of FAILURE_CLASSES) out[c] += r.failures[c] ?? 0;
  return out;
}

/**
 * True when the experiment contains injected faults: a blame-eval, a config marked simulated or
 * with `inject` specs, or any run marked simulated.
 */
export function isSimulated(e: { kind: string; config?: { simulated?: unknown; inject?: unknown } | null }, runs?: ReadonlyArray<Pick<RunRecord, 'simulated'>>): boolean {
  if (e.kind === 'blame-eval') return true;
  const config = e.config;
  if (config && typeof config === 'object' && (config.simulated === true || (Array.isArray(config.inject) && config.inject.length > 0))) return true;
  return Boolean(runs?.some((r) => r.simulated));
}

/** One point of the experiments chart. */
export interface ExperimentPoint {
  id: string;
  label: string;
  /** Accuracy in percent, or null with no runs. */
  accuracyPct: number | null;
  failures: FailureCounts | null;
  simulated: boolean;
}

/** Chart points, oldest first (the list is newest first), labelled compactly. */
export function experimentPoints(
  experiments: ReadonlyArray<{ id: string; workflowName: string; accuracy: number | null; kind: string }>,
  runsOf: (id: string) => ReadonlyArray<Pick<RunRecord, 'failures' | 'simulated'>> | undefined,
): ExperimentPoint[] {
  return [...experiments].reverse().map((e) => {
    const runs = runsOf(e.id);
    return {
      id: e.id,
      label: `${e.workflowName} · ${shortId(e.id)}`,
      accuracyPct: e.accuracy === null ? null : Math.round(e.accuracy * 1000) / 10,
      failures: runs ? failuresByClass(runs) : null,
      simulated: isSimulated(e, runs),
    };
  });
}

/** `exp-20250101-101500-ab12` -> `0101-1015`; other ids unchanged up to 16 characters. */
export function shortId(id: string): string {
  const m = /^exp-\d{4}(\d{4})-(\d{4})\d{2}-/.exec(id);
  return m ? `${m[1]}-${m[2]}` : id.length > 16 ? `${id.slice(0, 15)}…` : id;
}
