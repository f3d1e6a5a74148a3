/**
 * `learn-unit`: the solving side of `learn-judge` (issue 25, parts 3-4). Each task is learn-judge
 * pair k's measurement request with a tool reading — the number, without a unit — and the
 * solver answers under a per-task enum grammar among exactly the answer forms learn-judge's
 * judge learned to tell apart:
 *
 * - `<n> <unit>`: right (the reading's number and the unit the request names);
 * - `<n> <other>`: the **blind spot** (`blind-unit`): the right number in the other, plausible
 *   unit of the same quantity (km/mi, C/F, kg/lb) — it has the shape of every right answer;
 * - `?? <unit>` (`lost-number`), `none`, `error`: the **ordinary mistakes**, visible in the text.
 *
 * The grader (`learnUnitGrader`) scores 1 when the answer is the right number AND the unit the
 * request names; `unitMistakeOf` names the class of any answer (what the blind-spot error rate
 * counts). Splits: `train` (1,000 tasks: learn-judge `train` pairs 0..999) and `heldout` (250:
 * learn-judge `heldout` pairs 0..249), so the held-out requests share no template, city, animal
 * or number with training, exactly as learn-judge's do.
 */
import { DatasetError } from './errors.ts';
import { LEARN_JUDGE_QUANTITIES, learnJudgeTask, type JudgeQuantity, type JudgeTaskMeta, type LearnJudgeSplit } from './learnJudge.ts';
import { loadProcedural } from './procedural.ts';
import type { Dataset, Grade, LoadOptions, SyncGrader, Task } from './types.ts';

export const LEARN_UNIT_SIZES: Record<LearnJudgeSplit, number> = { train: 1000, heldout: 250 };

/** The class of a learn-unit answer: right, the blind spot, or one of the ordinary mistakes (`other`: none of the offered forms). */
export type UnitAnswerClass = 'right' | 'blind-unit' | 'lost-number' | 'none' | 'error' | 'other';

/** What a learn-unit task records (`Task.meta`). */
export interface UnitTaskMeta {
  quantity: JudgeQuantity;
  value: number;
  /** The unit the request names, and the other unit of the same quantity. */
  unit: string;
  other: string;
  /** The answer forms the grammar offers, in this order: right, blind spot, lost number, none, error. */
  options: string[];
  novelty?: 'new-wording';
}

/**
 * The task of one split and index (pure): learn-judge pair `index`'s request (learn-judge task
 * 2·index). `input`: `{kind: 'unit', request, reading}` (`reading`: the number as text);
 * `expected`: the right answer text (`63 km`); `meta`: UnitTaskMeta. Errors: DatasetError
 * `BAD_OPTIONS` for a negative or fractional index.
 */
export function learnUnitTask(split: LearnJudgeSplit, index: number, datasetName = 'learn-unit'): Task {
  if (!Number.isInteger(index) || index < 0) throw new DatasetError('BAD_OPTIONS', `index must be a non-negative integer, got ${String(index)}`);
  const pair = learnJudgeTask(split, 2 * index, 0);
  const jm = pair.meta as unknown as JudgeTaskMeta;
  const units = LEARN_JUDGE_QUANTITIES[jm.quantity] as readonly string[];
  const other = units[0] === jm.unit ? units[1]! : units[0]!;
  const value = Number(jm.right.split(' ')[0]);
  const meta: UnitTaskMeta = { quantity: jm.quantity, value, unit: jm.unit, other, options: [`${value} ${jm.unit}`, `${value} ${other}`, `?? ${jm.unit}`, 'none', 'error'], ...(jm.novelty && { novelty: jm.novelty }) };
  return {
    id: `${datasetName}/${split}/${index}`,
    index,
    input: { kind: 'unit', request: String(pair.input.request), reading: String(value) },
    expected: jm.right,
    meta: meta as unknown as Record<string, unknown>,
  };
}

/** The answer text of a decoded answer: a string (JSON-quoted or not), or `{answer}`; anything else: undefined. */
export function unitAnswerText(answer: unknown): string | undefined {
  if (answer && typeof answer === 'object' && !Array.isArray(answer)) return unitAnswerText((answer as Record<string, unknown>).answer);
  if (typeof answer !== 'string') return undefined;
  return answer.trim().replace(/^"|"$/g, '').trim().replace(/\s+/g, ' ');
}

/**
 * The class of `answer` on `task` (pure): `right` (the right number and the requested unit),
 * `blind-unit` (the right number in the quantity's other unit), `lost-number` (`??` and a unit),
 * `none`, `error`, or `other` (anything else, an absent answer included).
 */
export function unitMistakeOf(answer: unknown, task: Task): UnitAnswerClass {
  const m = task.meta as unknown as UnitTaskMeta;
  const t = unitAnswerText(answer);
  if (t === undefined) return 'other';
  if (t === `${m.value} ${m.unit}`) return 'right';
  if (t === `${m.value} ${m.other}`) return 'blind-unit';
  if (/^\?\?\s/.test(t)) return 'lost-number';
  if (t === 'none' || t === 'error') return t;
  return 'other';
}

/** The learn-unit grader: 1 when the answer is the right number in the unit the request names, else 0 (the reason names the class). Pure, never throws. */
export const learnUnitGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    const cls = unitMistakeOf(answer, task);
    const extracted = unitAnswerText(answer) ?? null;
    const ok = cls === 'right';
    return { score: ok ? 1 : 0, correct: ok, extracted, expected: task.expected, reason: ok ? 'the right number in the requested unit' : cls === 'blind-unit' ? `the right number in the wrong unit (${String(extracted)}; the request asks for ${String(task.expected)})` : `wrong (${cls})` };
  },
};

/** The learn-unit dataset (splits `train`, `heldout`; no `classOf`: its classes are the answer classes of `unitMistakeOf`). */
export function createLearnUnitDataset(name = 'learn-unit'): Dataset {
  return {
    name,
    splits: ['train', 'heldout'],
    grader: learnUnitGrader,
    novelty: { train: 'the training split', heldout: 'new-wording (every task): learn-judge held-out requests (templates, cities, animals and numbers no training task uses)' },
    load(opts: LoadOptions): Task[] {
      return loadProcedural(name, LEARN_UNIT_SIZES, opts, (split, i) => learnUnitTask(split, i, name));
    },
  };
}
