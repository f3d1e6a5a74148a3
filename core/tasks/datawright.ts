/**
 * DataWright: a dataset transform that makes tasks "workflow-worthy" by bundling k sub-questions
 * into one task (FloWright's DataWright; difficulty = k). Each sub-question keeps its own grader;
 * the composed task's score is the mean of the sub-scores, and it is correct when every graded
 * sub-question is. Seeded and reproducible: composed task i of a split is a pure function of
 * (strategy, k, seed, split, i) and the base split.
 *
 * Composed task i always holds base task i as its first part, so offsets and limits keep their
 * meaning and the split has as many composed tasks as the base split. The other parts are drawn
 * with a mulberry32 stream seeded by fnv1a32 of `datawright/<strategy>/<k>/<seed>/<split>/<i>`:
 *
 * - `shared` (sub-questions that need decomposition): k parts of one kind, to be split apart and
 *   solved one by one with the same tools. On a base with classes (`classOf`; `learn-design`: the
 *   tool a request needs) all k parts share part 1's class — `learn-design`: k requests for the
 *   same tool with their own arguments. Without classes (GSM8K, the multi-hop QA sets) k distinct
 *   tasks of the split.
 * - `paired` (parts that need different tools or roles): neighbouring parts need different
 *   tools. On a base with classes, part j has the class j places after part 1's in the order of
 *   first appearance (`learn-design`: weather, search, math, weather, …; all distinct up to k = 3).
 *   Without classes, parts alternate between a base task and an arithmetic part ("What is 37
 *   times 4?", graded as a number, exactly) that a calculator answers: on GSM8K a word problem
 *   (planner + calculator) next to a bare computation (calculator only), on multi-hop QA a
 *   question for `retrieve` next to one for `calculator`.
 * - `decoy` (distractor parts to ignore): k graded parts drawn as `shared`, plus one decoy — a
 *   task of the split from another class where there are classes — placed at a seeded position,
 *   unnumbered and marked "Aside (not a part; do not answer it)". It is not graded.
 *
 * The composed task's input keeps the base's ports (core/tasks/types.ts `Task.input`): the text
 * port — the first of `question`, `request`, `prompt` that the base task has — carries the
 * composed text; every other port of part 1 is copied as it is (`learn-design`: `kind`); `k` is
 * added. So a workflow that reads `task.question` (GSM8K, multi-hop) or `task.request`
 * (`learn-design`) runs on composed tasks unchanged. The text asks for the answers one per line
 * as `<n>: <answer>`; `expected` is written that way too. With k = 1 and no decoy the text is the
 * base task's own (so `datawright:shared:1:<base>` grades exactly as `<base>`).
 */
import { fnv1a32, mulberry32, type Rng } from '../random.ts';
import { DatasetError } from './errors.ts';
import { gsm8kGrader } from './gsm8k.ts';
import { readToolCalls } from './learnDesign.ts';
import type { Dataset, Grade, Grader, LoadOptions, Task } from './types.ts';

export const DATAWRIGHT_STRATEGIES = ['shared', 'paired', 'decoy'] as const;
export type DataWrightStrategy = (typeof DATAWRIGHT_STRATEGIES)[number];
/** The largest k accepted. */
export const DATAWRIGHT_MAX_K = 8;
/** The ports that may carry a task's text, in the order they are looked for. */
export const DATAWRIGHT_TEXT_PORTS = ['question', 'request', 'prompt'] as const;

export interface ComposeOptions {
  /** Graded sub-questions per task, 1..DATAWRIGHT_MAX_K. */
  k: number;
  strategy: DataWrightStrategy;
  /** Seed of the draws (a 32-bit integer). Default 0. */
  seed?: number;
}

/** One part of a composed task, as kept in `meta.parts` (never shown to the solving roles). */
export interface DataWrightPart {
  /** `base`: a task of the base split; `arithmetic`: a generated calculator part (paired, no classes). */
  source: 'base' | 'arithmetic';
  task: Task;
}

/**
 * The composed dataset `datawright:<strategy>:<k>:<base name>` (with `:<seed>` when the seed is
 * not 0): same splits as `base`; its tasks as this module's header says; its grader splits the
 * answer into k pieces (`splitAnswer`), grades piece j with part j's grader (the base's, or the
 * GSM8K number grader for arithmetic parts) and returns the mean score. `classOf` (only when the
 * base has one) is the parts' classes joined by `+`, e.g. `weather+search`.
 * The base split is loaded whole on the first `load` of that split and kept, indexed by class;
 * each part is a uniform draw among the allowed tasks not drawn yet (O(k) per composed task).
 * @throws DatasetError `BAD_OPTIONS` (k not an integer in 1..8, an unknown strategy); on `load`,
 *   the base's errors, and `BAD_OPTIONS` when the split is too small for the draws or its tasks
 *   have no text port.
 */
export function composeDataset(base: Dataset, opts: ComposeOptions): Dataset {
  const { k, strategy } = opts;
  const seed = opts.seed ?? 0;
  if (!Number.isInteger(k) || k < 1 || k > DATAWRIGHT_MAX_K) throw new DatasetError('BAD_OPTIONS', `datawright: k must be an integer from 1 to ${DATAWRIGHT_MAX_K}, got ${String(k)}`);
  if (!(DATAWRIGHT_STRATEGIES as readonly string[]).includes(strategy)) throw new DatasetError('BAD_OPTIONS', `datawright: unknown strategy '${String(strategy)}'; strategies: ${DATAWRIGHT_STRATEGIES.join(', ')}`);
  if (!Number.isInteger(seed)) throw new DatasetError('BAD_OPTIONS', `datawright: seed must be an integer, got ${String(seed)}`);
  const name = `datawright:${strategy}:${k}:${base.name}${seed ? `:${seed}` : ''}`;
  const splits = new Map<string, Pool>();
  const poolFor = (split: string) => {
    let pool = splits.get(split);
    if (!pool) splits.set(split, (pool = poolOf(base.load({ split }), base.classOf)));
    return pool;
  };
  const splitter = base.name.startsWith('learn-design') ? toolCallSplit : undefined;
  const grader: Grader = { grade: (answer, task) => gradeComposed(answer, task, base.grader, splitter) };
  const dataset: Dataset = {
    name,
    splits: [...base.splits],
    grader,
    load(lo: LoadOptions): Task[] {
      const pool = poolFor(lo.split);
      const offset = count('offset', lo.offset ?? 0);
      const end = lo.limit === undefined ? pool.tasks.length : Math.min(pool.tasks.length, offset + count('limit', lo.limit));
      const out: Task[] = [];
      for (let i = offset; i < end; i++) out.push(composeTask({ name, strategy, k, seed, split: lo.split, index: i, pool }));
      return out;
    },
  };
  if (base.classOf) {
    const classOf = base.classOf;
    dataset.classOf = (task) => {
      const parts = (task as Task).meta?.parts as DataWrightPart[] | undefined;
      return parts ? parts.map((p) => classOf(p.task)).join('+') : classOf(task);
    };
  }
  return dataset;
}

/** A base split indexed for the draws: all task indices, and per class (bases with classes). */
interface Pool {
  tasks: Task[];
  all: number[];
  /** Each task's class, when the base has classes. */
  classes?: string[];
  /** Classes in order of first appearance. */
  order: string[];
  byClass: Map<string, number[]>;
  /** Per class, the indices of every other class. */
  others: Map<string, number[]>;
}

function poolOf(tasks: Task[], classOf?: (task: Pick<Task, 'expected'>) => string): Pool {
  const all = tasks.map((_, i) => i);
  const classes = classOf ? tasks.map((t) => classOf(t)) : undefined;
  const byClass = new Map<string, number[]>();
  classes?.forEach((c, i) => {
    if (!byClass.has(c)) byClass.set(c, []);
    byClass.get(c)!.push(i);
  });
  const order = [...byClass.keys()];
  const others = new Map(order.map((c) => [c, all.filter((i) => classes![i] !== c)]));
  return { tasks, all, ...(classes && { classes }), order, byClass, others };
}

interface ComposeArgs {
  name: string;
  strategy: DataWrightStrategy;
  k: number;
  seed: number;
  split: string;
  index: number;
  pool: Pool;
}

/** Composed task `index` of a split (pure given the pool). */
function composeTask(a: ComposeArgs): Task {
  const r = mulberry32(fnv1a32(`datawright/${a.strategy}/${a.k}/${a.seed}/${a.split}/${a.index}`));
  const { tasks, classes, order } = a.pool;
  const first = tasks[a.index]!;
  const port = textPort(first, a.name);
  const used = new Set<number>([a.index]);
  /** A uniform draw from `list` among the indices not used yet: by rejection (the used set holds at most k + 1), else by filtering. */
  const draw = (list: readonly number[]): Task => {
    let i: number | undefined;
    for (let tries = 0; tries < 32 && list.length; tries++) {
      const c = list[Math.floor(r() * list.length)]!;
      if (!used.has(c)) { i = c; break; }
    }
    if (i === undefined) {
      const free = list.filter((x) => !used.has(x));
      if (!free.length) throw new DatasetError('BAD_OPTIONS', `${a.name}: split '${a.split}' has too few tasks to draw the parts of task ${a.index} (k = ${a.k})`);
      i = free[Math.floor(r() * free.length)]!;
    }
    used.add(i);
    return tasks[i]!;
  };
  const firstClass = classes?.[a.index];
  const sameClass = firstClass === undefined ? a.pool.all : a.pool.byClass.get(firstClass)!;
  const parts: DataWrightPart[] = [{ source: 'base', task: first }];
  for (let j = 1; j < a.k; j++) {
    if (a.strategy === 'paired') {
      if (firstClass !== undefined) {
        const c = order[(order.indexOf(firstClass) + j) % order.length]!;
        parts.push({ source: 'base', task: draw(a.pool.byClass.get(c)!) });
      } else parts.push(j % 2 === 1 ? { source: 'arithmetic', task: arithmeticTask(r, `${a.name}/${a.split}/${a.index}/arithmetic/${j}`, j, port) } : { source: 'base', task: draw(a.pool.all) });
    } else parts.push({ source: 'base', task: draw(sameClass) });
  }
  const decoy = a.strategy === 'decoy' ? draw(firstClass !== undefined && order.length > 1 ? a.pool.others.get(firstClass)! : a.pool.all) : undefined;
  const decoyAt = decoy ? Math.floor(r() * (a.k + 1)) : -1;
  const texts = parts.map((p) => String(p.task.input[port]));
  let text: string;
  if (a.k === 1 && !decoy) text = texts[0]!;
  else {
    const lines = texts.map((t, j) => `Part ${j + 1}: ${t}`);
    if (decoy) lines.splice(decoyAt, 0, `Aside (not a part; do not answer it): ${String(decoy.input[port] ?? '')}`);
    const head = a.k === 1 ? 'Answer the one part below and ignore the aside; give the answer as "1: <answer>".' : `Answer each of the ${a.k} parts below${decoy ? ' and ignore the aside' : ''}; give the answers in order, one per line, as "<n>: <answer>".`;
    text = [head, ...lines].join('\n');
  }
  return {
    id: `${a.name}/${a.split}/${a.index}`,
    index: a.index,
    input: { ...first.input, [port]: text, k: a.k },
    expected: parts.map((p, j) => `${j + 1}: ${p.task.expected}`).join('\n'),
    meta: { split: a.split, strategy: a.strategy, k: a.k, difficulty: a.k, seed: a.seed, parts, ...(decoy && { decoy, decoyAt }) },
  };
}

/** The port carrying a task's text: the first of DATAWRIGHT_TEXT_PORTS holding a string. */
function textPort(task: Task, name: string): string {
  const port = DATAWRIGHT_TEXT_PORTS.find((p) => typeof task.input[p] === 'string');
  if (!port) throw new DatasetError('BAD_OPTIONS', `${name}: task ${task.id} has no text port (one of ${DATAWRIGHT_TEXT_PORTS.join(', ')}); its ports: ${Object.keys(task.input).join(', ')}`);
  return port;
}

const OPS = [
  { word: 'plus', f: (x: number, y: number) => x + y },
  { word: 'minus', f: (x: number, y: number) => x - y },
  { word: 'times', f: (x: number, y: number) => x * y },
] as const;

/** A calculator part: "What is <a> <op> <b>?" with a, b in 2..99, graded as a number (gsm8kGrader). */
function arithmeticTask(r: Rng, id: string, index: number, port: string): Task {
  const x = 2 + Math.floor(r() * 98);
  const y = 2 + Math.floor(r() * 98);
  const op = OPS[Math.floor(r() * OPS.length)]!;
  return { id, index, input: { [port]: `What is ${x} ${op.word} ${y}?` }, expected: String(op.f(x, y)) };
}

/**
 * The k pieces of a composed answer, piece j for part j (undefined where none): an array answer
 * item by item; an object's `answers` array, or its `answer` read through (another object is the
 * one piece of part 1); a text's numbered lines `<n>: ...` (also `<n>)`, `<n>.` before a space,
 * `Part <n>:`; n in 1..k; the first line of each number wins), else — with k = 1 — the whole answer, else `fallback` when
 * given (learn-design: the tool calls in order), else its non-empty lines, else its
 * `;`-separated pieces. Pure.
 */
export function splitAnswer(answer: unknown, k: number, fallback?: (text: string) => string[] | undefined): unknown[] {
  if (Array.isArray(answer)) return answer.slice(0, k);
  if (answer && typeof answer === 'object') {
    const o = answer as Record<string, unknown>;
    if (Array.isArray(o.answers)) return o.answers.slice(0, k);
    if (o.answer !== undefined && o.answer !== null) return splitAnswer(o.answer, k, fallback);
    return [answer];
  }
  if (answer === undefined || answer === null) return [];
  const text = String(answer);
  const pieces: unknown[] = [];
  let numbered = false;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:part\s*)?(\d+)\s*(?::|\)|\.(?=\s|$))\s*(.*)$/i.exec(line);
    if (!m) continue;
    const n = Number(m[1]);
    if (n < 1 || n > k) continue;
    if (pieces[n - 1] === undefined) pieces[n - 1] = m[2]!.trim();
    numbered = true;
  }
  if (numbered) return pieces;
  if (k === 1) return [answer];
  const fb = fallback?.(text);
  if (fb?.length) return fb.slice(0, k);
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  if (lines.length > 1) return lines.slice(0, k);
  return text.split(';').map((s) => s.trim()).filter(Boolean).slice(0, k);
}

/** learn-design: the tool calls of a text in order, each as `<tool>:<argument>`. */
function toolCallSplit(text: string): string[] | undefined {
  const calls = readToolCalls(text);
  return calls.length ? calls.map((c) => (c.tool ? `${c.tool}:${c.argument}` : c.argument)) : undefined;
}

/** The composed grade: the mean of the parts' grades (see composeDataset). */
function gradeComposed(answer: unknown, task: Task, baseGrader: Grader, fallback?: (text: string) => string[] | undefined): Grade | Promise<Grade> {
  const parts = task.meta?.parts as DataWrightPart[] | undefined;
  const expected = task.expected;
  if (!parts?.length) return { score: 0, correct: false, extracted: null, expected, reason: `task ${task.id} is not a DataWright task (no parts in meta)` };
  const pieces = splitAnswer(answer, parts.length, fallback);
  const graded: Array<Grade | PromiseLike<Grade>> = parts.map((p, j) => (p.source === 'arithmetic' ? gsm8kGrader : baseGrader).grade(pieces[j], p.task));
  // A grader that runs code answers with a promise; the composed grade then waits for all parts
  // (the one call site awaits what `grade` returns).
  if (graded.some(isPromiseLike)) return Promise.all(graded).then((grades) => meanGrade(grades, expected));
  return meanGrade(graded as Grade[], expected);
}

function isPromiseLike(x: unknown): x is PromiseLike<unknown> {
  return typeof (x as PromiseLike<unknown> | null)?.then === 'function';
}

/** The mean of the parts' grades: score = mean score, correct = all correct, reason per part. */
function meanGrade(grades: readonly Grade[], expected: string): Grade {
  const score = grades.reduce((s, g) => s + g.score, 0) / grades.length;
  const correct = grades.every((g) => g.correct);
  const extracted = grades.some((g) => g.extracted !== null) ? grades.map((g, j) => `${j + 1}: ${g.extracted ?? '-'}`).join('\n') : null;
  const reason = grades.map((g, j) => `part ${j + 1}: ${round(g.score)}${g.reason ? ` (${g.reason})` : ''}`).join('; ');
  return { score, correct, extracted, expected, reason: `mean of ${grades.length} part(s) = ${round(score)}; ${reason}` };
}

/**
 * Reads `datawright:<strategy>:<k>:<base>[:<seed>]` (the base name may not contain `:`), or
 * returns undefined when `name` does not start with `datawright:`.
 * @throws DatasetError `UNKNOWN_DATASET` for a malformed name (the message shows the form).
 */
export function parseDataWrightName(name: string): { strategy: DataWrightStrategy; k: number; base: string; seed: number } | undefined {
  if (!name.toLowerCase().startsWith('datawright:')) return undefined;
  const [, strategy, kText, base, seedText, ...rest] = name.split(':');
  const form = `datawright:<strategy>:<k>:<base>[:<seed>] (strategies: ${DATAWRIGHT_STRATEGIES.join(', ')}; k 1..${DATAWRIGHT_MAX_K}; e.g. datawright:paired:2:learn-design)`;
  const bad = (why: string) => new DatasetError('UNKNOWN_DATASET', `unknown dataset '${name}': ${why}; the form is ${form}`, name);
  if (rest.length || !strategy || !kText || !base) throw bad('it has the wrong number of parts');
  const s = strategy.toLowerCase();
  if (!(DATAWRIGHT_STRATEGIES as readonly string[]).includes(s)) throw bad(`'${strategy}' is not a strategy`);
  if (!/^\d+$/.test(kText) || Number(kText) < 1 || Number(kText) > DATAWRIGHT_MAX_K) throw bad(`k '${kText}' is not an integer from 1 to ${DATAWRIGHT_MAX_K}`);
  if (seedText !== undefined && !/^-?\d+$/.test(seedText)) throw bad(`seed '${seedText}' is not an integer`);
  return { strategy: s as DataWrightStrategy, k: Number(kText), base, seed: seedText === undefined ? 0 : Number(seedText) };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function count(what: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new DatasetError('BAD_OPTIONS', `${what} must be a non-negative integer, got ${String(n)}`);
  return n;
}
