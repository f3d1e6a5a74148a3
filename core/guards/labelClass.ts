/**
 * The class of a label for the datasets that have classes, without loading a dataset (so the
 * browser-safe API, core/api/client.ts, can carry it to the window): the learn-design family —
 * `learn-design` and its zones `learn-design-ood` and `learn-errand` — whose `classOf` is the
 * tool of a `tool:argument` label (core/tasks/learnDesign.ts `learnDesignClass`) — and `learn-judge`
 * (and `learn-judge:blind=<share>`) and `learn-design-judge`, whose label `A` | `B` is its own
 * class. Other names:
 * undefined (the guard then counts distinct labels as classes when labels repeat, answers.ts).
 * classOf.ts's `labelClassOf` reads `Dataset.classOf` through the registry instead;
 * labelClass.test.ts checks that both agree on every registered dataset. Pure.
 */
import { learnDesignClass } from '../tasks/learnDesign.ts';

/** The registered datasets whose `classOf` is learn-design's (`tool:argument` → `tool`). */
export const LEARN_DESIGN_CLASS_DATASETS: readonly string[] = ['learn-design', 'learn-design-ood', 'learn-errand'];

/** `dataset`'s class of a label text (e.g. `weather:today` → `weather`), or undefined for a dataset without classes or not in the family. */
export function knownLabelClassOf(dataset: string): ((label: string) => string) | undefined {
  // learn-judge (core/tasks/learnJudge.ts) and learn-design-judge: the label is the right side, A or B, and is its own class.
  if (dataset === 'learn-judge' || dataset === 'learn-design-judge' || dataset.toLowerCase().startsWith('learn-judge:')) return (label: string) => label;
  return LEARN_DESIGN_CLASS_DATASETS.includes(dataset) ? (label: string) => learnDesignClass({ expected: label }) : undefined;
}
