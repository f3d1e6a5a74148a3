/**
 * Counterfactual verdicts (counterfactual.ts) as data other tools read:
 * - OpenTelemetry GenAI evaluation results: one `gen_ai.evaluation.result` event per forked node
 *   run, on that node run's span of the parent run (core/otel runSpans `evaluations`), name
 *   `flowlab.counterfactual`, score 1 when fixing the node flips the run to success, label
 *   `causal` / `not_causal`;
 * - TRL stepwise supervision rows (Hugging Face TRL's "stepwise supervision" dataset type, read by
 *   its PRMTrainer: `{prompt, completions: string[], labels: boolean[]}`): one row per examined
 *   run, its node runs' outputs in event order as the steps, a step labelled false when fixing it
 *   flips the run (the step the run failed at), true otherwise; runs with no flipping fix are left
 *   out (no step is known to be wrong).
 */
import { isDesignRecord } from '../design/record.ts';
import type { NodeEvent } from '../trace/events.ts';
import type { CounterfactualReport, CounterfactualRun } from './counterfactual.ts';

/** The evaluation results of one run's verdict, for `OtelRun.evaluations`. */
export function evaluationsOf(v: CounterfactualRun): Array<{ nodeId: string; attempt: number; name: string; score: number; label: string; explanation: string }> {
  return v.trials.filter((t) => t.flipped !== null).map((t) => ({
    nodeId: t.nodeId, attempt: t.attempt, name: 'flowlab.counterfactual', score: t.flipped ? 1 : 0, label: t.flipped ? 'causal' : 'not_causal',
    explanation: `${t.intervention ?? "fix"} at ${t.nodeId}#${t.attempt} ${t.flipped ? 'flips the run to success' : 'leaves the run wrong'}${t.blamed ? ' (structurally blamed)' : ''}${t.injected ? ` (SIMULATED ${t.injected} fault)` : ''}`,
  }));
}

/** One TRL stepwise-supervision row. */
export interface StepwiseRow {
  prompt: string;
  completions: string[];
  labels: boolean[];
  /** Where it came from (extra keys are ignored by TRL). */
  runId: string;
}

/** The stepwise rows of a report; `eventsOf` reads a run's events, `promptOf` its task's prompt text. */
export function stepwiseRows(report: CounterfactualReport, eventsOf: (runId: string) => readonly NodeEvent[], promptOf: (runId: string) => string): StepwiseRow[] {
  const rows: StepwiseRow[] = [];
  for (const v of report.verdicts) {
    const causal = new Set(v.trials.filter((t) => t.flipped).map((t) => `${t.nodeId}#${t.attempt}`));
    if (!causal.size) continue;
    const steps = [...eventsOf(v.runId)].filter((e) => e.status === 'ok' || e.status === 'failed').sort((a, b) => a.seq - b.seq);
    rows.push({
      prompt: promptOf(v.runId),
      completions: steps.map((e) => `${e.nodeId}: ${stepText(e)}`),
      labels: steps.map((e) => !causal.has(`${e.nodeId}#${e.attempt}`)),
      runId: v.runId,
    });
  }
  return rows;
}

/** A step's text: a design node's design text, a string output as is, other outputs as JSON, a failure as its code. */
function stepText(e: NodeEvent): string {
  if (isDesignRecord(e.output)) return e.output.text;
  if (e.output === undefined) return `(failed: ${e.errorCode ?? e.status})`;
  return typeof e.output === 'string' ? e.output : JSON.stringify(e.output);
}
