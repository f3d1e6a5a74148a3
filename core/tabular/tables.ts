/**
 * Stored runs as three flat tables, for spreadsheets, pandas and DuckDB: `runs` (one row per
 * run, with its grade and a credit summary), `node_events` (one row per node run) and
 * `model_calls` (one row per model call), joined on `run_id` (and `node_id`, `attempt`). Column
 * names are snake_case, as the stored columns (core/store/schema.ts) and the TRL export
 * (core/rollouts) name them. Times are epoch milliseconds.
 *
 * Written as CSV (RFC 4180: comma-separated, CRLF line ends, a header row, fields quoted with
 * `"` and inner quotes doubled when they hold a comma, a quote or a line break; nested values
 * as JSON text, absent values empty) or as JSON lines (one object per row, nested values as JSON,
 * absent values left out). Every value is written as stored: prompts and completions included.
 */
import type { RunRecord } from '../results/index.ts';
import type { NodeEvent } from '../trace/index.ts';

export type Row = Record<string, unknown>;

export const RUN_COLUMNS = [
  'run_id', 'experiment_id', 'task_index', 'task_id', 'status', 'answer', 'expected', 'score', 'correct', 'seed',
  'prompt_tokens', 'completion_tokens', 'started_at', 'ended_at', 'ms', 'simulated', 'failures',
  'root_failures', 'cascades', 'blamed', 'silent', 'credit', 'ladder',
] as const;

export const NODE_EVENT_COLUMNS = [
  'run_id', 'seq', 'node_id', 'attempt', 'kind', 'role', 'wired_by', 'run_by', 'status', 'failure_class', 'error_code',
  'message', 'causes', 'simulated', 'fault', 'started_at', 'ended_at', 'ms', 'calls', 'prompt_tokens', 'completion_tokens',
  'inputs', 'output',
] as const;

export const MODEL_CALL_COLUMNS = [
  'run_id', 'node_id', 'attempt', 'call_index', 'role', 'model_ref', 'model', 'seed', 'temperature', 'top_p', 'top_k',
  'max_tokens', 'params', 'prompt_tokens', 'completion_tokens', 'ms', 'started_at', 'stop_reason', 'error',
  'system', 'prompt', 'json_schema', 'completion', 'prompt_token_ids', 'completion_token_ids',
] as const;

/** The columns of `annotations.<ext>` (core/store/annotations.ts; `flowlab annotate`): one row per annotation. */
export const ANNOTATION_COLUMNS = ['annotation_id', 'run_id', 'experiment_id', 'node_id', 'score', 'tags', 'note', 'author', 'created_at'] as const;

/** Annotations as rows of `ANNOTATION_COLUMNS` (a whole-run annotation has no node_id), in the order given. */
export function annotationRows(annotations: ReadonlyArray<{ id: string; runId: string; experimentId: string; nodeId?: string; score?: number; tags: readonly string[]; note: string; author: string; createdAt: number }>): Row[] {
  return annotations.map((a) => ({ annotation_id: a.id, run_id: a.runId, experiment_id: a.experimentId, node_id: a.nodeId, score: a.score, tags: a.tags, note: a.note, author: a.author, created_at: a.createdAt }));
}

export interface TraceTables {
  runs: Row[];
  node_events: Row[];
  model_calls: Row[];
}

/** The three tables of `runs` (each with its events by seq and their calls), rows in the order given. */
export function traceTables(runs: ReadonlyArray<{ run: RunRecord; events: readonly NodeEvent[] }>): TraceTables {
  const out: TraceTables = { runs: [], node_events: [], model_calls: [] };
  for (const { run, events } of runs) {
    const c = run.credit;
    out.runs.push({
      run_id: run.runId, experiment_id: run.experimentId, task_index: run.taskIndex, task_id: run.taskId, status: run.status,
      answer: run.answer, expected: run.expected, score: run.score, correct: run.correct, seed: run.seed,
      prompt_tokens: run.promptTokens, completion_tokens: run.completionTokens, started_at: run.startedAt, ended_at: run.endedAt,
      ms: run.endedAt - run.startedAt, simulated: run.simulated ?? false, failures: run.failures,
      root_failures: c?.roots.length, cascades: c?.cascades.length,
      blamed: c ? [...new Set(c.roots.flatMap((r) => (r.blamed ? [r.blamed] : [])))] : undefined, silent: c?.silent,
      credit: c, ladder: run.ladder,
    });
    for (const e of events) {
      out.node_events.push({
        run_id: run.runId, seq: e.seq, node_id: e.nodeId, attempt: e.attempt, kind: e.kind, role: e.role, wired_by: e.wiredBy,
        run_by: e.runBy, status: e.status, failure_class: e.failureClass, error_code: e.errorCode, message: e.message,
        causes: e.causes, simulated: e.simulated, fault: e.fault, started_at: e.startedAt, ended_at: e.endedAt, ms: e.endedAt - e.startedAt,
        calls: e.calls.length, prompt_tokens: e.calls.reduce((s, x) => s + x.promptTokens, 0), completion_tokens: e.calls.reduce((s, x) => s + x.completionTokens, 0),
        inputs: e.inputs, output: e.output,
      });
      for (const m of e.calls) {
        out.model_calls.push({
          run_id: run.runId, node_id: e.nodeId, attempt: e.attempt, call_index: m.callIndex, role: m.role, model_ref: m.modelRef, model: m.model,
          seed: m.seed, temperature: m.params.temperature, top_p: m.params.topP, top_k: m.params.topK, max_tokens: m.params.maxTokens, params: m.params,
          prompt_tokens: m.promptTokens, completion_tokens: m.completionTokens, ms: m.ms, started_at: m.startedAt, stop_reason: m.stopReason, error: m.error,
          system: m.system, prompt: m.prompt, json_schema: m.jsonSchema, completion: m.completion, prompt_token_ids: m.promptTokenIds, completion_token_ids: m.completionTokenIds,
        });
      }
    }
  }
  return out;
}

/** Columns whose values are JSON in a CSV cell even when they are strings (a node's output may be one). */
const JSON_COLUMNS: ReadonlySet<string> = new Set(['inputs', 'output']);

/** One CSV cell (RFC 4180 section 2: quoted when it holds a comma, a quote, CR or LF). */
function cell(column: string, v: unknown): string {
  let s: string;
  if (v === undefined) s = '';
  else if (JSON_COLUMNS.has(column) || (typeof v === 'object' && v !== null)) s = JSON.stringify(v) ?? '';
  else if (v === null) s = '';
  else s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** `rows` as CSV with a header row of `columns` (RFC 4180; see the module comment). */
export function toCsv(rows: readonly Row[], columns: readonly string[]): string {
  const lines = [columns.join(',')];
  for (const r of rows) lines.push(columns.map((c) => cell(c, r[c])).join(','));
  return lines.join('\r\n') + '\r\n';
}

/** `rows` as JSON lines, keys in `columns` order, absent values left out. */
export function toJsonl(rows: readonly Row[], columns: readonly string[]): string {
  return rows.map((r) => JSON.stringify(Object.fromEntries(columns.filter((c) => r[c] !== undefined).map((c) => [c, r[c]])))).join('\n') + (rows.length ? '\n' : '');
}
