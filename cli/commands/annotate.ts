/**
 * `flowlab annotate <run-id>` (a person's score, tags and note on a run or one of its nodes) and
 * `flowlab annotations [<experiment-or-run-id>]` (list them; `annotations rm <id>` removes one).
 * The rows and their validation are the store's (core/store/annotations.ts), the same the lab
 * window's Trace view writes through `addAnnotation`.
 */
import { userInfo } from 'node:os';
import Table from 'cli-table3';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { openStore, TAG_PATTERN, type Annotation, type AnnotationQuery } from '../../core/store/index.ts';
import { act, dbOption, UsageError, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';

interface AnnotateOptions {
  db: string;
  node?: string;
  score?: number;
  tag?: string[];
  note?: string;
  author: string;
  json?: boolean;
}

interface ListOptions {
  db: string;
  node?: string;
  tag?: string;
  json?: boolean;
}

/** The author a CLI annotation carries by default: $FLOWLAB_AUTHOR, else the OS user name, else `cli`. */
export function defaultAuthor(): string {
  if (process.env.FLOWLAB_AUTHOR) return process.env.FLOWLAB_AUTHOR;
  try {
    return userInfo().username || 'cli';
  } catch {
    return 'cli';
  }
}

/**
 * `--score`: a finite decimal number (any scale: 0..1, 1..5, -1/+1 — the person's; `2`, `-0.5`,
 * `2.5e-1`; not `0x10`, which Number() would read as 16). Errors: InvalidArgumentError.
 */
export function parseScore(value: string): number {
  const x = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(x)) throw new InvalidArgumentError(`--score must be a number, e.g. 0.5 or 4, got "${value}"`);
  return x;
}

/** `flowlab annotate <run-id> [--node id] [--score x] [--tag t]... [--note text]`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<run-id> [--node <node-id>] [--score x] [--tag t]... [--note text] [--author name] [--json] [--db file]')
    .description([
      'Scores, tags or notes a run, or one node of it (--node): stored beside the run (never changing it),',
      'listed by `flowlab annotations`, found by `flowlab ls --tag`, written by `flowlab export` (csv, jsonl:',
      'annotations.<ext>; otlp-json: span events), and shown in the lab window\'s Trace view and Runs table.',
      'Give at least one of --score, --tag, --note. A tag is letters, digits and - _ . : / (no spaces).',
    ].join('\n'))
    .argument('<run-id>', 'the run (flowlab ls <experiment-id> lists them)')
    .option('--node <node-id>', 'annotate this node of the run instead of the whole run')
    .addOption(new Option('--score <x>', 'a number on your own scale (0..1, 1..5, -1/+1)').argParser(parseScore))
    .option('--tag <tag>', 'a tag (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .option('--note <text>', 'free text')
    .option('--author <name>', 'who annotates (default: $FLOWLAB_AUTHOR, else your user name)', defaultAuthor())
    .addOption(dbOption())
    .option('--json', 'print the stored annotation as JSON')
    .action(act(ctx, async (runId: string, o: AnnotateOptions) => annotate(runId, o, ctx.io, cmd.helpInformation())));
}

async function annotate(runId: string, o: AnnotateOptions, io: Io, usage: string): Promise<number> {
  if (o.score === undefined && !o.tag?.length && (o.note ?? '').trim() === '') throw new UsageError('give at least one of --score, --tag, --note', usage);
  const store = openStore(o.db, { mustExist: true });
  try {
    const a = store.annotations.add({
      runId,
      ...(o.node !== undefined && { nodeId: o.node }),
      ...(o.score !== undefined && { score: o.score }),
      ...(o.tag?.length && { tags: o.tag }),
      ...(o.note !== undefined && { note: o.note }),
      author: o.author,
    });
    io.stdout(o.json ? JSON.stringify(a) + '\n' : `Annotated ${a.nodeId ? `node ${a.nodeId} of ` : ''}run ${a.runId}: ${describe(a)} (${a.id}). List: flowlab annotations ${a.runId}\n`);
    return 0;
  } finally {
    store.close();
  }
}

/** `flowlab annotations [<experiment-or-run-id>] [--node id] [--tag t] [--json]`; `annotations rm <annotation-id>`. */
export function defineList(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('[<experiment-or-run-id>] [--node <node-id>] [--tag t] [--json] [--db file]  |  rm <annotation-id>')
    .description('Lists annotations (flowlab annotate), oldest first: of an experiment\'s runs, of one run (--node: of one of its nodes), with a tag, or all.\n`annotations rm <annotation-id>` removes one.')
    .argument('[id]', 'an experiment or run id; or `rm`')
    .argument('[annotation-id]', 'with rm: the annotation to remove')
    .option('--node <node-id>', 'only the annotations of this node (with a run id)')
    .addOption(new Option('--tag <tag>', 'only annotations carrying this tag').argParser(tagFilter))
    .addOption(dbOption())
    .option('--json', 'print a JSON array')
    .action(act(ctx, async (id: string | undefined, annotationId: string | undefined, o: ListOptions) => listAnnotations(id, annotationId, o, ctx.io, cmd.helpInformation())));
}

async function listAnnotations(id: string | undefined, annotationId: string | undefined, o: ListOptions, io: Io, usage: string): Promise<number> {
  const store = openStore(o.db, { mustExist: true });
  try {
    if (id === 'rm') {
      if (annotationId === undefined) throw new UsageError('annotations rm needs the annotation id (ann-...)', usage);
      const a = store.annotations.get(annotationId); // NOT_FOUND names it
      store.annotations.remove(a.id);
      io.stdout(o.json ? JSON.stringify({ removed: a.id }) + '\n' : `Removed ${a.id} (${a.nodeId ? `node ${a.nodeId} of ` : ''}run ${a.runId}).\n`);
      return 0;
    }
    if (annotationId !== undefined) throw new UsageError(`unexpected argument "${annotationId}"`, usage);
    const q: AnnotationQuery = { ...(o.tag !== undefined && { tag: o.tag }) };
    if (id !== undefined) {
      if (store.findExperiment(id)) q.experimentId = id;
      else q.runId = store.getRun(id).runId; // NOT_FOUND: no experiment or run by that id
    }
    if (o.node !== undefined) {
      if (q.runId === undefined) throw new UsageError('--node goes with a run id', usage);
      q.nodeId = o.node;
    }
    const rows = store.annotations.list(q);
    io.stdout(o.json ? JSON.stringify(rows) + '\n' : formatAnnotations(rows));
    return 0;
  } finally {
    store.close();
  }
}

/** Score, tags and note as one line. */
function describe(a: Annotation): string {
  const parts = [...(a.score !== undefined ? [`score ${a.score}`] : []), ...(a.tags.length ? [`tags ${a.tags.join(', ')}`] : []), ...(a.note ? [`note "${clip(a.note, 60)}"`] : [])];
  return parts.join('; ');
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** The table `flowlab annotations` prints. */
export function formatAnnotations(rows: readonly Annotation[]): string {
  const t = new Table({ head: ['annotation', 'run', 'node', 'score', 'tags', 'note', 'author', 'created (UTC)'], style: { head: [], border: [], compact: true } });
  for (const a of rows) t.push([a.id, a.runId, a.nodeId ?? '(run)', a.score === undefined ? '-' : String(a.score), a.tags.join(', ') || '-', clip(a.note.replace(/\s+/g, ' '), 40) || '-', a.author, new Date(a.createdAt).toISOString().replace('T', ' ').slice(0, 16)]);
  return `${t.toString()}\n${rows.length} annotation${rows.length === 1 ? '' : 's'}.\n`;
}

/**
 * A `--tag` filter (`annotations`, `ls`): a tag an annotation could carry (core/store TAG_PATTERN).
 * Errors: InvalidArgumentError naming the flag and the rule (a tag no annotation can carry would
 * otherwise list nothing, as if no run had it).
 */
export function tagFilter(value: string): string {
  if (!TAG_PATTERN.test(value)) throw new InvalidArgumentError(`--tag ${JSON.stringify(value)}: a tag is letters, digits and - _ . : / (no spaces), starting with a letter or digit`);
  return value;
}
