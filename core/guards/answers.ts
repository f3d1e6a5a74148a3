/**
 * The constant-policy and degenerate-output guard (issue 24): for any set of graded runs of one
 * zone, the best constant policy computed from the labels, the number of distinct answers the
 * runs gave, and whether those answers collapsed (`CONSTANT`). Every accuracy the lab prints —
 * the run table, `compare`, study tables (text, CSV, HTML), the train loop's held-out reports
 * and the window — carries this beside it, so a figure that a constant would reach, or that
 * comes from one repeated answer, is visibly what it is. Pure; no I/O.
 *
 * Definitions (n = runs with a label):
 * - **best constant policy**: the most common label (expected answer, trimmed); its share of the
 *   n runs is the accuracy of answering it to every task under an exact-match grader (ties go to
 *   the first in code-unit order). With `classOf`, also the most common class and its share.
 * - **distinct answers**: distinct trimmed answer texts over all runs; a run with no answer counts
 *   as the one value `(none)`.
 * - **classes**: distinct `classOf(label)` when the dataset has classes, else distinct labels when
 *   the labels repeat (at most n/2 distinct: a classification-like zone), else undefined (open
 *   answers such as GSM8K numbers: only the one-answer test applies).
 * - **CONSTANT**: at least 2 runs and one distinct answer, or fewer distinct answers than classes.
 *   The flag carries the most common answer and its share of the runs.
 */

/** What the guard reads of a run: its answer text (undefined: none) and its label. */
export interface GuardRun {
  answer?: string | undefined;
  expected?: string | undefined;
}

/** The guard of one set of runs (see the module doc for the definitions). */
export interface AnswerGuard {
  /** Runs read, and runs with a label. */
  runs: number;
  labelled: number;
  /** The best constant policy: the most common label and the accuracy of always giving it (0..1). Null with no label. */
  bestConstant: { answer: string; accuracy: number } | null;
  /** With `classOf`: the most common class and its share (the class accuracy of always choosing it). */
  bestConstantClass?: { class: string; accuracy: number };
  /** Distinct answers given (a missing answer counts as `(none)`). */
  distinctAnswers: number;
  /** Classes the zone has (see the module doc), undefined when not a classification. */
  classes?: number;
  /** The most common answer and its share of the runs (0..1). Null with no run. */
  topAnswer: { answer: string; share: number } | null;
  /** Set when the answers collapsed: `one-answer` (all runs the same) or `fewer-than-classes`. */
  constant?: { reason: 'one-answer' | 'fewer-than-classes'; answer: string; share: number };
}

/** The text counted for a run without an answer. */
export const NO_ANSWER = '(none)';

const byCountThenName = ([a, x]: [string, number], [b, y]: [string, number]) => y - x || (a < b ? -1 : a > b ? 1 : 0);

function top(keys: readonly string[]): { value: string; count: number; distinct: number } | undefined {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  const [best] = [...counts].sort(byCountThenName);
  return best ? { value: best[0], count: best[1], distinct: counts.size } : undefined;
}

/**
 * The guard of `runs` (see the module doc). `classOf` maps a label (or answer) text to its class,
 * e.g. learn-design's tool (`weather:today` → `weather`).
 */
export function answerGuard(runs: readonly GuardRun[], classOf?: (label: string) => string): AnswerGuard {
  const labels = runs.map((r) => r.expected?.trim()).filter((e): e is string => e !== undefined);
  const answers = runs.map((r) => (r.answer === undefined ? NO_ANSWER : r.answer.trim()));
  const lab = top(labels);
  const ans = top(answers);
  const cls = classOf && labels.length ? top(labels.map(classOf)) : undefined;
  const classes = cls ? cls.distinct : lab && lab.distinct * 2 <= labels.length ? lab.distinct : undefined;
  const g: AnswerGuard = {
    runs: runs.length,
    labelled: labels.length,
    bestConstant: lab ? { answer: lab.value, accuracy: lab.count / labels.length } : null,
    ...(cls && { bestConstantClass: { class: cls.value, accuracy: cls.count / labels.length } }),
    distinctAnswers: ans?.distinct ?? 0,
    ...(classes !== undefined && { classes }),
    topAnswer: ans ? { answer: ans.value, share: ans.count / answers.length } : null,
  };
  if (ans && runs.length >= 2 && ans.distinct === 1) g.constant = { reason: 'one-answer', answer: ans.value, share: 1 };
  else if (ans && classes !== undefined && ans.distinct < classes) g.constant = { reason: 'fewer-than-classes', answer: ans.value, share: ans.count / answers.length };
  return g;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

/**
 * The flag as printed everywhere: `CONSTANT "search:facts" 100.0%` (one answer) or
 * `CONSTANT "search:facts" 95.8% (2 answers < 3 classes)`; '' when the answers did not collapse.
 */
export function constantFlag(g: Pick<AnswerGuard, 'constant' | 'distinctAnswers' | 'classes'>): string {
  if (!g.constant) return '';
  const base = `CONSTANT ${JSON.stringify(g.constant.answer)} ${pct(g.constant.share)}`;
  return g.constant.reason === 'one-answer' ? base : `${base} (${g.distinctAnswers} answers < ${g.classes} classes)`;
}

/** The short guard note beside an accuracy: `best constant 33.3% · 4 answers` plus the flag when set. */
export function guardNote(g: AnswerGuard): string {
  const parts = [`best constant ${g.bestConstant ? pct(g.bestConstant.accuracy) : '-'}`, `${g.distinctAnswers} answer${g.distinctAnswers === 1 ? '' : 's'}`];
  const flag = constantFlag(g);
  if (flag) parts.push(flag);
  return parts.join(' · ');
}

/**
 * What a difference between two sets of runs means given their guards: `both constant` when both
 * collapsed (the delta is a difference between constants), `one constant` when one did, '' else.
 */
export function deltaGuardNote(a: Pick<AnswerGuard, 'constant'> | undefined, b: Pick<AnswerGuard, 'constant'> | undefined): '' | 'both constant' | 'one constant' {
  const n = Number(!!a?.constant) + Number(!!b?.constant);
  return n === 2 ? 'both constant' : n === 1 ? 'one constant' : '';
}
