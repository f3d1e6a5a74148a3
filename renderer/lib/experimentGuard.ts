/**
 * The constant-policy guard beside an experiment's accuracy in the Experiments view, as
 * `flowlab run`'s table prints it (core/guards answerGuard over the stored runs): the best
 * constant policy of the runs' labels (the most common label and the accuracy of always giving
 * it), the distinct answers given, and `CONSTANT "<answer>" <share>` when the answers collapsed
 * to one value or to fewer than the dataset's classes. The classes come from the experiment's
 * dataset as the CLI's do (core/guards `knownLabelClassOf`: learn-design's tools; checked
 * against `Dataset.classOf` in core/guards/labelClass.test.ts); other datasets: answerGuard's
 * own count (distinct labels when labels repeat). Pure.
 */
import { answerGuard, knownLabelClassOf, type AnswerGuard, type RunRecord } from '../../core/api/client.ts';

/** The guard of an experiment's stored runs on `dataset` (its name, for the classes); null with no run. */
export function experimentGuard(runs: readonly Pick<RunRecord, 'answer' | 'expected'>[], dataset: string): AnswerGuard | null {
  return runs.length ? answerGuard(runs, knownLabelClassOf(dataset)) : null;
}

/** `best constant 75.0% · 2 answers` (`-` for the best constant when no run has a label). */
export function guardSummary(g: AnswerGuard): string {
  return `best constant ${g.bestConstant ? `${(100 * g.bestConstant.accuracy).toFixed(1)}%` : '-'} · ${g.distinctAnswers} answer${g.distinctAnswers === 1 ? '' : 's'}`;
}
