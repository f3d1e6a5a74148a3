/**
 * Display helpers shared by the views. Every status is shown as a symbol AND a word, so it
 * reads without colour; the `tone` only adds colour on top.
 */
import type { ExperimentStatus } from '../../core/store/index.ts';
import type { FailureClass, NodeEvent, NodeStatus, RunRecord } from '../../core/trace/index.ts';

/** How a status looks: a symbol, a word, and a colour tone for CSS. */
export interface StatusLabel {
  symbol: string;
  text: string;
  tone: 'ok' | 'bad' | 'warn' | 'muted' | 'busy';
}

const NODE: Record<NodeStatus, StatusLabel> = {
  ok: { symbol: '✓', text: 'ok', tone: 'ok' },
  failed: { symbol: '✗', text: 'failed', tone: 'bad' },
  cascade: { symbol: '↳', text: 'cascade', tone: 'warn' },
  skipped: { symbol: '–', text: 'skipped', tone: 'muted' },
};

const RUN: Record<RunRecord['status'], StatusLabel> = {
  completed: { symbol: '✓', text: 'completed', tone: 'ok' },
  failed: { symbol: '✗', text: 'failed', tone: 'bad' },
  cancelled: { symbol: '⊘', text: 'cancelled', tone: 'muted' },
};

const EXPERIMENT: Record<ExperimentStatus, StatusLabel> = {
  running: { symbol: '●', text: 'running', tone: 'busy' },
  completed: { symbol: '✓', text: 'completed', tone: 'ok' },
  interrupted: { symbol: '⚠', text: 'interrupted', tone: 'warn' },
  cancelled: { symbol: '⊘', text: 'cancelled', tone: 'muted' },
  failed: { symbol: '✗', text: 'failed', tone: 'bad' },
};

const FAILURE_CLASS: Record<FailureClass, string> = {
  wiring: 'wiring (graph)',
  execution: 'execution (node)',
  cascade: 'cascade (upstream)',
  infrastructure: 'infrastructure (harness)',
};

/** Label of a node event's status. */
export const nodeStatusLabel = (s: NodeStatus): StatusLabel => NODE[s];
/** Label of a run's status. */
export const runStatusLabel = (s: RunRecord['status']): StatusLabel => RUN[s];
/** Label of an experiment's status. */
export const experimentStatusLabel = (s: ExperimentStatus): StatusLabel => EXPERIMENT[s];
/** Failure class with whose fault it is, or an empty string. */
export const failureClassLabel = (c: FailureClass | undefined): string => (c ? FAILURE_CLASS[c] : '');

/** `0.5` -> `50.0%`; null -> `–`. */
export function percent(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '–' : `${(x * 100).toFixed(1)}%`;
}

/** A node event's model tokens summed over its calls: prompt, completion. */
export function eventTokens(e: Pick<NodeEvent, 'calls'>): { prompt: number; completion: number } {
  let prompt = 0;
  let completion = 0;
  for (const c of e.calls) {
    prompt += c.promptTokens;
    completion += c.completionTokens;
  }
  return { prompt, completion };
}

/** A node event's error as one line: `CODE: message`, either part alone, or empty. */
export function eventError(e: Pick<NodeEvent, 'errorCode' | 'message'>): string {
  return [e.errorCode, e.message].filter(Boolean).join(': ');
}

/** Milliseconds as `850 ms` or `1.2 s`. */
export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
