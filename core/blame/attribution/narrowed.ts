/**
 * What the narrowed LLM judge sees: a Who&When log cut down by structure to the part structure
 * cannot decide. Structure-aware credit (FloWright; core/blame/credit) finds the first message that
 * surfaces an error, and everything after it is downstream of it; every message before it is in
 * its context (the log is one conversation), so structure cannot tell which of them made the
 * decisive mistake. The judge is asked only about those.
 */
import { STRUCTURAL_OPTIONS } from './baselines.ts';
import { logTrace, type SurfacingOptions } from './surfaced.ts';
import { agentKey, isHumanStep } from './whoAndWhen.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

/** A judge's view of one log: the steps shown and the answers allowed. */
export interface JudgeView {
  /** The steps shown, in log order. */
  steps: LogStep[];
  /** The agents the judge may name (normalised, order of first appearance). */
  agents: string[];
  /** The steps the judge may name. */
  candidateSteps: number[];
  /** One line on what structure saw, shown before the steps; empty for the whole log. */
  note: string;
  /** The first step that surfaced an error; null when none did (the whole log is shown). */
  firstError: number | null;
}

/**
 * The narrowed view of a log (structure: `logTrace` with `STRUCTURAL_OPTIONS`, overridable):
 *
 * - steps shown: 0 up to the first message that surfaces an error of any class (a harness crash,
 *   a wiring fault, an execution fault), inclusive; the whole log when none does;
 * - candidate steps: the shown messages of agents — not the human's (never blamed), and not a
 *   terminal's run whose author team authorship knows (its code's writer or its caller, itself a
 *   shown message): structure has already separated those;
 * - candidate agents: the speakers of the candidate steps.
 * A log with no candidate step gets the whole log's agent steps instead (nothing is guessed).
 */
export function narrowedView(log: WhoAndWhenLog, opts: SurfacingOptions = {}): JudgeView {
  const trace = logTrace(log, { ...STRUCTURAL_OPTIONS, ...opts });
  const first = trace.failures.length ? trace.failures.reduce((a, f) => (f.step < a.step ? f : a)) : null;
  const end = first ? first.step : log.steps.length - 1;
  const steps = log.steps.slice(0, end + 1);
  const authorKnown = (s: LogStep) => {
    const a = trace.authorship?.[s.index];
    return a !== undefined && a.terminal && a.authorStep !== s.index;
  };
  let candidates = steps.filter((s) => !isHumanStep(s) && !authorKnown(s));
  if (candidates.length === 0) candidates = log.steps.filter((s) => !isHumanStep(s));
  const agents: string[] = [];
  for (const s of candidates) if (!agents.some((a) => agentKey(a) === agentKey(s.agent))) agents.push(s.agent);
  const note = first
    ? `Step ${first.step} (${first.step === log.steps.length - 1 ? 'the last step' : `of ${log.steps.length}`}) surfaced an error (${first.rule}: ${first.evidence.replace(/\s+/g, ' ').slice(0, 100)}). ` +
      `Only steps 0–${end} are shown: the decisive mistake was made at or before it.`
    : '';
  return { steps, agents, candidateSteps: candidates.map((s) => s.index), note, firstError: first ? first.step : null };
}
