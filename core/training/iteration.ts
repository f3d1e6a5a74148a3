/**
 * The pure parts of one train-loop iteration (core/training/loop.ts): which tasks it samples,
 * each role's policy-step batch, where a version is written, and the numbers reported. No I/O.
 */
import { safeFileName } from '../fileNames.ts';
import path from 'node:path';
import { RUNGS } from '../reward/ladder.ts';
import { answerGuard } from '../guards/index.ts';
import { rolloutIndex, rolloutTaskId, type RolloutSummary } from '../rollouts/groups.ts';
import type { AdvantageRow } from '../store/improve.ts';
import type { ExperimentCall } from '../store/types.ts';
import type { Task } from '../tasks/types.ts';
import type { RunRecord } from '../results/index.ts';
import type { PolicySample, SftSequence, StepResult } from './port.ts';
import { TrainingError } from './errors.ts';
import { policySamples, sftSequences, type MaskOf } from './samples.ts';
import type { ClassAccuracy, ConstantBaseline, HeldoutResult, IterationMetrics, RoleIterationMetrics, RoleStepKind, RungMeans, SftSchedule } from './types.ts';

/** The ref a trained role's model goes by (each trained role has its own). */
export const trainRef = (role: string) => `train:${role}`;

/**
 * The training tasks of iteration `k` (1-based): the next `perIteration` of `trainTasks` after
 * those of iterations 1..k-1, wrapping around. Throws on an empty task list.
 */
export function iterationTasks<T>(trainTasks: readonly T[], k: number, perIteration: number): T[] {
  if (!trainTasks.length) throw new TrainingError('NO_TASKS', 'train-loop: no training tasks');
  return Array.from({ length: perIteration }, (_, i) => trainTasks[((k - 1) * perIteration + i) % trainTasks.length]!);
}

/**
 * The task list of an experiment sampling each task `K` times: task ti's sample g gets index
 * `rolloutIndex(ti, g, K)` (ti·K + g: a group of K is consecutive, see core/rollouts/groups.ts)
 * and id `rolloutTaskId(id, g)`, or the task's own id when `plainSingle` and K is 1.
 */
export function sampledTaskList(tasks: readonly Task[], K: number, plainSingle = false): Array<{ taskIndex: number; taskId: string; input: Task['input']; expected: Task['expected']; meta?: Task['meta'] }> {
  return tasks.flatMap((t, ti) => Array.from({ length: K }, (_, g) => ({
    taskIndex: rolloutIndex(ti, g, K),
    taskId: plainSingle && K === 1 ? t.id : rolloutTaskId(t.id, g),
    input: t.input,
    expected: t.expected,
    ...(t.meta && { meta: t.meta }),
  })));
}

/** One role's policy-step batch: its samples, and how many carry a non-zero advantage (signal). */
export interface RoleBatch {
  samples: PolicySample[];
  signal: number;
}

/**
 * Each trained role's batch: its own trainable calls (recorded token ids), each with its run's
 * per-role ladder (GRPO) advantage from `rows`; calls of runs without one are left out
 * (see `policySamples`). Roles with no sample get an empty batch.
 */
export function roleStepBatches(calls: readonly ExperimentCall[], rows: readonly AdvantageRow[], roles: readonly string[], maskOf?: MaskOf): Map<string, RoleBatch> {
  const out = new Map<string, RoleBatch>();
  for (const role of roles) {
    const adv = new Map(rows.filter((r) => r.role === role && r.mode === 'ladder').map((r) => [r.runId, r.advantage]));
    const samples = policySamples(calls, role, (runId) => adv.get(runId), maskOf);
    out.set(role, { samples, signal: samples.filter((s) => s.advantage !== 0).length });
  }
  return out;
}

/**
 * What iteration `k` (1-based) does for a trained role (`role`; absent: any role the schedule
 * covers) under `sft` (absent, or a role outside `sft.roles`: policy steps only): the SFT step
 * alone during the warm start (k ≤ warmStart), then the policy step, with the SFT step before it
 * when `mix` is set.
 */
export function iterationSteps(k: number, sft: SftSchedule | undefined, role?: string): { sft: boolean; policy: boolean } {
  if (!sft || (role !== undefined && sft.roles && !sft.roles.includes(role))) return { sft: false, policy: true };
  if (k <= sft.warmStart) return { sft: true, policy: false };
  return { sft: sft.mix, policy: true };
}

/** A role's success threshold under `minScore` (a number for all, or per role; a role left out: 1). */
export function minScoreOf(minScore: SftSchedule['minScore'], role: string): number {
  return typeof minScore === 'number' ? minScore : (minScore[role] ?? 1);
}

/**
 * Each trained role's SFT batch: its trainable calls (recorded token ids; see `sftSequences`)
 * from the runs whose grader score is at least the role's threshold (`minScoreOf`) and above 0,
 * each distinct sequence once. Keeping duplicates would weight a task by how often the current
 * policy already solves it — the classes it favours — so a rare right answer (one success in a
 * group) would count as little as 1/G of a common one; once per distinct success, every task
 * the group solved weighs the same (as STaR keeps one rationale per solved problem, Zelikman et
 * al. 2022, §3.1). Roles with no successful call get an empty batch.
 *
 * With `classOf` (the task class of a run: the dataset's `classOf` of its expected answer), the
 * batch is balanced over classes: each class's distinct successes are repeated, in turn, up to
 * the count of the class with most, so a class the policy already favours does not outweigh a
 * rarely solved one — without it, SFT on a choosing role's own successes sharpens whatever it
 * already picks most (docs/laptop-rl.md, "The designer team"). `perClass`: keep at most this
 * many distinct successes per class, the first in `calls` order (the replay pool passes the
 * newest first).
 */
export function roleSftBatches(calls: readonly ExperimentCall[], runs: readonly RunRecord[], roles: readonly string[], minScore: SftSchedule['minScore'], maskOf?: MaskOf, classOf?: (runId: string) => string | undefined, perClass?: number): Map<string, SftSequence[]> {
  const out = new Map<string, SftSequence[]>();
  for (const role of roles) {
    const threshold = minScoreOf(minScore, role);
    const kept = new Set(runs.filter((r) => r.score > 0 && r.score >= threshold).map((r) => r.runId as string));
    const seen = new Set<string>();
    const byClass = new Map<string, SftSequence[]>();
    for (const c of calls) {
      if (c.role !== role || !kept.has(c.runId)) continue;
      const [q] = sftSequences([c], role, () => true, maskOf);
      if (!q) continue;
      const key = q.tokens.join(',');
      if (seen.has(key)) continue;
      seen.add(key);
      const cls = classOf?.(c.runId) ?? '';
      const have = byClass.get(cls) ?? [];
      if (!perClass || have.length < perClass) byClass.set(cls, [...have, q]);
    }
    out.set(role, balanced(byClass));
  }
  return out;
}

/** Every group's items repeated in turn up to the size of the largest group (one group: as is), in group order. */
export function balanced<T>(groups: ReadonlyMap<string, readonly T[]>): T[] {
  const most = Math.max(0, ...[...groups.values()].map((g) => g.length));
  const out: T[] = [];
  for (const g of groups.values()) for (let i = 0; i < (groups.size > 1 ? most : g.length); i++) out.push(g[i % g.length]!);
  return out;
}

/** The step kind a role took: `sft`, `grpo`, both, or `none` (neither step had data). */
export function stepKind(sftStep: StepResult | undefined, policyStep: StepResult | undefined): RoleStepKind {
  if (sftStep && policyStep) return 'sft+grpo';
  return sftStep ? 'sft' : policyStep ? 'grpo' : 'none';
}

/** Wiring root failures blamed on `role`, per run (mean over `runs`; runs without credit count 0). */
export function wiringRootFailures(runs: readonly RunRecord[], role: string): number {
  return mean(runs.map((r) => (r.credit?.roots ?? []).filter((f) => f.failureClass === 'wiring' && f.blamed === role).length));
}

/**
 * Accuracy per class: runs grouped by `classOf` of their expected answer (runs without one are
 * left out), each class's run count, share correct, mean score, and share whose answer is of the
 * class (`classOf` of the answer text: the right design, whatever its arguments); keys sorted.
 * Undefined when there is no `classOf`.
 */
export function classAccuracy(runs: readonly RunRecord[], classOf: ((task: { expected: string }) => string) | undefined): Record<string, ClassAccuracy> | undefined {
  if (!classOf) return undefined;
  const by = new Map<string, RunRecord[]>();
  for (const r of runs) {
    if (r.expected === undefined) continue;
    const c = classOf({ expected: r.expected });
    by.set(c, [...(by.get(c) ?? []), r]);
  }
  const answerIs = (r: RunRecord, c: string) => (r.answer === undefined ? 0 : classOf({ expected: r.answer }) === c ? 1 : 0);
  return Object.fromEntries([...by].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, rs]) => [c, {
    runs: rs.length,
    accuracy: mean(rs.map((r) => (r.correct ? 1 : 0))),
    score: mean(rs.map((r) => r.score)),
    classRight: mean(rs.map((r) => answerIs(r, c))),
  }]));
}

/**
 * The best constant policy on `runs`: always giving the most common expected answer (its share
 * of the runs is that policy's accuracy) and, given `classOf`, always choosing the most common
 * class (its share is that policy's class accuracy). Ties go to the first in sorted order.
 */
export function constantBaseline(runs: readonly RunRecord[], classOf?: (task: { expected: string }) => string): ConstantBaseline {
  // One computation for every output: core/guards answerGuard (trimmed labels; ties to the first in sorted order).
  const g = answerGuard(runs, classOf && ((label) => classOf({ expected: label })));
  return { answer: g.bestConstant?.answer ?? null, accuracy: g.bestConstant?.accuracy ?? 0, ...(g.bestConstantClass && { class: g.bestConstantClass.class, classAccuracy: g.bestConstantClass.accuracy }) };
}

/** Where iteration `k`'s version of `role` is written: `<versionsDir>/<loopId>/<role>/iter-<kkk>.gguf` (role made file-safe). */
export function versionFile(versionsDir: string, loopId: string, role: string, k: number): string {
  return path.join(versionsDir, loopId, safeFileName(role, { unique: false }), `iter-${String(k).padStart(3, '0')}.gguf`);
}

/** Mean of `xs`; 0 for none. */
export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** Mean ladder reward h of `role` over `runs` (runs without the role's ladder left out). */
export function roleReward(runs: readonly RunRecord[], role: string): number {
  return mean(runs.map((r) => r.ladder?.[role]?.reward).filter(isNum));
}

/** Mean of each rung of `role`'s ladder over `runs`. */
export function rungMeans(runs: readonly RunRecord[], role: string): RungMeans {
  const ladders = runs.map((r) => r.ladder?.[role]).filter((l) => l !== undefined);
  return Object.fromEntries(RUNGS.map((rung) => [rung, mean(ladders.map((l) => l[rung]))])) as RungMeans;
}

/**
 * One role's metrics of an iteration, before its version is written (`versionId` unset, `path`
 * the role's current file): reward and rungs over `runs`, the batch sizes, the groups with no
 * reward spread, the policy step's loss and KL, in SFT iterations (`sft`) the SFT step's
 * sequences and loss and which steps it took, and the tokens of both steps with their rate.
 * (The loop adds `step` elsewhere and the wiring root failures per run: `roleRunFacts`.)
 */
export function roleIterationMetrics(
  runs: readonly RunRecord[],
  role: string,
  summary: RolloutSummary,
  batch: RoleBatch,
  step: StepResult | undefined,
  currentPath: string,
  sft?: { sequences: number; step: StepResult | undefined },
): RoleIterationMetrics {
  const tokens = (step?.tokens ?? 0) + (sft?.step?.tokens ?? 0);
  const ms = (step?.ms ?? 0) + (sft?.step?.ms ?? 0);
  const m: RoleIterationMetrics = {
    reward: roleReward(runs, role),
    rungs: rungMeans(runs, role),
    samples: batch.samples.length,
    signalSamples: batch.signal,
    zeroSpreadGroups: summary.roles[role]?.zeroSpreadGroups ?? 0,
    trainTokens: tokens,
    path: currentPath,
  };
  if (step) {
    m.loss = step.loss;
    if (step.kl !== undefined) m.kl = step.kl;
  }
  if (sft) {
    m.step = stepKind(sft.step, step);
    m.sftSequences = sft.sequences;
    if (sft.step) m.sftLoss = sft.step.loss;
  }
  if (ms > 0 && tokens > 0) m.trainTokensPerSecond = tokens / (ms / 1000);
  return m;
}

/** Performance-clock marks of an iteration, ms: start, sampled and scored, trained, written and reloaded. */
export interface IterationClock {
  start: number;
  sampled: number;
  trained: number;
  end: number;
}

/**
 * An iteration's metrics: mean grader score (and accuracy per class, given `classOf`), the roles' metrics, completion tokens sampled (the
 * recorded ids, else the call's count) and their rate over the sampling seconds, and the
 * seconds of sampling, training, write + reload and in all.
 */
export function iterationMetrics(k: number, experimentId: string, runs: readonly RunRecord[], calls: readonly ExperimentCall[], roles: Record<string, RoleIterationMetrics>, t: IterationClock, classOf?: (task: { expected: string }) => string): IterationMetrics {
  const sampledTokens = calls.reduce((s, c) => s + (c.completionTokenIds?.length ?? c.completionTokens), 0);
  const classes = classAccuracy(runs, classOf);
  return {
    iteration: k,
    experimentId,
    score: mean(runs.map((r) => r.score)),
    roles,
    ...(classes && { classes }),
    sampledTokens,
    sampleTokensPerSecond: sampledTokens / Math.max(1e-9, (t.sampled - t.start) / 1000),
    seconds: { sampling: (t.sampled - t.start) / 1000, training: (t.trained - t.sampled) / 1000, writeReload: (t.end - t.trained) / 1000, total: (t.end - t.start) / 1000 },
  };
}

/**
 * A held-out evaluation's result: mean grader score over its runs, their number, each trained
 * role's mean ladder reward, and the first three error-free completions of each role (the
 * loop adds `heldoutAccuracy`).
 */
export function heldoutResult(experimentId: string, runs: readonly RunRecord[], calls: readonly ExperimentCall[], roles: readonly string[]): HeldoutResult {
  return {
    experimentId,
    score: mean(runs.map((r) => r.score)),
    samples: runs.length,
    roles: Object.fromEntries(roles.map((role) => [role, roleReward(runs, role)])),
    examples: Object.fromEntries(roles.map((role) => [role, calls.filter((c) => c.role === role && !c.error).slice(0, 3).map((c) => c.completion)])),
  };
}

/**
 * What a held-out evaluation adds to `heldoutResult`: the share of runs correct; given
 * `classOf`, accuracy per class (`classAccuracy`) and the share whose answer is of the right
 * class; the best constant policy on the same runs (`constantBaseline`) and the constant guard
 * (core/guards answerGuard: distinct answers, CONSTANT); and the wiring root failures blamed on
 * each trained role, per run.
 */
export function heldoutAccuracy(runs: readonly RunRecord[], roles: readonly string[], classOf?: (task: { expected: string }) => string): Required<Pick<HeldoutResult, 'accuracy' | 'constant' | 'guard' | 'wiringRootFailures'>> & Pick<HeldoutResult, 'classes' | 'classAccuracy'> {
  const classes = classAccuracy(runs, classOf);
  const graded = runs.filter((r) => r.expected !== undefined);
  return {
    accuracy: mean(runs.map((r) => (r.correct ? 1 : 0))),
    ...(classes && classOf && { classes, classAccuracy: mean(graded.map((r) => (r.answer !== undefined && classOf({ expected: r.answer }) === classOf({ expected: r.expected! }) ? 1 : 0))) }),
    constant: constantBaseline(runs, classOf),
    guard: answerGuard(runs, classOf && ((label) => classOf({ expected: label }))),
    wiringRootFailures: Object.fromEntries(roles.map((role) => [role, wiringRootFailures(runs, role)])),
  };
}

const isNum = (x: number | undefined): x is number => typeof x === 'number' && Number.isFinite(x);
