/**
 * Row <-> record mapping. SQL columns are snake_case; records use the types of core/trace.
 * NULL columns become absent keys (never `key: undefined`), so round trips compare equal.
 */
import { asExperimentId, asNodeId, asRoleName, asRunId, type NodeId } from '../ids.ts';
import { isNodeErrorCode, type FailureClass, type ModelCallRecord, type NodeErrorCode, type NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { checkEvent, checkRun } from './checks.ts';
import { StoreError } from './errors.ts';
import { decodeExperimentConfig } from './config.ts';
import type { ExperimentCall, ExperimentRow, ExperimentStatus, ExperimentSummary, PlannedTask } from './types.ts';
import { REPAIR_KINDS, type RepairKind } from '../model/repair.ts';

/**
 * JSON text of `value`; undefined for `undefined` (stored as NULL).
 * Throws `INVALID_RECORD` naming `where()` when the value is not serialisable (cycle, BigInt).
 */
export function toJson(value: unknown, where: () => string): string | null {
  if (value === undefined) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw new StoreError('INVALID_RECORD', `${where()} is not JSON-serialisable: ${(err as Error).message}`, undefined, { cause: err });
  }
  return text ?? null; // functions and symbols stringify to undefined
}

export function fromJson(text: string | null): unknown {
  return text == null ? undefined : JSON.parse(text);
}

/** In a row table, the field whose value is handed to the decoder beside the row (a node event's calls). */
const GIVEN: unique symbol = Symbol('given');

/**
 * How one record field of type `V` reads from a row `R`: `[column]` takes the column's value as
 * it is (its type must fit the field); `[column, decode]` decodes the non-NULL value (with the
 * whole row at hand; undefined leaves the field out; each decoder names the type of the column it
 * reads); `[GIVEN]` takes the value handed in.
 */
type FieldOf<R, V> =
  | readonly [column: { [C in keyof R]-?: NonNullable<R[C]> extends V ? C : never }[keyof R]]
  | readonly [column: keyof R, decode: (value: never, row: R) => V | undefined]
  | readonly [given: typeof GIVEN];

/** Every field of record `T` (optional ones included), in the key order of the records it builds. */
type RowTable<R, T> = { readonly [K in keyof T]-?: FieldOf<R, T[K]> };

/**
 * The decoder of a row table: a record with the table's fields in its order, each from its
 * column (or the value handed in); a NULL column, or a decoder's undefined, leaves the field out.
 */
function rowDecoder<R, T, G = never>(table: RowTable<R, T>): (row: R, given?: G) => T {
  const entries = Object.entries(table) as [string, readonly [keyof R | typeof GIVEN, ((value: unknown, row: R) => unknown)?]][];
  // Parallel arrays and an index loop: this runs once per stored row read.
  const fields = entries.map(([field]) => field);
  const columns = entries.map(([, [column]]) => column);
  const decoders = entries.map(([, [, decode]]) => decode);
  return (row, given) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const column = columns[i]!;
      const value = column === GIVEN ? given : row[column];
      if (value == null) continue;
      const decode = decoders[i];
      const decoded = decode ? decode(value, row) : value;
      if (decoded !== undefined) out[fields[i]!] = decoded;
    }
    return out as T;
  };
}

/** The parsed `config_json` of experiment `id`. @throws StoreError `CORRUPT_RECORD` when the column is not JSON. */
function configJson(text: string, id: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new StoreError('CORRUPT_RECORD', `experiment ${id}: config: not JSON (${(err as Error).message})`, id, { cause: err });
  }
}

export interface ExperimentDbRow {
  id: string;
  kind: string;
  created_at: number;
  updated_at: number;
  finished_at: number | null;
  workflow_name: string;
  workflow_yaml: string;
  workflow_hash: string;
  dataset: string;
  split: string;
  task_limit: number | null;
  seed: number;
  config_json: string;
  status: string;
  pid: number | null;
}

export const experimentFromRow: (r: ExperimentDbRow) => ExperimentRow = rowDecoder<ExperimentDbRow, ExperimentRow>({
  id: ['id', asExperimentId],
  kind: ['kind', (k: string) => k as ExperimentRow['kind']],
  createdAt: ['created_at'],
  updatedAt: ['updated_at'],
  workflowName: ['workflow_name'],
  workflowYaml: ['workflow_yaml'],
  workflowHash: ['workflow_hash'],
  dataset: ['dataset'],
  split: ['split'],
  seed: ['seed'],
  config: ['config_json', (text: string, row) => decodeExperimentConfig(configJson(text, row.id), row.id)],
  status: ['status', (st: string) => st as ExperimentStatus],
  finishedAt: ['finished_at'],
  limit: ['task_limit'],
  pid: ['pid'],
});

export interface SummaryDbRow extends ExperimentDbRow {
  tasks_planned: number;
  runs_done: number | null;
  runs_completed: number | null;
  runs_correct: number | null;
  mean_score: number | null;
}

export function summaryFromRow(r: SummaryDbRow): ExperimentSummary {
  const done = r.runs_done ?? 0;
  const completed = r.runs_completed ?? 0;
  const correct = r.runs_correct ?? 0;
  return {
    ...experimentFromRow(r),
    tasksPlanned: r.tasks_planned,
    runsDone: done,
    runsCompleted: completed,
    runsCorrect: correct,
    accuracy: done ? correct / done : null,
    meanScore: done ? r.mean_score : null,
    completionRate: done ? completed / done : null,
  };
}

export interface TaskDbRow {
  task_index: number;
  task_id: string;
  input_json: string;
  expected: string | null;
  /** Schema version 11; absent from older files. */
  meta_json?: string | null;
}

export const taskFromRow: (r: TaskDbRow) => PlannedTask = rowDecoder<TaskDbRow, PlannedTask>({
  taskIndex: ['task_index'],
  taskId: ['task_id'],
  input: ['input_json', fromJson],
  expected: ['expected'],
  meta: ['meta_json', (v: string) => fromJson(v) as Record<string, unknown> | undefined],
});

export interface RunDbRow {
  id: string;
  experiment_id: string;
  task_index: number;
  task_id: string;
  status: string;
  answer: string | null;
  expected: string | null;
  score: number;
  correct: number;
  seed: number;
  prompt_tokens: number;
  completion_tokens: number;
  started_at: number;
  ended_at: number;
  failures_json: string;
  credit_json: string | null;
  ladder_json: string | null;
  simulated: number;
}

/** Positional parameters of the runs insert, in column order (statements.ts `RUN_COLUMNS`). */
export function runParams(run: RunRecord): unknown[] {
  const out: unknown[] = [];
  pushRunParams(out, run);
  return out;
}

/** Appends {@link runParams} to `out` (multi-row inserts build one array per statement). Enums checked first (checks.ts). */
export function pushRunParams(out: unknown[], run: RunRecord): void {
  checkRun(run);
  out.push(
    run.runId,
    run.experimentId,
    run.taskIndex,
    run.taskId,
    run.status,
    run.answer ?? null,
    run.expected ?? null,
    run.score,
    run.correct ? 1 : 0,
    run.seed,
    run.promptTokens,
    run.completionTokens,
    run.startedAt,
    run.endedAt,
    runJson(run.failures ?? {}, run, 'failures'),
    run.credit === undefined ? null : runJson(run.credit, run, 'credit'),
    run.ladder === undefined ? null : runJson(run.ladder, run, 'ladder'),
    run.simulated ? 1 : 0,
  );
}

/**
 * `JSON.stringify` for the hot insert path, without a closure per value: `BAD` when it throws,
 * so the caller builds the error message (through {@link toJson}) only then.
 */
const BAD: unique symbol = Symbol('not JSON-serialisable');
function quickJson(value: unknown): string | null | typeof BAD {
  if (value === undefined) return null;
  try {
    return JSON.stringify(value) ?? null;
  } catch {
    return BAD;
  }
}

function runJson(value: unknown, run: RunRecord, what: string): string | null {
  const j = quickJson(value);
  return j === BAD ? toJson(value, () => `run ${run.runId}: ${what}`) : j;
}

function eventJson(value: unknown, runId: string, e: NodeEvent, what: string): string | null {
  const j = quickJson(value);
  return j === BAD ? toJson(value, () => `run ${runId} node ${e.nodeId} attempt ${e.attempt} (seq ${e.seq}): ${what}`) : j;
}

function callJson(value: unknown, runId: string, e: NodeEvent, c: ModelCallRecord, what: string): string | null {
  const j = quickJson(value);
  return j === BAD ? toJson(value, () => `run ${runId} node ${e.nodeId} attempt ${e.attempt} call ${c.callIndex}: ${what}`) : j;
}

export const runFromRow: (r: RunDbRow) => RunRecord = rowDecoder<RunDbRow, RunRecord>({
  runId: ['id', asRunId],
  experimentId: ['experiment_id', asExperimentId],
  taskIndex: ['task_index'],
  taskId: ['task_id'],
  status: ['status', (st: string) => st as RunRecord['status']],
  score: ['score'],
  correct: ['correct', (c: number) => c === 1],
  seed: ['seed'],
  promptTokens: ['prompt_tokens'],
  completionTokens: ['completion_tokens'],
  startedAt: ['started_at'],
  endedAt: ['ended_at'],
  failures: ['failures_json', (j: string) => fromJson(j) as RunRecord['failures']],
  answer: ['answer'],
  expected: ['expected'],
  credit: ['credit_json', (j: string) => fromJson(j) as RunRecord['credit']],
  ladder: ['ladder_json', (j: string) => fromJson(j) as RunRecord['ladder']],
  simulated: ['simulated', (v: number) => (v === 1 ? true : undefined)],
});

export interface EventDbRow {
  id: number;
  run_id: string;
  seq: number;
  node_id: string;
  attempt: number;
  kind: string;
  role: string | null;
  wired_by: string;
  run_by: string | null;
  status: string;
  failure_class: string | null;
  error_code: string | null;
  message: string | null;
  causes_json: string | null;
  inputs_json: string;
  output_json: string | null;
  started_at: number;
  ended_at: number;
  simulated: number | null;
  fault: string | null;
}

/** Positional parameters of the node_events insert (run id taken from the run, not the event). */
export function eventParams(runId: string, e: NodeEvent): unknown[] {
  const out: unknown[] = [];
  pushEventParams(out, runId, e);
  return out;
}

/** Appends {@link eventParams} to `out`. */
export function pushEventParams(out: unknown[], runId: string, e: NodeEvent): void {
  checkEvent(runId, e);
  out.push(
    runId,
    e.seq,
    e.nodeId,
    e.attempt,
    e.kind,
    e.role ?? null,
    e.wiredBy,
    e.runBy ?? null,
    e.status,
    e.failureClass ?? null,
    e.errorCode ?? null,
    e.message ?? null,
    eventJson(e.causes, runId, e, 'causes'),
    eventJson(e.inputs ?? {}, runId, e, 'inputs'),
    eventJson(e.output, runId, e, 'output'),
    e.startedAt,
    e.endedAt,
    e.simulated === undefined ? null : e.simulated ? 1 : 0,
    e.fault ?? null,
  );
}

/** A node event from its row and its model calls (callFromRow). */
export const eventFromRow: (r: EventDbRow, calls: ModelCallRecord[]) => NodeEvent = rowDecoder<EventDbRow, NodeEvent, ModelCallRecord[]>({
  runId: ['run_id', asRunId],
  nodeId: ['node_id', asNodeId],
  attempt: ['attempt'],
  seq: ['seq'],
  kind: ['kind', (k: string) => k as NodeEvent['kind']],
  wiredBy: ['wired_by', asRoleName],
  inputs: ['inputs_json', (j: string) => fromJson(j) as Record<string, unknown>],
  status: ['status', (st: string) => st as NodeEvent['status']],
  calls: [GIVEN],
  startedAt: ['started_at'],
  endedAt: ['ended_at'],
  role: ['role', asRoleName],
  runBy: ['run_by', asRoleName],
  output: ['output_json', fromJson],
  failureClass: ['failure_class', (f: string) => f as FailureClass],
  errorCode: ['error_code', (code: string, r: EventDbRow) => nodeErrorCode(code, `run ${r.run_id} node ${r.node_id} attempt ${r.attempt}`)],
  message: ['message'],
  causes: ['causes_json', (j: string) => fromJson(j) as NodeId[]],
  simulated: ['simulated', (v: number) => v === 1],
  fault: ['fault'],
});

/** A stored node error code; `INVALID_RECORD` naming `where` when it is not one the engine records (core/trace/codes.ts). */
function nodeErrorCode(code: string, where: string): NodeErrorCode {
  if (isNodeErrorCode(code)) return code;
  throw new StoreError('INVALID_RECORD', `${where}: unknown node error code "${code}"`, where);
}

export interface CallDbRow {
  node_event_id: number;
  call_index: number;
  role: string;
  model_ref: string;
  model: string;
  system: string | null;
  prompt: string;
  params_json: string;
  seed: number;
  json_schema: string | null;
  completion: string;
  prompt_tokens: number;
  completion_tokens: number;
  ms: number;
  started_at: number;
  stop_reason: string | null;
  error: string | null;
  prompt_token_ids: string | null;
  completion_token_ids: string | null;
  /** From model_call_settings (absent before schema version 10, NULL without a row). */
  rendered_prompt?: string | null;
  thinking?: string | null;
  applied_json?: string | null;
  prompt_tokens_evaluated?: number | null;
  /** Schema version 11. */
  repair?: string | null;
}

/**
 * Positional parameters of the model_call_settings insert for call `c` of event `eventId`, or
 * undefined when the call has none of its fields (no row is written).
 */
export function callSettingsParams(runId: string, eventId: number, e: NodeEvent, c: ModelCallRecord, withRepair = false): unknown[] | undefined {
  const repair = withRepair && c.repair !== undefined;
  if (c.renderedPrompt === undefined && c.thinking === undefined && c.applied === undefined && c.promptTokensEvaluated === undefined && !repair) return undefined;
  const row = [
    eventId,
    c.callIndex,
    c.renderedPrompt ?? null,
    c.thinking ?? null,
    c.applied === undefined ? null : callJson(c.applied, runId, e, c, 'applied'),
    c.promptTokensEvaluated ?? null,
  ];
  if (withRepair) row.push(c.repair ?? null);
  return row;
}

/** Positional parameters of the model_calls insert. */
export function callParams(runId: string, eventId: number, e: NodeEvent, c: ModelCallRecord): unknown[] {
  const out: unknown[] = [];
  pushCallParams(out, runId, eventId, e, c);
  return out;
}

/** Appends {@link callParams} to `out`. */
export function pushCallParams(out: unknown[], runId: string, eventId: number, e: NodeEvent, c: ModelCallRecord): void {
  out.push(
    runId,
    eventId,
    e.nodeId,
    e.attempt,
    c.callIndex,
    c.role,
    c.modelRef,
    c.model,
    c.system ?? null,
    c.prompt,
    callJson(c.params, runId, e, c, 'params'),
    c.seed,
    callJson(c.jsonSchema, runId, e, c, 'jsonSchema'),
    c.completion,
    c.promptTokens,
    c.completionTokens,
    c.ms,
    c.startedAt,
    c.stopReason ?? null,
    c.error ?? null,
    c.promptTokenIds === undefined ? null : tokenIdsJson(c.promptTokenIds, () => `run ${runId} node ${e.nodeId} attempt ${e.attempt} call ${c.callIndex}: promptTokenIds`),
    c.completionTokenIds === undefined ? null : tokenIdsJson(c.completionTokenIds, () => `run ${runId} node ${e.nodeId} attempt ${e.attempt} call ${c.callIndex}: completionTokenIds`),
  );
}

export const callFromRow: (r: CallDbRow) => ModelCallRecord = rowDecoder<CallDbRow, ModelCallRecord>({
  callIndex: ['call_index'],
  role: ['role', asRoleName],
  modelRef: ['model_ref'],
  model: ['model'],
  prompt: ['prompt'],
  params: ['params_json', (j: string) => fromJson(j) as ModelCallRecord['params']],
  seed: ['seed'],
  completion: ['completion'],
  promptTokens: ['prompt_tokens'],
  completionTokens: ['completion_tokens'],
  ms: ['ms'],
  startedAt: ['started_at'],
  system: ['system'],
  jsonSchema: ['json_schema', (j: string) => fromJson(j) as ModelCallRecord['jsonSchema']],
  stopReason: ['stop_reason', (st: string) => st as ModelCallRecord['stopReason']],
  error: ['error'],
  promptTokenIds: ['prompt_token_ids', (j: string) => JSON.parse(j) as number[]],
  completionTokenIds: ['completion_token_ids', (j: string) => JSON.parse(j) as number[]],
  renderedPrompt: ['rendered_prompt'],
  thinking: ['thinking'],
  applied: ['applied_json', (j: string) => fromJson(j) as ModelCallRecord['applied']],
  promptTokensEvaluated: ['prompt_tokens_evaluated'],
  repair: ['repair', (k: string) => (REPAIR_KINDS as readonly string[]).includes(k) ? (k as RepairKind) : undefined],
});

/** Token ids as a JSON array (NULL when absent); `INVALID_RECORD` unless every id is a non-negative integer. */
function tokenIdsJson(ids: readonly number[] | undefined, where: () => string): string | null {
  if (ids === undefined) return null;
  if (!Array.isArray(ids) || !ids.every((t) => Number.isInteger(t) && t >= 0)) {
    throw new StoreError('INVALID_RECORD', `${where()} must be an array of non-negative integer token ids`);
  }
  return JSON.stringify(ids);
}

export interface ExperimentCallDbRow extends CallDbRow {
  run_id: string;
  task_index: number;
  node_id: string;
  attempt: number;
}

export function experimentCallFromRow(r: ExperimentCallDbRow): ExperimentCall {
  return { ...callFromRow(r), runId: asRunId(r.run_id), taskIndex: r.task_index, nodeId: asNodeId(r.node_id), attempt: r.attempt };
}
