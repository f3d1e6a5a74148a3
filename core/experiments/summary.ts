import type { FailureClass } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import type { LadderWeights } from '../workflow/graph.ts';
import { answerGuard, type AnswerGuard } from '../guards/index.ts';

/** Mean ladder of one role over an experiment's runs. */
export interface RoleSummary {
  format: number;
  validity: number;
  completion: number;
  correctness: number;
  credit: number;
  /** Mean h_ρ. */
  reward: number;
  /** Mean highest rung reached (0..5). */
  highestRung: number;
  weights: LadderWeights;
  /** Root failures blamed on the role, summed over runs. */
  blamed: number;
  /** Runs whose root failures include this role's as ambiguous candidate. */
  ambiguous: number;
}

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
  /** Per role: mean rungs and reward, blame counts. */
  roles: Record<string, RoleSummary>;
  /** Runs with no failed node and a wrong answer: invisible to structural credit. */
  silentRuns: number;
  /** Runs containing injected (simulated) faults. */
  simulatedRuns: number;
  /**
   * Node outputs, summed over runs and roles, that parsed only once repaired (JSON found in a
   * fenced block or prose; `RoleLadder.repaired`), and that were cut at `max_tokens` with the
   * node still ok (`RoleLadder.cut`).
   */
  outputs: { repaired: number; cut: number };
  /** The best constant policy of the runs' labels, the distinct answers and the CONSTANT flag (core/guards answerGuard). */
  guard: AnswerGuard;
}

/** Aggregates stored runs into the report. Pure. */
export function summarizeRuns(experimentId: string, runs: readonly RunRecord[], extra: { tasksPlanned: number; wallSeconds: number; status: string; classOf?: ((label: string) => string) | undefined }): ExperimentReport {
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
  const roles: Record<string, RoleSummary> = {};
  let silentRuns = 0;
  let simulatedRuns = 0;
  const outputs = { repaired: 0, cut: 0 };
  for (const r of runs) {
    if (r.credit?.silent) silentRuns++;
    if (r.simulated) simulatedRuns++;
    for (const [role, l] of Object.entries(r.ladder ?? {})) {
      const s = (roles[role] ??= { format: 0, validity: 0, completion: 0, correctness: 0, credit: 0, reward: 0, highestRung: 0, weights: l.weights, blamed: 0, ambiguous: 0 });
      s.format += l.format / n;
      s.validity += l.validity / n;
      s.completion += l.completion / n;
      s.correctness += l.correctness / n;
      s.credit += l.credit / n;
      s.reward += l.reward / n;
      s.highestRung += l.highestRung / n;
      s.blamed += r.credit?.byRole[role]?.rootFailures.length ?? 0;
      outputs.repaired += l.repaired ?? 0;
      outputs.cut += l.cut ?? 0;
      if (r.credit?.ambiguous.some((a) => a.candidates.includes(l.role))) s.ambiguous++;
    }
  }
  for (const r of Object.values(roles)) {
    for (const k of ['format', 'validity', 'completion', 'correctness', 'credit', 'reward', 'highestRung'] as const) r[k] = Math.round(r[k] * 1e9) / 1e9;
  }
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
    roles,
    silentRuns,
    simulatedRuns,
    outputs,
    guard: answerGuard(runs, extra.classOf),
  };
}
