/**
 * Display helpers shared by the views. Every status is shown as a symbol AND a word, so it
 * reads without colour; the `tone` only adds colour on top.
 */
import type { ExperimentStatus, FailureClass, NodeEvent, NodeStatus, RunRecord } from '../../core/api/client.ts';

/** How a status looks: a symbol, a word, and a colour tone for CSS. */
export interface StatusLabel {
  symbol: string;
  text: string;
  tone: 'ok' | 'bad' | 'warn' | 'muted' | 'busy';
}

const NODE: Record<NodeStatus, StatusLabel> = {
  ok: { symbol: '✓', text: 'ok', tone: 'ok' },
  failed: { symbol: '✗', text: 'failed', tone: 'bad' },
  cascade: { symbol: '↓', text: 'cascade', tone: 'warn' },
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

/** Bytes as `512 B`, `3.4 MiB`, `1.2 GiB`. */
export function bytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let x = n;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return i === 0 ? `${x} B` : `${x.toFixed(x < 10 ? 1 : 0)} ${units[i]}`;
}

/** A parameter count as `260K`, `1.5B`, `7B`; undefined -> `–`. */
export function paramCount(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  const fmt = (x: number, unit: string) => `${x >= 10 || Number.isInteger(x) ? Math.round(x) : x.toFixed(1)}${unit}`;
  if (n >= 1e9) return fmt(n / 1e9, 'B');
  if (n >= 1e6) return fmt(n / 1e6, 'M');
  if (n >= 1e3) return fmt(n / 1e3, 'K');
  return String(n);
}

/** Epoch ms as a local `YYYY-MM-DD HH:MM:SS`. */
export function timestamp(ms: number): string {
  const d = new Date(ms);
  const p = (x: number) => String(x).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** Any value as readable text: strings as they are, the rest as indented JSON, cut at `max` characters. */
export function showValue(v: unknown, max = 20_000): string {
  let s: string;
  if (typeof v === 'string') s = v;
  else if (v === undefined) s = '';
  else {
    try {
      s = JSON.stringify(v, null, 2) ?? String(v);
    } catch {
      s = String(v);
    }
  }
  return s.length > max ? `${s.slice(0, max)}\n… (${s.length - max} more characters)` : s;
}
