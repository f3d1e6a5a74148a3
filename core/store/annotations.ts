/**
 * Annotations (issue 29, "a person can score or tag a run and a node"): a person's score, tags and
 * note on a stored run, or on one node of it, with who wrote it and when. Langfuse calls these
 * scores, Arize Phoenix span annotations; here they are rows of their own (migration 16), never a
 * change to the run, so a run's record, trace and replay stay as they were written.
 *
 * Layout: `annotations(id, run_id -> runs ON DELETE CASCADE, node_id, score, tags_json, note,
 * author, created_at)` and `annotation_tags(tag, run_id, annotation_id -> annotations ON DELETE
 * CASCADE)`, the tags one row each so `flowlab ls --tag` and the Runs table's tag filter walk an
 * index. An annotation and its tags are written, and removed, in one transaction.
 */
import type { Database, Statement } from 'better-sqlite3';
import { randomInt } from 'node:crypto';
import * as z from 'zod';
import { StoreError } from './errors.ts';

/** Migration 16: the tables. */
export const ANNOTATIONS_SQL = /* sql */ `
CREATE TABLE annotations (
  id          TEXT PRIMARY KEY,                 -- ann-<yyyymmdd>-<hhmmss>-<4 base36>
  run_id      TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  node_id     TEXT,                             -- NULL: the whole run
  score       REAL,                             -- NULL: no score
  tags_json   TEXT NOT NULL,                    -- JSON array of tags, sorted, distinct
  note        TEXT NOT NULL DEFAULT '',
  author      TEXT NOT NULL,
  created_at  INTEGER NOT NULL                  -- epoch ms
);
CREATE INDEX annotations_run ON annotations(run_id, created_at);
CREATE TABLE annotation_tags (
  tag           TEXT NOT NULL,
  run_id        TEXT NOT NULL,
  annotation_id TEXT NOT NULL REFERENCES annotations(id) ON DELETE CASCADE,
  PRIMARY KEY (tag, run_id, annotation_id)
) WITHOUT ROWID;
CREATE INDEX annotation_tags_run ON annotation_tags(run_id, tag);
`;

/** Limits of one annotation's fields. */
export const ANNOTATION_LIMITS = { tags: 32, tagChars: 64, noteChars: 10_000, authorChars: 100, idChars: 200 } as const;

/** A tag: letters, digits and `- _ . : /`, 1..64 characters (no spaces, so `--tag a --tag b` and filters read alike). */
export const TAG_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N}\-_.:/]*$/u;

const text = (what: string, max: number) => z.string().min(1, `${what} must not be empty`).max(max, `${what} must be at most ${max} characters`).refine((s) => !s.includes('\0'), `${what} must not contain a NUL character (U+0000)`);

/** A new annotation as `Store.annotations.add` takes it (the API's `addAnnotation` payload). */
export const newAnnotationSchema = z
  .strictObject({
    runId: text('runId', ANNOTATION_LIMITS.idChars),
    nodeId: text('nodeId', ANNOTATION_LIMITS.idChars).optional(),
    score: z.number({ error: 'score must be a finite number' }).optional(),
    tags: z
      .array(text('a tag', ANNOTATION_LIMITS.tagChars).refine((t) => TAG_PATTERN.test(t), 'a tag is letters, digits and - _ . : / (no spaces), starting with a letter or digit'))
      .max(ANNOTATION_LIMITS.tags, `at most ${ANNOTATION_LIMITS.tags} tags`)
      .optional(),
    note: z.string().max(ANNOTATION_LIMITS.noteChars, `note must be at most ${ANNOTATION_LIMITS.noteChars} characters`).optional(),
    author: text('author', ANNOTATION_LIMITS.authorChars),
  })
  .refine((a) => a.score !== undefined || (a.tags?.length ?? 0) > 0 || (a.note ?? '').trim() !== '', { message: 'give a score, a tag or a note', path: ['score'] });

export type NewAnnotation = z.output<typeof newAnnotationSchema>;

/** A stored annotation. */
export interface Annotation {
  id: string;
  runId: string;
  /** The experiment of the run (read with it). */
  experimentId: string;
  /** The node annotated; absent: the whole run. */
  nodeId?: string;
  score?: number;
  /** Sorted, distinct. */
  tags: string[];
  note: string;
  author: string;
  /** Epoch ms. */
  createdAt: number;
}

/** Which annotations to list: every given field narrows (AND). */
export interface AnnotationQuery {
  runId?: string;
  experimentId?: string;
  /** Only the annotations of this node (with `runId`); `null`: only the whole-run ones. */
  nodeId?: string | null;
  tag?: string;
}

/** The annotations of the store (port.ts `Store.annotations`). */
export interface AnnotationsRepo {
  /**
   * Validates and stores an annotation with its tags in ONE transaction; returns it as stored.
   * Errors: `INVALID_RECORD` naming the field (`annotation.<field>: ...`); `NOT_FOUND` (no such run,
   * or the run has no node `nodeId`).
   */
  add(input: unknown, now?: number): Annotation;
  /** Annotations matching `q`, oldest first. */
  list(q?: AnnotationQuery): Annotation[];
  /** Errors: `NOT_FOUND`. */
  get(id: string): Annotation;
  /** Removes an annotation and its tags in one transaction; false when there was none. */
  remove(id: string): boolean;
  /** The distinct tags in use, with how many runs carry each, most used first. */
  tags(): Array<{ tag: string; runs: number }>;
}

/** A new annotation id: `ann-<yyyymmdd>-<hhmmss>-<4 base36>` (UTC), sortable by creation second. */
export function newAnnotationId(now: Date = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `ann-${p(now.getUTCFullYear(), 4)}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}-${randomInt(36 ** 4).toString(36).padStart(4, '0')}`;
}

/**
 * The first problem of a bad annotation as `annotation.<field>: <what>` (zod's issue, located), or
 * undefined when `input` is a valid new annotation.
 */
export function annotationProblem(input: unknown): { field: string; message: string } | undefined {
  const parsed = newAnnotationSchema.safeParse(input);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length ? issue.path.map(String).join('.') : 'annotation';
  return { field, message: issue.message };
}

interface Row { id: string; run_id: string; experiment_id: string; node_id: string | null; score: number | null; tags_json: string; note: string; author: string; created_at: number }

const fromRow = (r: Row): Annotation => ({
  id: r.id, runId: r.run_id, experimentId: r.experiment_id, ...(r.node_id !== null && { nodeId: r.node_id }), ...(r.score !== null && { score: r.score }),
  tags: z.array(z.string()).parse(JSON.parse(r.tags_json)), note: r.note, author: r.author, createdAt: r.created_at,
});

const SELECT = 'SELECT a.*, r.experiment_id FROM annotations a JOIN runs r ON r.id = a.run_id';

/** The port's `AnnotationsRepo` over the store's connection. */
export class SqliteAnnotationsRepo implements AnnotationsRepo {
  private readonly st: Record<'insert' | 'insertTag' | 'byId' | 'remove' | 'removeTags' | 'run' | 'node' | 'tags', Statement>;
  private readonly lists = new Map<string, Statement>();

  constructor(private readonly db: Database, private readonly file: string) {
    const p = (sql: string) => db.prepare(sql);
    this.st = {
      insert: p('INSERT INTO annotations (id, run_id, node_id, score, tags_json, note, author, created_at) VALUES (?,?,?,?,?,?,?,?)'),
      insertTag: p('INSERT OR IGNORE INTO annotation_tags (tag, run_id, annotation_id) VALUES (?,?,?)'),
      byId: p(`${SELECT} WHERE a.id = ?`),
      remove: p('DELETE FROM annotations WHERE id = ?'),
      removeTags: p('DELETE FROM annotation_tags WHERE annotation_id = ?'),
      run: p('SELECT 1 FROM runs WHERE id = ?').pluck(),
      node: p('SELECT 1 FROM node_events WHERE run_id = ? AND node_id = ? LIMIT 1').pluck(),
      tags: p('SELECT tag, count(DISTINCT run_id) AS runs FROM annotation_tags GROUP BY tag ORDER BY runs DESC, tag'),
    };
  }

  add(input: unknown, now = Date.now()): Annotation {
    const problem = annotationProblem(input);
    if (problem) throw new StoreError('INVALID_RECORD', `${this.file}: annotation.${problem.field}: ${problem.message}`, problem.field);
    const a = newAnnotationSchema.parse(input);
    const id = newAnnotationId(new Date(now));
    const tags = [...new Set(a.tags ?? [])].sort();
    this.db.transaction(() => {
      if (!this.st.run.get(a.runId)) throw new StoreError('NOT_FOUND', `${this.file}: no run ${a.runId} to annotate`, a.runId);
      if (a.nodeId !== undefined && !this.st.node.get(a.runId, a.nodeId)) throw new StoreError('NOT_FOUND', `${this.file}: run ${a.runId} has no node "${a.nodeId}" to annotate`, a.nodeId);
      this.st.insert.run(id, a.runId, a.nodeId ?? null, a.score ?? null, JSON.stringify(tags), (a.note ?? '').trim(), a.author, now);
      for (const t of tags) this.st.insertTag.run(t, a.runId, id);
    }).immediate();
    return this.get(id);
  }

  get(id: string): Annotation {
    const r = this.st.byId.get(id) as Row | undefined;
    if (!r) throw new StoreError('NOT_FOUND', `${this.file}: no annotation ${id}`, id);
    return fromRow(r);
  }

  list(q: AnnotationQuery = {}): Annotation[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (q.runId !== undefined) where.push('a.run_id = ?'), params.push(q.runId);
    if (q.experimentId !== undefined) where.push('r.experiment_id = ?'), params.push(q.experimentId);
    if (q.nodeId === null) where.push('a.node_id IS NULL');
    else if (q.nodeId !== undefined) where.push('a.node_id = ?'), params.push(q.nodeId);
    if (q.tag !== undefined) where.push('EXISTS (SELECT 1 FROM annotation_tags t WHERE t.annotation_id = a.id AND t.tag = ?)'), params.push(q.tag);
    const sql = `${SELECT}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY a.created_at, a.id`;
    let st = this.lists.get(sql);
    if (!st) this.lists.set(sql, (st = this.db.prepare(sql)));
    return (st.all(...params) as Row[]).map(fromRow);
  }

  remove(id: string): boolean {
    return this.db.transaction(() => {
      this.st.removeTags.run(id);
      return this.st.remove.run(id).changes > 0;
    }).immediate();
  }

  tags(): Array<{ tag: string; runs: number }> {
    return this.st.tags.all() as Array<{ tag: string; runs: number }>;
  }
}
