/**
 * The constant-policy guard beside an experiment's accuracy in the Experiments view, as
 * `flowlab run`'s table prints it (core/guards answerGuard over the stored runs): the best
 * constant policy of the runs' labels (the most common label and the accuracy of always giving
 * it), the distinct answers given, and `CONSTANT "<answer>" <share>` when the answers collapsed
 * to one value (or to fewer than the labels' classes). The class count is answerGuard's own
 * (distinct labels when labels repeat): the window does not load the dataset, so a dataset with a
 * coarser `classOf` (learn-design: the tool) may count more classes here than the CLI. Pure.
 */
import { answerGuard, type AnswerGuard, type RunRecord } from '../../core/api/client.ts';

/** The guard of an experiment's stored runs; null with no run. */
export function experimentGuard(runs: readonly Pick<RunRecord, 'answer' | 'expected'>[]): AnswerGuard | null {
  return runs.length ? answerGuard(runs) : null;
}

/** `best constant 75.0% · 2 answers` (`-` for the best constant when no run has a label). */
export function guardSummary(g: AnswerGuard): string {
  return `best constant ${g.bestConstant ? `${(100 * g.bestConstant.accuracy).toFixed(1)}%` : '-'} · ${g.distinctAnswers} answer${g.distinctAnswers === 1 ? '' : 's'}`;
}
