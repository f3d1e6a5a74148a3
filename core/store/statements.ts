import type { Database, Statement } from 'better-sqlite3';

/** Columns of the three trace inserts, in the order of codec.ts's `runParams`, `eventParams`, `callParams`. */
export const RUN_COLUMNS = ['id', 'experiment_id', 'task_index', 'task_id', 'status', 'answer', 'expected', 'score', 'correct', 'seed',
  'prompt_tokens', 'completion_tokens', 'started_at', 'ended_at', 'failures_json', 'credit_json', 'ladder_json', 'simulated'] as const;
export const EVENT_COLUMNS = ['run_id', 'seq', 'node_id', 'attempt', 'kind', 'role', 'wired_by', 'run_by', 'status', 'failure_class',
  'error_code', 'message', 'causes_json', 'inputs_json', 'output_json', 'started_at', 'ended_at', 'simulated', 'fault'] as const;
export const CALL_COLUMNS = ['run_id', 'node_event_id', 'node_id', 'attempt', 'call_index', 'role', 'model_ref', 'model', 'system',
  'prompt', 'params_json', 'seed', 'json_schema', 'completion', 'prompt_tokens', 'completion_tokens', 'ms', 'started_at', 'stop_reason', 'error',
  'prompt_token_ids', 'completion_token_ids'] as const;

/** Rows per multi-row INSERT of `insertMany`: 256 rows of at most 23 values (5,888) stay far below SQLite's 32,766 parameters. */
export const MANY_ROWS = 256;

/**
 * `INSERT INTO table (columns) VALUES (...), (...)` with `rows` rows, prepared once per connection
 * and size. Node events are inserted with their `id` first (the caller numbers them as SQLite
 * would, max(id) + 1 onwards), so their model calls can be inserted in the same batch.
 */
function multiRowInserts(db: Database) {
  const cache = new Map<string, Statement>();
  const sql = (table: string, columns: readonly string[], rows: number) => {
    const row = `(${columns.map(() => '?').join(',')})`;
    return `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array(rows).fill(row).join(',')}`;
  };
  return (table: 'runs' | 'node_events' | 'model_calls', rows: number): Statement => {
    const key = `${table}:${rows}`;
    let st = cache.get(key);
    if (!st) {
      const columns = table === 'runs' ? RUN_COLUMNS : table === 'node_events' ? ['id', ...EVENT_COLUMNS] : CALL_COLUMNS;
      st = db.prepare(sql(table, columns, rows));
      cache.set(key, st);
    }
    return st;
  };
}

/** The model_calls columns read with the `model_call_settings` columns, when the table exists (schema version 10). */
function callSelect(db: Database): { columns: string; join: string; repair: boolean } {
  const has = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'model_call_settings'`).pluck().get() === 1;
  const repair = has && hasColumn(db, 'model_call_settings', 'repair');
  return has
    ? {
        repair,
        columns: `c.*, x.rendered_prompt, x.thinking, x.applied_json, x.prompt_tokens_evaluated${repair ? ', x.repair' : ''}`,
        join: 'LEFT JOIN model_call_settings x ON x.node_event_id = c.node_event_id AND x.call_index = c.call_index',
      }
    : { columns: 'c.*', join: '', repair: false };
}

/** Whether `table` has `column` (a column a later migration added: schema version 11's). */
function hasColumn(db: Database, table: string, column: string): boolean {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(table) as string[]).includes(column);
}

/** Every statement the store runs, prepared once per connection and reused. */
export function prepareStatements(db: Database) {
  const p = (sql: string): Statement => db.prepare(sql);
  const calls = callSelect(db);
  return {
    /** Undefined in a database without `model_call_settings` (opened with fewer migrations): the settings are then not stored. */
    insertCallSettings: calls.join
      ? calls.repair
        ? p(`INSERT INTO model_call_settings (node_event_id, call_index, rendered_prompt, thinking, applied_json, prompt_tokens_evaluated, repair) VALUES (?,?,?,?,?,?,?)`)
        : p(`INSERT INTO model_call_settings (node_event_id, call_index, rendered_prompt, thinking, applied_json, prompt_tokens_evaluated) VALUES (?,?,?,?,?,?)`)
      : undefined,
    /** Whether model_call_settings has the `repair` column (schema version 11): its insert then takes 7 values. */
    callSettingsRepair: calls.repair,
    insertMany: multiRowInserts(db),
    maxEventId: p('SELECT max(id) FROM node_events').pluck(),
    insertExperiment: p(`INSERT INTO experiments (id, created_at, updated_at, kind, workflow_name, workflow_yaml, workflow_hash,
      dataset, split, task_limit, seed, config_json, status, pid) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
    insertTask: p('INSERT INTO experiment_tasks (experiment_id, task_index, task_id, input_json, expected) VALUES (?,?,?,?,?)'),
    /** A task with meta (schema version 11); undefined in a database without `meta_json` (opened with fewer migrations): meta is then not stored. */
    insertTaskMeta: hasColumn(db, 'experiment_tasks', 'meta_json') && p('INSERT INTO experiment_tasks (experiment_id, task_index, task_id, input_json, expected, meta_json) VALUES (?,?,?,?,?,?)') || undefined,
    insertRun: p(`INSERT INTO runs (id, experiment_id, task_index, task_id, status, answer, expected, score, correct, seed,
      prompt_tokens, completion_tokens, started_at, ended_at, failures_json, credit_json, ladder_json, simulated)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
    insertEvent: p(`INSERT INTO node_events (run_id, seq, node_id, attempt, kind, role, wired_by, run_by, status, failure_class,
      error_code, message, causes_json, inputs_json, output_json, started_at, ended_at, simulated, fault)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),
    insertCall: p(`INSERT INTO model_calls (run_id, node_event_id, node_id, attempt, call_index, role, model_ref, model, system,
      prompt, params_json, seed, json_schema, completion, prompt_tokens, completion_tokens, ms, started_at, stop_reason, error,
      prompt_token_ids, completion_token_ids)
      VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`),

    experimentById: p('SELECT * FROM experiments WHERE id = ?'),
    experimentExists: p('SELECT 1 FROM experiments WHERE id = ?').pluck(),
    taskExists: p('SELECT 1 FROM experiment_tasks WHERE experiment_id = ? AND task_index = ?').pluck(),
    listExperiments: p(`SELECT e.*,
        (SELECT COUNT(*) FROM experiment_tasks t WHERE t.experiment_id = e.id) AS tasks_planned,
        r.runs_done, r.runs_completed, r.runs_correct, r.mean_score
      FROM experiments e
      LEFT JOIN (SELECT experiment_id, COUNT(*) AS runs_done, SUM(status = 'completed') AS runs_completed,
                        SUM(correct) AS runs_correct, AVG(score) AS mean_score
                 FROM runs GROUP BY experiment_id) r ON r.experiment_id = e.id
      ORDER BY e.created_at DESC, e.id DESC`),
    tasksOf: p('SELECT * FROM experiment_tasks WHERE experiment_id = ? ORDER BY task_index'),
    pendingOf: p(`SELECT t.* FROM experiment_tasks t
      WHERE t.experiment_id = ? AND NOT EXISTS
        (SELECT 1 FROM runs r WHERE r.experiment_id = t.experiment_id AND r.task_index = t.task_index)
      ORDER BY t.task_index`),
    runsOf: p('SELECT * FROM runs WHERE experiment_id = ? ORDER BY task_index'),
    runById: p('SELECT * FROM runs WHERE id = ?'),
    eventsOfRun: p('SELECT * FROM node_events WHERE run_id = ? ORDER BY seq'),
    // Through the run's events, on the keys node_events (run_id, seq) then model_calls (node_event_id,
    // call_index), in that order with no sort: model_calls has no run_id index since schema version 5.
    callsOfRun: p(`SELECT ${calls.columns} FROM node_events e JOIN model_calls c ON c.node_event_id = e.id ${calls.join}
      WHERE e.run_id = ? ORDER BY e.seq, c.call_index`),
    callsOfExperiment: p(`SELECT ${calls.columns}, r.task_index FROM runs r
      JOIN node_events e ON e.run_id = r.id
      JOIN model_calls c ON c.node_event_id = e.id ${calls.join}
      WHERE r.experiment_id = ? ORDER BY r.task_index, e.seq, c.call_index`),

    runningExperiments: p(`SELECT id, pid FROM experiments WHERE status = 'running'`),
    setStatus: p('UPDATE experiments SET status = ?, updated_at = ? WHERE id = ?'),
    claim: p(`UPDATE experiments SET status = 'running', pid = ?, finished_at = NULL, updated_at = ? WHERE id = ?`),
    finish: p('UPDATE experiments SET status = ?, finished_at = ?, updated_at = ? WHERE id = ?'),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
