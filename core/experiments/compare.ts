/**
 * Two experiments compared on the tasks they share (`flowlab compare`, the lab's
 * `compareExperiments`): accuracy and every role's ladder reward, B minus A, paired by dataset
 * task id, with an exact two-sided sign test and a 95% percentile-bootstrap interval of the mean
 * paired difference (core/stats: `signTest`, `bootstrapMeanCI`). Pure.
 */
import { answerGuard, deltaGuardNote, type AnswerGuard } from '../guards/index.ts';
import { bootstrapMeanCI, signTest, type BootstrapCI, type SignTest } from '../stats/index.ts';
import type { RunRecord } from '../results/index.ts';

/** One measure on both sides: the means over the pairs that have it, B − A, and the tests. */
export interface PairedDelta {
  a: number;
  b: number;
  delta: number;
  signTest: SignTest;
  ci: BootstrapCI;
}

/** What two experiments' paired runs say. `roles`: the roles both sides have a ladder reward for. */
export interface CompareReport {
  a: string;
  b: string;
  pairs: number;
  unpairedA: number;
  unpairedB: number;
  seedsMatch: boolean;
  score: PairedDelta;
  roles: Record<string, PairedDelta>;
  /**
   * The constant guard of each side's paired runs (core/guards answerGuard: best constant policy,
   * distinct answers, CONSTANT) and `note`: `both constant` when the delta is a difference between constants.
   */
  guard: { a: AnswerGuard; b: AnswerGuard; note: '' | 'both constant' | 'one constant' };
}

/**
 * Pairs the runs of two experiments by dataset task id (a task B ran twice pairs with its last
 * run) and computes the paired statistics; `seed` seeds the bootstrap's 10,000 resamples;
 * `classOf` (the dataset's class of a label) feeds the constant guard's class count.
 */
export function compareRuns(aId: string, a: readonly RunRecord[], bId: string, b: readonly RunRecord[], seed = 0, classOf?: (label: string) => string): CompareReport {
  const byTask = new Map(b.map((r) => [r.taskId, r]));
  const pairs = a.filter((r) => byTask.has(r.taskId)).map((r) => [r, byTask.get(r.taskId)!] as const);
  const paired = (pick: (r: RunRecord) => number | undefined): PairedDelta => {
    const xs = pairs.filter(([x, y]) => pick(x) !== undefined && pick(y) !== undefined);
    const diffs = xs.map(([x, y]) => pick(y)! - pick(x)!);
    const mean = (v: number[]) => (v.length ? v.reduce((s, t) => s + t, 0) / v.length : 0);
    const ma = mean(xs.map(([x]) => pick(x)!));
    const mb = mean(xs.map(([, y]) => pick(y)!));
    return { a: ma, b: mb, delta: mb - ma, signTest: signTest(diffs), ci: bootstrapMeanCI(diffs, { seed }) };
  };
  // Roles both sides have (a role only one workflow has cannot be paired).
  const ga = answerGuard(pairs.map(([x]) => x), classOf);
  const gb = answerGuard(pairs.map(([, y]) => y), classOf);
  const roles = [...new Set(pairs.flatMap(([x, y]) => Object.keys(x.ladder ?? {}).filter((role) => y.ladder?.[role])))];
  return {
    a: aId,
    b: bId,
    pairs: pairs.length,
    unpairedA: a.length - pairs.length,
    unpairedB: b.length - pairs.length,
    seedsMatch: pairs.every(([x, y]) => x.seed === y.seed),
    score: paired((r) => r.score),
    roles: Object.fromEntries(roles.map((role) => [role, paired((r) => r.ladder?.[role]?.reward)])),
    guard: { a: ga, b: gb, note: deltaGuardNote(ga, gb) },
  };
}
