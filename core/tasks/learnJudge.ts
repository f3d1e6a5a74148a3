/**
 * `learn-judge`: a procedural pairwise-judging family a tiny model can learn (issue 25, parts
 * 2(b) and 2(c)). Each task shows a request for a measurement (a distance, a temperature, a
 * weight, in a unit the request names) and two answers, A and B: one right, one wrong. The judge
 * answers `A` or `B` (examples/judge-learn.yaml: an enum grammar, so every verdict parses); the
 * grader scores 1 when it named the right one. The task's class is the right side (`A` | `B`),
 * so a class-balanced SFT pool is balanced over positions.
 *
 * The wrong answer is one of two kinds:
 *
 * - an **ordinary mistake**, visible in the text of the answer itself: `none` (no answer),
 *   `error` (a tool error passed on), `?? km` (the number lost);
 * - the **blind spot** (`blind-unit`): the right number in a plausible but wrong unit of the
 *   same quantity (`48 mi` where the request asks for km; C/F, kg/lb). It looks right on the
 *   surface — a number and a unit of the right kind, the shape of every right answer — and
 *   only a comparison with the unit the request names (which the family's grader makes from
 *   the task's record) tells it apart.
 *
 * **The knob**: `blind`, the share of pairs whose wrong answer is the blind spot (0..1; default
 * 0.25), spread evenly over the pair indices (pair k is blind when ⌊(k+1)·blind⌋ > ⌊k·blind⌋,
 * so any run of pairs holds the share to within one pair). The dataset name carries it:
 * `learn-judge` (0.25) or `learn-judge:blind=<share>` (e.g. `learn-judge:blind=0`).
 *
 * **Pairs in both orders**: tasks 2k and 2k+1 show pair k with A and B swapped (which side the
 * right answer takes first is drawn from the seed), so the first 2n tasks of a split hold n pairs
 * each judged in both orders — what the judge audit's position consistency needs
 * (core/mass/pairAudit.ts).
 *
 * **Splits** (generated from a fixed seed, the split and the index; no files): `train` (2,000
 * tasks) and `heldout` (500). The held-out split shares no request template, city, animal or
 * number with training (every held-out task is `new-wording`); the kinds of mistake and the
 * units are the same (the held-out split tests new wordings and fillers, not new kinds of
 * mistake).
 */
import { fnv1a32, mulberry32, type Rng } from '../random.ts';
import { DatasetError } from './errors.ts';
import { loadProcedural, pick } from './procedural.ts';
import type { Dataset, Grade, LoadOptions, SyncGrader, Task } from './types.ts';

export const LEARN_JUDGE_SEED = 25;
export const LEARN_JUDGE_SPLITS = ['train', 'heldout'] as const;
export type LearnJudgeSplit = (typeof LEARN_JUDGE_SPLITS)[number];
export const LEARN_JUDGE_SIZES: Record<LearnJudgeSplit, number> = { train: 2000, heldout: 500 };
/** The default share of blind-spot pairs. */
export const LEARN_JUDGE_DEFAULT_BLIND = 0.25;

/** The quantities, each with its two units (the blind spot swaps one for the other). */
export const LEARN_JUDGE_QUANTITIES = {
  distance: ['km', 'mi'],
  temperature: ['C', 'F'],
  weight: ['kg', 'lb'],
} as const;
export type JudgeQuantity = keyof typeof LEARN_JUDGE_QUANTITIES;
const QUANTITIES = Object.keys(LEARN_JUDGE_QUANTITIES) as JudgeQuantity[];

/** The kinds of wrong answer: three ordinary mistakes and the blind spot. */
export const ORDINARY_MISTAKES = ['none', 'error', 'lost-number'] as const;
export type JudgeMistake = (typeof ORDINARY_MISTAKES)[number] | 'blind-unit';

type Fill = { cities: string[]; animals: string[]; numbers: [number, number] };
const FILL: Record<LearnJudgeSplit, Fill> = {
  train: { cities: ['Paris', 'Rome', 'Tokyo', 'Cairo', 'Berlin', 'Madrid'], animals: ['cat', 'dog', 'horse', 'whale', 'tiger'], numbers: [2, 59] },
  heldout: { cities: ['Oslo', 'Lima', 'Delhi', 'Quito'], animals: ['owl', 'frog', 'shark'], numbers: [60, 99] },
};

type Template = (r: Rng, f: Fill, unit: string) => string;
const TEMPLATES: Record<LearnJudgeSplit, Record<JudgeQuantity, Template[]>> = {
  train: {
    distance: [(r, f, u) => `How far is it from ${pick(r, f.cities)} to ${pick(r, f.cities)}, in ${u}?`, (r, f, u) => `Distance from ${pick(r, f.cities)} to ${pick(r, f.cities)} in ${u}?`],
    temperature: [(r, f, u) => `How warm is it in ${pick(r, f.cities)}, in ${u}?`, (r, f, u) => `Temperature in ${pick(r, f.cities)} in ${u}?`],
    weight: [(r, f, u) => `How heavy is the ${pick(r, f.animals)}, in ${u}?`, (r, f, u) => `Weight of the ${pick(r, f.animals)} in ${u}?`],
  },
  heldout: {
    distance: [(r, f, u) => `Give the distance ${pick(r, f.cities)} to ${pick(r, f.cities)} in ${u}.`],
    temperature: [(r, f, u) => `Tell me how hot ${pick(r, f.cities)} is in ${u}.`],
    weight: [(r, f, u) => `What does the ${pick(r, f.animals)} weigh in ${u}?`],
  },
};

export const LEARN_JUDGE_NOVELTY: Record<LearnJudgeSplit, string> = {
  train: 'the training split',
  heldout: 'new-wording (every task): request templates, cities, animals and numbers no training task uses; the same quantities, units and kinds of mistake',
};

/** Whether pair `k` is a blind-spot pair at share `blind` (see the module doc). */
export function isBlindPair(k: number, blind: number): boolean {
  return Math.floor((k + 1) * blind + 1e-9) > Math.floor(k * blind + 1e-9);
}

/** What a learn-judge task records about its pair (`Task.meta`). */
export interface JudgeTaskMeta {
  class: 'A' | 'B';
  pair: number;
  /** 0: the pair's first order, 1: swapped. */
  order: 0 | 1;
  mistake: JudgeMistake;
  blind: boolean;
  quantity: JudgeQuantity;
  unit: string;
  right: string;
  wrong: string;
  novelty?: 'new-wording';
}

/**
 * The task of one split and index at blind share `blind` (pure). `input`: `{kind: 'judge',
 * request, a, b}`; `expected`: `A` or `B` (the side of the right answer); `meta`:
 * `JudgeTaskMeta`. Errors: DatasetError `BAD_OPTIONS` for a negative or fractional index or a
 * share outside 0..1.
 */
export function learnJudgeTask(split: LearnJudgeSplit, index: number, blind = LEARN_JUDGE_DEFAULT_BLIND, datasetName = 'learn-judge'): Task {
  if (!Number.isInteger(index) || index < 0) throw new DatasetError('BAD_OPTIONS', `index must be a non-negative integer, got ${String(index)}`);
  if (!(blind >= 0 && blind <= 1)) throw new DatasetError('BAD_OPTIONS', `the blind-spot share must be a number from 0 to 1, got ${String(blind)}`);
  const pair = Math.floor(index / 2);
  const order = (index % 2) as 0 | 1;
  const r = mulberry32(fnv1a32(`${LEARN_JUDGE_SEED}/judge/${split}/${pair}`));
  const quantity = QUANTITIES[pair % QUANTITIES.length]!;
  const units = LEARN_JUDGE_QUANTITIES[quantity];
  const unitIndex = r() < 0.5 ? 0 : 1;
  const unit = units[unitIndex]!;
  const other = units[1 - unitIndex]!;
  const [lo, hi] = FILL[split].numbers;
  const value = lo + Math.floor(r() * (hi - lo + 1));
  const request = pick(r, TEMPLATES[split][quantity])(r, FILL[split], unit);
  const isBlind = isBlindPair(pair, blind);
  const ordinary = pick(r, ORDINARY_MISTAKES);
  const rightFirst = r() < 0.5;
  const mistake: JudgeMistake = isBlind ? 'blind-unit' : ordinary;
  const right = `${value} ${unit}`;
  const wrong = mistake === 'blind-unit' ? `${value} ${other}` : mistake === 'none' ? 'none' : mistake === 'error' ? 'error' : `?? ${unit}`;
  const rightIsA = rightFirst === (order === 0);
  const meta: JudgeTaskMeta = { class: rightIsA ? 'A' : 'B', pair, order, mistake, blind: isBlind, quantity, unit, right, wrong, ...(split === 'heldout' && { novelty: 'new-wording' as const }) };
  return {
    id: `${datasetName}/${split}/${index}`,
    index,
    input: { kind: 'judge', request, a: rightIsA ? right : wrong, b: rightIsA ? wrong : right },
    expected: meta.class,
    meta: meta as unknown as Record<string, unknown>,
  };
}

/** A verdict read from a judge's answer: `A`, `B` (a string, quoted or not, or `{winner}`), or null. */
export function readJudgeVerdict(answer: unknown): 'A' | 'B' | null {
  if (answer && typeof answer === 'object' && !Array.isArray(answer)) {
    const o = answer as Record<string, unknown>;
    return readJudgeVerdict(o.winner ?? o.answer ?? o.text);
  }
  if (typeof answer !== 'string') return null;
  const t = answer.trim().replace(/^"|"$/g, '').trim();
  return t === 'A' || t === 'B' ? t : null;
}

/** The learn-judge grader: 1 when the verdict names the right side (`expected`), else 0. Pure, never throws. */
export const learnJudgeGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    const expected = task.expected;
    const v = readJudgeVerdict(answer);
    if (v === null) return { score: 0, correct: false, extracted: null, expected, reason: 'no verdict (A or B) in the answer' };
    const ok = v === expected;
    return { score: ok ? 1 : 0, correct: ok, extracted: v, expected, reason: ok ? `named the right answer (${v})` : `named ${v}; the right answer is ${expected}` };
  },
};

/**
 * Reads a learn-judge dataset name: `learn-judge` (share 0.25) or `learn-judge:blind=<share>`.
 * Returns undefined for another family. Errors: DatasetError `UNKNOWN_DATASET` for a malformed
 * knob (named, with the form).
 */
export function parseLearnJudgeName(name: string): { blind: number } | undefined {
  const n = name.toLowerCase();
  if (n === 'learn-judge') return { blind: LEARN_JUDGE_DEFAULT_BLIND };
  if (!n.startsWith('learn-judge:')) return undefined;
  const m = /^learn-judge:blind=(\d+(?:\.\d+)?)$/.exec(n);
  const share = m ? Number(m[1]) : NaN;
  if (!(share >= 0 && share <= 1)) throw new DatasetError('UNKNOWN_DATASET', `unknown dataset '${name}': the form is learn-judge:blind=<share from 0 to 1>, e.g. learn-judge:blind=0.5`, name);
  return { blind: share };
}

/** The learn-judge dataset at blind share `blind` (splits `train`, `heldout`; `classOf`: the right side). */
export function createLearnJudgeDataset(blind = LEARN_JUDGE_DEFAULT_BLIND, name = blind === LEARN_JUDGE_DEFAULT_BLIND ? 'learn-judge' : `learn-judge:blind=${blind}`): Dataset {
  return {
    name,
    splits: [...LEARN_JUDGE_SPLITS],
    grader: learnJudgeGrader,
    classOf: (t) => t.expected,
    novelty: LEARN_JUDGE_NOVELTY,
    load(opts: LoadOptions): Task[] {
      return loadProcedural(name, LEARN_JUDGE_SIZES, opts, (split, i) => learnJudgeTask(split, i, blind, name));
    },
  };
}
