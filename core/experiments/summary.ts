import type { FailureClass, RunRecord } from '../trace/events.ts';

/** What `flowlab run` and `resume` report about an experiment (all stored runs). */
export interface ExperimentReport {
  experimentId: string;
  /** Runs stored. */
  runs: number;
  tasksPlanned: number;
  /** Correct runs / stored runs, 0..1. */
  accuracy: number;
  /** Runs that reached an answer / stored runs, 0..1. */
  completionRate: number;
  /** Node failures (final attempts) by class, summed over runs. */
  failuresByClass: Record<FailureClass, number>;
  promptTokens: number;
  completionTokens: number;
  /** Wall time of this command, seconds. */
  wallSeconds: number;
  /** Mean run duration, seconds. */
  secondsPerTask: number;
  status: string;
}

/** Aggregates stored runs into the report. Pure. */
export function summarizeRuns(experimentId: string, runs: readonly RunRecord[], extra: { tasksPlanned: number; wallSeconds: number; status: string }): ExperimentReport {
  const failuresByClass: Record<FailureClass, number> = { wiring: 0, execution: 0, cascade: 0, infrastructure: 0 };
  let correct = 0;
  let completed = 0;
  let promptTokens = 0;
  let completionTokens = 0;
  let ms = 0;
  for (const r of runs) {
    if (r.correct) correct++;
    if (r.status === 'completed') completed++;
    promptTokens += r.promptTokens;
    completionTokens += r.completionTokens;
    ms += r.endedAt - r.startedAt;
    for (const [k, v] of Object.entries(r.failures)) failuresByClass[k as FailureClass] += v ?? 0;
  }
  const n = runs.length;
  return {
    experimentId,
    runs: n,
    tasksPlanned: extra.tasksPlanned,
    accuracy: n ? correct / n : 0,
    completionRate: n ? completed / n : 0,
    failuresByClass,
    promptTokens,
    completionTokens,
    wallSeconds: extra.wallSeconds,
    secondsPerTask: n ? ms / n / 1000 : 0,
    status: extra.status,
  };
}
