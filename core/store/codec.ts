/**
 * Row <-> record mapping. SQL columns are snake_case; records use the types of core/trace.
 * NULL columns become absent keys (never `key: undefined`), so round trips compare equal.
 */
import { asExperimentId, asNodeId, asRoleName, asRunId, type NodeId } from '../ids.ts';
import { isNodeErrorCode, type FailureClass, type ModelCallRecord, type NodeErrorCode, type NodeEvent } from '../trace/index.ts';
import type { RunRecord } from '../results/index.ts';
import { checkEvent, checkRun } from './checks.ts';
import { StoreError } from './errors.ts';
import type { ExperimentCall, ExperimentRow, ExperimentStatus, ExperimentSummary, PlannedTask } from './types.ts';

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

/** Sets `target[key] = value` only when the column was not NULL. */
function opt<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | null | undefined): void {
  if (value != null) target[key] = value;
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

export function experimentFromRow(r: ExperimentDbRow): ExperimentRow {
  const e: ExperimentRow = {
    id: asExperimentId(r.id),
    kind: r.kind as ExperimentRow['kind'],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    workflowName: r.workflow_name,
    workflowYaml: r.workflow_yaml,
    workflowHash: r.workflow_hash,
    dataset: r.dataset,
    split: r.split,
    seed: r.seed,
    config: fromJson(r.config_json),
    status: r.status as ExperimentStatus,
  };
  opt(e, 'finishedAt', r.finished_at);
  opt(e, 'limit', r.task_limit);
  opt(e, 'pid', r.pid);
  return e;
}

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
}

export function taskFromRow(r: TaskDbRow): PlannedTask {
  const t: PlannedTask = { taskIndex: r.task_index, taskId: r.task_id, input: fromJson(r.input_json) };
  opt(t, 'expected', r.expected);
  return t;
}

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

export function runFromRow(r: RunDbRow): RunRecord {
  const run: RunRecord = {
    runId: asRunId(r.id),
    experimentId: asExperimentId(r.experiment_id),
    taskIndex: r.task_index,
    taskId: r.task_id,
    status: r.status as RunRecord['status'],
    score: r.score,
    correct: r.correct === 1,
    seed: r.seed,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    failures: fromJson(r.failures_json) as Partial<Record<FailureClass, number>>,
  };
  opt(run, 'answer', r.answer);
  opt(run, 'expected', r.expected);
  if (r.credit_json !== null && r.credit_json !== undefined) run.credit = fromJson(r.credit_json) as RunRecord['credit'];
  if (r.ladder_json !== null && r.ladder_json !== undefined) run.ladder = fromJson(r.ladder_json) as RunRecord['ladder'];
  if (r.simulated === 1) run.simulated = true;
  return run;
}

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

export function eventFromRow(r: EventDbRow, calls: ModelCallRecord[]): NodeEvent {
  const e: NodeEvent = {
    runId: asRunId(r.run_id),
    nodeId: asNodeId(r.node_id),
    attempt: r.attempt,
    seq: r.seq,
    kind: r.kind as NodeEvent['kind'],
    wiredBy: asRoleName(r.wired_by),
    inputs: fromJson(r.inputs_json) as Record<string, unknown>,
    status: r.status as NodeEvent['status'],
    calls,
    startedAt: r.started_at,
    endedAt: r.ended_at,
  };
  if (r.role != null) e.role = asRoleName(r.role);
  if (r.run_by != null) e.runBy = asRoleName(r.run_by);
  if (r.output_json != null) e.output = fromJson(r.output_json);
  opt(e, 'failureClass', r.failure_class as FailureClass | null);
  opt(e, 'errorCode', r.error_code === null ? null : nodeErrorCode(r.error_code, `run ${r.run_id} node ${r.node_id} attempt ${r.attempt}`));
  opt(e, 'message', r.message);
  if (r.causes_json != null) e.causes = fromJson(r.causes_json) as NodeId[];
  if (r.simulated != null) e.simulated = r.simulated === 1;
  if (r.fault != null) e.fault = r.fault;
  return e;
}

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

export function callFromRow(r: CallDbRow): ModelCallRecord {
  const c: ModelCallRecord = {
    callIndex: r.call_index,
    role: asRoleName(r.role),
    modelRef: r.model_ref,
    model: r.model,
    prompt: r.prompt,
    params: fromJson(r.params_json) as ModelCallRecord['params'],
    seed: r.seed,
    completion: r.completion,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    ms: r.ms,
    startedAt: r.started_at,
  };
  opt(c, 'system', r.system);
  if (r.json_schema != null) c.jsonSchema = fromJson(r.json_schema) as ModelCallRecord['jsonSchema'];
  opt(c, 'stopReason', r.stop_reason);
  opt(c, 'error', r.error);
  if (r.prompt_token_ids != null) c.promptTokenIds = JSON.parse(r.prompt_token_ids) as number[];
  if (r.completion_token_ids != null) c.completionTokenIds = JSON.parse(r.completion_token_ids) as number[];
  return c;
}

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
