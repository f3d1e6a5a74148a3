/**
 * Held-out accuracy split by what is new in each task (issue 24): a procedural family's held-out
 * split says per task whether it reuses a training template with unseen names and numbers
 * (`in-template`) or uses a wording training never saw (`new-wording`) — `Task.meta.novelty`,
 * described per split by `Dataset.novelty`. A report that pools both hides which one a gain
 * comes from; this splits it. Pure.
 */
import { answerGuard, type AnswerGuard, type GuardRun } from './answers.ts';

/** What the split reads of a run. */
export interface NoveltyRun extends GuardRun {
  taskId: string;
  correct: boolean;
}

/** One part of a held-out split: its runs, the share correct (0..1) and its constant guard. */
export interface NoveltyAccuracy {
  runs: number;
  accuracy: number;
  guard: AnswerGuard;
}

/**
 * Accuracy per novelty (`noveltyOf(taskId)`, e.g. `in-template`, `new-wording`), keys sorted;
 * runs whose task has no novelty are left out. Undefined unless at least two novelties occur
 * (a split with one kind of task has nothing to split).
 */
export function accuracyByNovelty(runs: readonly NoveltyRun[], noveltyOf: (taskId: string) => string | undefined, classOf?: (label: string) => string): Record<string, NoveltyAccuracy> | undefined {
  const by = new Map<string, NoveltyRun[]>();
  for (const r of runs) {
    const n = noveltyOf(r.taskId);
    if (n !== undefined) by.set(n, [...(by.get(n) ?? []), r]);
  }
  if (by.size < 2) return undefined;
  return Object.fromEntries([...by].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([n, rs]) => [n, { runs: rs.length, accuracy: rs.filter((r) => r.correct).length / rs.length, guard: answerGuard(rs, classOf) }]));
}
