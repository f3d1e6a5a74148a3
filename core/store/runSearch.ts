/**
 * Finding runs (issue 29, "find any run"): the filters of `flowlab ls` and the window's Runs
 * table — experiment, kind, workflow, dataset, model, status, correct/wrong, failure class,
 * blamed role, rollout group, date — and full-text search over a run's prompts, completions and
 * outputs with SQLite FTS5 (sqlite.org/fts5.html).
 *
 * Layout (schema version 11, `runSearchMigration`):
 * - `run_docs(doc INTEGER PRIMARY KEY, run_id UNIQUE -> runs ON DELETE CASCADE)`: one search
 *   document per run. The FTS rowid is `doc`, not the runs table's implicit rowid, which VACUUM may
 *   renumber (sqlite.org/lang_vacuum.html).
 * - `run_fts`: a contentless FTS5 table (`content=''`, `contentless_delete=1`) with three columns,
 *   `prompt` (system text and prompt of every model call), `completion` (every completion) and
 *   `output` (every node output as JSON, and the answer). Contentless: the text lives once, in
 *   model_calls and node_events; the index holds only tokens. A trigger deletes a run's document
 *   when its `run_docs` row goes (so when the run or its experiment is deleted).
 * - `run_blame(run_id, role)`: the roles blamed by the run's root failures (credit_json
 *   `roots[].blamed`), filled by a trigger on every insert into `runs`.
 * The migration indexes the runs already stored; the store indexes each new run in the
 * transaction that writes it (`RunSearchIndex.index`), so a search never misses a stored run.
 */
import type { Database, Statement } from 'better-sqlite3';
import { FlowlabError } from '../errors.ts';
import type { RunRecord } from '../results/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import { runFromRow, type RunDbRow } from './codec.ts';

/** The migration (schema version 11): tables, triggers, and the existing runs indexed. */
export function runSearchMigration(db: Database): void {
  db.exec(/* sql */ `
CREATE TABLE run_docs (
  doc     INTEGER PRIMARY KEY,               -- run_fts rowid
  run_id  TEXT NOT NULL UNIQUE REFERENCES runs(id) ON DELETE CASCADE
);
CREATE VIRTUAL TABLE run_fts USING fts5(prompt, completion, output, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
CREATE TRIGGER run_docs_gone AFTER DELETE ON run_docs BEGIN DELETE FROM run_fts WHERE rowid = old.doc; END;

CREATE TABLE run_blame (
  run_id  TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  role    TEXT NOT NULL,
  PRIMARY KEY (run_id, role)
) WITHOUT ROWID;
CREATE INDEX run_blame_role ON run_blame(role, run_id);
CREATE TRIGGER runs_blame AFTER INSERT ON runs WHEN new.credit_json IS NOT NULL BEGIN
  INSERT OR IGNORE INTO run_blame (run_id, role)
    SELECT new.id, json_extract(value, '$.blamed') FROM json_each(new.credit_json, '$.roots')
    WHERE json_type(value, '$.blamed') = 'text';
END;
CREATE INDEX runs_started ON runs(started_at);
`);
  db.exec(/* sql */ `
INSERT OR IGNORE INTO run_blame (run_id, role)
  SELECT r.id, json_extract(j.value, '$.blamed') FROM runs r, json_each(r.credit_json, '$.roots') j
  WHERE r.credit_json IS NOT NULL AND json_valid(r.credit_json) AND json_type(j.value, '$.blamed') = 'text';
INSERT INTO run_docs (run_id) SELECT id FROM runs ORDER BY rowid;
INSERT INTO run_fts (rowid, prompt, completion, output)
  SELECT d.doc,
    (SELECT group_concat(coalesce(c.system || char(10), '') || c.prompt, char(10)) FROM node_events e JOIN model_calls c ON c.node_event_id = e.id WHERE e.run_id = d.run_id),
    (SELECT group_concat(c.completion, char(10)) FROM node_events e JOIN model_calls c ON c.node_event_id = e.id WHERE e.run_id = d.run_id),
    coalesce((SELECT group_concat(e.output_json, char(10)) FROM node_events e WHERE e.run_id = d.run_id), '') || char(10) || coalesce((SELECT answer FROM runs WHERE id = d.run_id), '')
  FROM run_docs d;
`);
}

/** Where full-text search looks: one column, or all three. */
export const SEARCH_FIELDS = ['any', 'prompt', 'completion', 'output'] as const;
export type SearchField = (typeof SEARCH_FIELDS)[number];

/** Orders of the result. `started`: run start time; `duration`: ended - started (ms); `tokens`: prompt + completion. */
export const RUN_SORT_KEYS = ['started', 'experiment', 'task', 'score', 'tokens', 'duration'] as const;
export type RunSortKey = (typeof RUN_SORT_KEYS)[number];

/** The failure classes a run's `failures` counts (core/trace). */
export const FAILURE_CLASSES = ['wiring', 'execution', 'cascade', 'infrastructure'] as const;

/**
 * A search: every given field narrows the result (AND). Strings match exactly except `workflow`
 * and `model`, which match a part of the name, case-insensitively. Times are epoch ms.
 */
export interface RunQuery {
  experimentId?: string;
  /** Experiment kind: run, blame-eval, rollouts, import, mass. */
  kind?: string;
  /** Part of the workflow's name. */
  workflow?: string;
  dataset?: string;
  /** Part of a model file name in the experiment's configuration (`config.models.models`). */
  model?: string;
  status?: 'completed' | 'failed' | 'cancelled';
  /** true: graded correct; false: graded wrong. */
  correct?: boolean;
  /** Runs with at least one node failure of this class. */
  failureClass?: (typeof FAILURE_CLASSES)[number];
  /** Runs with a root failure blamed on this role. */
  blamed?: string;
  /** A rollout group: the task id the group was sampled for (core/rollouts `groupKeyOf`), its rollouts `<key>#r<k>`. */
  group?: string;
  /** Runs with an annotation (of the run or one of its nodes) carrying this tag (annotations.ts). */
  tag?: string;
  /** Runs started at or after / before this time (epoch ms). */
  since?: number;
  until?: number;
  /**
   * Words to find (all of them, in any order); `"two words"` is a phrase, `word*` a prefix. Matched
   * by FTS5's unicode61 tokenizer: case and diacritics are ignored, punctuation separates words.
   */
  text?: string;
  /** Where `text` must occur. Default `any`. */
  field?: SearchField;
  sort?: RunSortKey;
  /** Default: `desc` for started, `asc` otherwise. */
  order?: 'asc' | 'desc';
  /** Rows skipped (paging). Default 0. */
  offset?: number;
  /** Rows returned, 1..RUN_PAGE_MAX. Default 100. */
  limit?: number;
}

/** The most rows one search returns. */
export const RUN_PAGE_MAX = 1000;

/** One found run, with its experiment's names and the roles its root failures blame. */
export interface RunHit extends RunRecord {
  kind: string;
  workflowName: string;
  dataset: string;
  /** Roles blamed by root failures, sorted. */
  blamed: string[];
  /** The tags of the run's annotations (its own and its nodes'), sorted, distinct. */
  tags: string[];
  /** In a rollouts experiment (G rollouts per task, `config.rollouts.group`): the dataset task's position and the rollout's, 0-based. */
  rollout?: { task: number; index: number };
}

/** How every view and `flowlab ls` name a run's task: its task index, or `task/rollout` in a rollout group. */
export function taskLabel(hit: Pick<RunHit, 'taskIndex' | 'rollout'>): string {
  return hit.rollout ? `${hit.rollout.task}/${hit.rollout.index}` : String(hit.taskIndex);
}

/** A page of the result and how many runs match in all. */
export interface RunSearchResult {
  total: number;
  rows: RunHit[];
}

/** A query that cannot run: `field` names the query field at fault. */
export class RunQueryError extends FlowlabError<'BAD_QUERY'> {
  override readonly name = 'RunQueryError';
}

/**
 * `text` as an FTS5 query restricted to `field`: each word or `"phrase"` quoted (so FTS5 operators
 * and punctuation in the user's text are literal), `word*` kept as a prefix, all ANDed.
 * Errors: `BAD_QUERY` (field `text`) when no word is left.
 */
export function ftsQuery(text: string, field: SearchField = 'any'): string {
  const terms: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|(\S+)/g)) {
    const phrase = m[1] !== undefined;
    let t = phrase ? m[1]! : m[2]!;
    const prefix = !phrase && t.length > 1 && t.endsWith('*');
    if (prefix) t = t.slice(0, -1);
    if (!/[\p{L}\p{N}]/u.test(t)) continue; // only punctuation: no token to find
    terms.push(`"${t.replaceAll('"', '""')}"${prefix ? ' *' : ''}`);
  }
  if (terms.length === 0) throw new RunQueryError('BAD_QUERY', `search text ${JSON.stringify(text)} has no word to find (letters or digits)`, { field: 'text' });
  const body = terms.join(' AND ');
  return field === 'any' ? body : `${field} : (${body})`;
}

const SORT_SQL: Record<RunSortKey, string> = {
  started: 'r.started_at',
  experiment: 'r.experiment_id',
  task: 'r.task_index',
  score: 'r.score',
  tokens: '(r.prompt_tokens + r.completion_tokens)',
  duration: '(r.ended_at - r.started_at)',
};

/** The WHERE clause and its parameters for `q` (without paging and order). Errors: `BAD_QUERY`. */
export function whereOf(q: RunQuery, textPlan: 'set' | 'drive' = 'set'): { sql: string; params: unknown[]; joinExperiment: boolean } {
  const where: string[] = [];
  const params: unknown[] = [];
  let joinExperiment = false;
  const add = (sql: string, ...p: unknown[]) => {
    where.push(sql);
    params.push(...p);
  };
  if (q.experimentId !== undefined) add('r.experiment_id = ?', q.experimentId);
  if (q.kind !== undefined) (joinExperiment = true), add('x.kind = ?', q.kind);
  if (q.workflow !== undefined) (joinExperiment = true), add(`instr(lower(x.workflow_name), lower(?)) > 0`, q.workflow);
  if (q.dataset !== undefined) (joinExperiment = true), add('x.dataset = ?', q.dataset);
  if (q.model !== undefined) {
    joinExperiment = true;
    add(`EXISTS (SELECT 1 FROM json_each(x.config_json, '$.models.models') m WHERE instr(lower(m.value), lower(?)) > 0)`, q.model);
  }
  if (q.status !== undefined) add('r.status = ?', q.status);
  if (q.correct !== undefined) add('r.correct = ?', q.correct ? 1 : 0);
  if (q.failureClass !== undefined) {
    if (!(FAILURE_CLASSES as readonly string[]).includes(q.failureClass)) {
      throw new RunQueryError('BAD_QUERY', `failure class "${q.failureClass}" is not one of ${FAILURE_CLASSES.join(', ')}`, { field: 'failureClass' });
    }
    add(`coalesce(json_extract(r.failures_json, '$.${q.failureClass}'), 0) > 0`);
  }
  if (q.blamed !== undefined) add('EXISTS (SELECT 1 FROM run_blame b WHERE b.run_id = r.id AND b.role = ?)', q.blamed);
  if (q.group !== undefined) add(`(r.task_id = ? OR (substr(r.task_id, 1, length(?) + 2) = ? || '#r'))`, q.group, q.group, q.group);
  if (q.tag !== undefined) add('r.id IN (SELECT t.run_id FROM annotation_tags t WHERE t.tag = ?)', q.tag);
  if (q.since !== undefined) add('r.started_at >= ?', q.since);
  if (q.until !== undefined) add('r.started_at < ?', q.until);
  if (q.text !== undefined) {
    const match = ftsQuery(q.text, q.field ?? 'any');
    if (textPlan === 'drive') {
      // Few hits for many candidates: the hits drive the query (each hit's run looked up).
      add('r.id IN (SELECT d.run_id FROM run_docs d WHERE d.doc IN (SELECT rowid FROM run_fts WHERE run_fts MATCH ?))', match);
    } else {
      // `+d.doc`: the FTS hits are built once into a lookup table, and each candidate run is checked
      // against it; without the `+`, SQLite drives run_docs' index by every hit for every run (a run
      // of 1,000 candidates and 27,000 hits took 23 s instead of 7 ms; bench/search.ts).
      add('EXISTS (SELECT 1 FROM run_docs d WHERE d.run_id = r.id AND +d.doc IN (SELECT rowid FROM run_fts WHERE run_fts MATCH ?))', match);
    }
  }
  return { sql: where.length ? `WHERE ${where.join(' AND ')}` : '', params, joinExperiment };
}

interface HitDbRow extends RunDbRow {
  x_kind: string;
  x_workflow: string;
  x_dataset: string;
  blamed_roles: string | null;
  tag_list: string | null;
  x_group: number | null;
}

/**
 * The search side of the store over one connection: `index` (called by the store in the
 * transaction that writes a run) and `search`. Created only when the schema has the tables.
 */
export class RunSearchIndex {
  private readonly addDoc: Statement;
  private readonly addText: Statement;
  private readonly pages = new Map<string, Statement>();
  /** Whether the annotation tables exist (migration 16; a store opened with an older migration list, in tests, lacks them). */
  private readonly annotated: boolean;

  constructor(private readonly db: Database) {
    this.annotated = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'annotation_tags'`).pluck().get() === 1;
    this.addDoc = db.prepare('INSERT INTO run_docs (run_id) VALUES (?)');
    this.addText = db.prepare('INSERT INTO run_fts (rowid, prompt, completion, output) VALUES (?, ?, ?, ?)');
  }

  /** Whether `db` has the search tables (schema version 11 or later). */
  static available(db: Database): boolean {
    return db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'run_docs'`).pluck().get() === 1;
  }

  /** Adds a just-written run's text to the index (the caller's transaction makes it all or nothing). */
  index(run: RunRecord, events: readonly NodeEvent[]): void {
    const prompts: string[] = [];
    const completions: string[] = [];
    const outputs: string[] = [];
    for (const e of events) {
      if (e.output !== undefined) outputs.push(JSON.stringify(e.output) ?? '');
      for (const c of e.calls ?? []) {
        prompts.push(c.system === undefined ? c.prompt : `${c.system}\n${c.prompt}`);
        completions.push(c.completion);
      }
    }
    outputs.push(run.answer ?? '');
    const doc = this.addDoc.run(run.runId).lastInsertRowid;
    this.addText.run(doc, prompts.join('\n'), completions.join('\n'), outputs.join('\n'));
  }

  /** The runs matching `q`, one page in the asked order, and their total. Errors: `BAD_QUERY`. */
  search(q: RunQuery): RunSearchResult {
    const limit = q.limit ?? 100;
    const offset = q.offset ?? 0;
    if (!Number.isInteger(limit) || limit < 1 || limit > RUN_PAGE_MAX) throw new RunQueryError('BAD_QUERY', `limit ${limit} is not an integer from 1 to ${RUN_PAGE_MAX}`, { field: 'limit' });
    if (!Number.isInteger(offset) || offset < 0) throw new RunQueryError('BAD_QUERY', `offset ${offset} is not a whole number`, { field: 'offset' });
    const sort = q.sort ?? 'started';
    if (!(sort in SORT_SQL)) throw new RunQueryError('BAD_QUERY', `sort "${sort}" is not one of ${RUN_SORT_KEYS.join(', ')}`, { field: 'sort' });
    const order = q.order ?? (sort === 'started' ? 'desc' : 'asc');
    if (order !== 'asc' && order !== 'desc') throw new RunQueryError('BAD_QUERY', `order "${String(order)}" is not asc or desc`, { field: 'order' });
    if (q.tag !== undefined && !this.annotated) throw new RunQueryError('BAD_QUERY', 'this database has no annotations (schema older than version 16)', { field: 'tag' });
    const plan = q.text === undefined ? { page: whereOf(q), count: undefined } : this.textWhere(q);
    const { sql: where, params, joinExperiment } = plan.page;
    const join = joinExperiment ? 'JOIN experiments x ON x.id = r.experiment_id' : '';
    const dir = order.toUpperCase();
    // The page's ids first (the narrow query), then its rows with their experiment and blame.
    const page = `SELECT r.id FROM runs r ${join} ${where} ORDER BY ${SORT_SQL[sort]} ${dir}, r.experiment_id ${dir}, r.task_index ${dir} LIMIT ? OFFSET ?`;
    const rows = this.statement(`
      WITH page AS (${page})
      SELECT r.*, x.kind AS x_kind, x.workflow_name AS x_workflow, x.dataset AS x_dataset,
        CASE WHEN x.kind = 'rollouts' THEN json_extract(x.config_json, '$.rollouts.group') END AS x_group,
        (SELECT group_concat(role, char(31)) FROM (SELECT role FROM run_blame b WHERE b.run_id = r.id ORDER BY role)) AS blamed_roles,
        ${this.annotated ? '(SELECT group_concat(tag, char(31)) FROM (SELECT DISTINCT tag FROM annotation_tags t WHERE t.run_id = r.id ORDER BY tag))' : 'NULL'} AS tag_list
      FROM page JOIN runs r ON r.id = page.id JOIN experiments x ON x.id = r.experiment_id
      ORDER BY ${SORT_SQL[sort]} ${dir}, r.experiment_id ${dir}, r.task_index ${dir}`).all(...params, limit, offset) as HitDbRow[];
    // A first page that is not full is the whole result: no count needed.
    const counted = plan.count ?? plan.page;
    const countJoin = counted.joinExperiment ? 'JOIN experiments x ON x.id = r.experiment_id' : '';
    const total = offset === 0 && rows.length < limit ? rows.length : ((this.statement(`SELECT count(*) FROM runs r ${countJoin} ${counted.sql}`).pluck().get(...counted.params) as number) ?? 0);
    return {
      total,
      rows: rows.map((row) => ({
        ...runFromRow(row),
        kind: row.x_kind,
        workflowName: row.x_workflow,
        dataset: row.x_dataset,
        blamed: row.blamed_roles ? row.blamed_roles.split('\u001f') : [],
        tags: row.tag_list ? row.tag_list.split('\u001f') : [],
        ...(Number.isInteger(row.x_group) && row.x_group! > 0 && { rollout: { task: Math.floor(row.task_index / row.x_group!), index: row.task_index % row.x_group! } }),
      })),
    };
  }

  /**
   * The WHERE clause of a query with search text, planned by size, since SQLite keeps no statistics
   * for an FTS table: `n` candidates (the runs the other filters keep, counted through their
   * indexes) against `h` hits (runs whose text matches, counted from the FTS index alone). With few
   * candidates (n < h / 40) each one's document is probed in the index (about 40 µs a run) and the
   * matches are passed on by id; otherwise the hits are built once into a lookup table that each
   * candidate is checked against (about 1 µs a hit), which lets the page walk an index in its order
   * and stop at its last row; with more candidates than hits the count lets the hits drive it.
   * Figures measured by bench/search.ts (30,000 and 100,000 runs, 2-core machine).
   */
  private textWhere(q: RunQuery): { page: ReturnType<typeof whereOf>; count?: ReturnType<typeof whereOf> } {
    const match = ftsQuery(q.text!, q.field ?? 'any');
    const { text: _t, field: _f, ...rest } = q;
    const base = whereOf(rest);
    const join = base.joinExperiment ? 'JOIN experiments x ON x.id = r.experiment_id' : '';
    const hits = this.statement('SELECT count(*) FROM run_fts WHERE run_fts MATCH ?').pluck().get(match) as number;
    const candidates = this.statement(`SELECT count(*) FROM runs r ${join} ${base.sql}`).pluck().get(...base.params) as number;
    if (candidates * 40 < hits) {
      const ids = this.statement(`SELECT r.id FROM runs r ${join} ${base.sql}`).pluck().all(...base.params) as string[];
      const probe = this.statement('SELECT 1 FROM run_docs d JOIN run_fts f ON f.rowid = d.doc WHERE d.run_id = ? AND run_fts MATCH ?').pluck();
      const found = ids.filter((id) => probe.get(id, match) !== undefined);
      return { page: { sql: `WHERE r.id IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(found)], joinExperiment: false } };
    }
    return { page: whereOf(q, 'set'), ...(candidates > hits && { count: whereOf(q, 'drive') }) };
  }

  private statement(sql: string): Statement {
    let st = this.pages.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.pages.set(sql, st);
    }
    return st;
  }
}
