/**
 * `learn-design-judge`: the judging side of `learn-design` (issue 25, part 3, for the inner
 * loop). Each task shows a learn-design request and two answers of a team, `<tool> <argument>`
 * (`weather tomorrow`), one right and one wrong; the judge answers `A` or `B` in learn-judge's
 * format (examples/judge-design.yaml: `Request: …\nA: …\nB: …\nRight:` under an enum grammar),
 * and the grader scores 1 when it named the right one. It is what `evolve learn-design --judge
 * pair` asks the self-judge about two versions' answers on a selection task
 * (core/mass/learnDesignFamily.ts `learnDesignJudge`), so a judge trained here judges there
 * without a new prompt.
 *
 * Pair k of a split is learn-design task k of that split (core/tasks/learnDesign.ts); tasks 2k
 * and 2k+1 show it in both orders (which side the right answer takes first is drawn from the
 * seed), as learn-judge's do, so `flowlab judge-audit` measures position consistency. The wrong
 * answer is one of four kinds (`mistake`, drawn per pair):
 *
 * - `wrong-tool`: another tool with the right argument (`search tomorrow`): the pair of words
 *   does not go together;
 * - `wrong-argument`: the right tool with another of its arguments (`weather today` where the
 *   request says tomorrow): only the request tells;
 * - `wrong-both`: another tool and one of its arguments (`math add`);
 * - `none`: no answer.
 *
 * There is no blind-spot class (`blind` false on every pair). Splits: `train` (4,000 tasks:
 * learn-design `train` 0..1999) and `heldout` (1,000: learn-design `heldout` 0..499, of which
 * three pairs in four are **training templates** with unseen names and numbers and every fourth
 * is worded in a template no other split uses; `novelty` says which).
 */
import { fnv1a32, mulberry32 } from '../random.ts';
import { DatasetError } from './errors.ts';
import { LEARN_DESIGN_SIZES, LEARN_DESIGN_TOOL_NAMES, LEARN_DESIGN_TOOLS, learnDesignTask, type LearnDesignSplit, type LearnDesignTool } from './learnDesign.ts';
import { learnJudgeGrader } from './learnJudge.ts';
import { loadProcedural, pick } from './procedural.ts';
import type { Dataset, LoadOptions, Task } from './types.ts';

export const DESIGN_JUDGE_MISTAKES = ['wrong-tool', 'wrong-argument', 'wrong-both', 'none'] as const;
export type DesignJudgeMistake = (typeof DESIGN_JUDGE_MISTAKES)[number];
export const LEARN_DESIGN_JUDGE_SIZES: Record<LearnDesignSplit, number> = { train: 2 * LEARN_DESIGN_SIZES.train, heldout: 2 * LEARN_DESIGN_SIZES.heldout };

/** What a learn-design-judge task records (`Task.meta`): the fields `flowlab judge-audit` reads (class, pair, order, mistake, blind) and the pair's answers. */
export interface DesignJudgeMeta {
  class: 'A' | 'B';
  pair: number;
  order: 0 | 1;
  mistake: DesignJudgeMistake;
  blind: false;
  right: string;
  wrong: string;
  novelty?: 'in-template' | 'new-wording';
}

/** A team's answer as the judge reads it: `<tool> <argument>`, `none` for a missing part, `none` when both are missing. Pure. */
export function designAnswerText(tool: string | undefined, argument: string | undefined): string {
  const t = tool?.trim().toLowerCase() || '';
  const a = argument?.trim().toLowerCase() || '';
  return t || a ? `${t || 'none'} ${a || 'none'}` : 'none';
}

/**
 * The task of one split and index (pure): learn-design task ⌊index/2⌋'s request with its right
 * answer and a wrong one, in order `index mod 2`. `input`: `{kind: 'judge', request, a, b}`;
 * `expected`: `A` | `B`; `meta`: DesignJudgeMeta. Errors: DatasetError `BAD_OPTIONS` for a
 * negative or fractional index.
 */
export function learnDesignJudgeTask(split: LearnDesignSplit, index: number, datasetName = 'learn-design-judge'): Task {
  if (!Number.isInteger(index) || index < 0) throw new DatasetError('BAD_OPTIONS', `index must be a non-negative integer, got ${String(index)}`);
  const pair = Math.floor(index / 2);
  const order = (index % 2) as 0 | 1;
  const base = learnDesignTask(split, pair);
  const tool = base.meta!.tool as LearnDesignTool;
  const argument = String(base.meta!.argument);
  const r = mulberry32(fnv1a32(`design-judge/${split}/${pair}`));
  const mistake = pick(r, DESIGN_JUDGE_MISTAKES);
  const otherTools = LEARN_DESIGN_TOOL_NAMES.filter((t) => t !== tool);
  const otherTool = pick(r, otherTools);
  const own = LEARN_DESIGN_TOOLS[tool].values as readonly string[];
  const wrong =
    mistake === 'wrong-tool' ? designAnswerText(otherTool, argument)
    : mistake === 'wrong-argument' ? designAnswerText(tool, pick(r, own.filter((v) => v !== argument)))
    : mistake === 'wrong-both' ? designAnswerText(otherTool, pick(r, LEARN_DESIGN_TOOLS[otherTool].values as readonly string[]))
    : 'none';
  const right = designAnswerText(tool, argument);
  const rightFirst = r() < 0.5;
  const rightIsA = rightFirst === (order === 0);
  const novelty = base.meta!.novelty as DesignJudgeMeta['novelty'];
  const meta: DesignJudgeMeta = { class: rightIsA ? 'A' : 'B', pair, order, mistake, blind: false, right, wrong, ...(novelty && { novelty }) };
  return {
    id: `${datasetName}/${split}/${index}`,
    index,
    input: { kind: 'judge', request: String(base.input.request), a: rightIsA ? right : wrong, b: rightIsA ? wrong : right },
    expected: meta.class,
    meta: meta as unknown as Record<string, unknown>,
  };
}

/** The learn-design-judge dataset (splits `train`, `heldout`; `classOf`: the right side, so a class-balanced SFT pool is balanced over positions; graded as learn-judge). */
export function createLearnDesignJudgeDataset(name = 'learn-design-judge'): Dataset {
  return {
    name,
    splits: ['train', 'heldout'],
    grader: learnJudgeGrader,
    classOf: (t) => t.expected,
    novelty: { train: 'the training split', heldout: 'learn-design held-out requests: in-template (three pairs in four: training templates, unseen names and numbers) and new-wording (templates no other split uses)' },
    load(opts: LoadOptions): Task[] {
      return loadProcedural(name, LEARN_DESIGN_JUDGE_SIZES, opts, (split, i) => learnDesignJudgeTask(split, i, name));
    },
  };
}
