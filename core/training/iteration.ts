/**
 * The pure parts of one train-loop iteration (core/training/loop.ts): which tasks it samples,
 * each role's policy-step batch, where a version is written, and the numbers reported. No I/O.
 */
import path from 'node:path';
import { RUNGS } from '../reward/ladder.ts';
import { rolloutIndex, rolloutTaskId, type RolloutSummary } from '../rollouts/groups.ts';
import type { AdvantageRow } from '../store/improve.ts';
import type { ExperimentCall } from '../store/types.ts';
import type { Task } from '../tasks/types.ts';
import type { RunRecord } from '../results/index.ts';
import type { PolicySample, StepResult } from './port.ts';
import { TrainingError } from './errors.ts';
import { policySamples } from './samples.ts';
import type { HeldoutResult, IterationMetrics, RoleIterationMetrics, RungMeans } from './types.ts';

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
export function sampledTaskList(tasks: readonly Task[], K: number, plainSingle = false): Array<{ taskIndex: number; taskId: string; input: Task['input']; expected: Task['expected'] }> {
  return tasks.flatMap((t, ti) => Array.from({ length: K }, (_, g) => ({
    taskIndex: rolloutIndex(ti, g, K),
    taskId: plainSingle && K === 1 ? t.id : rolloutTaskId(t.id, g),
    input: t.input,
    expected: t.expected,
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
export function roleStepBatches(calls: readonly ExperimentCall[], rows: readonly AdvantageRow[], roles: readonly string[]): Map<string, RoleBatch> {
  const out = new Map<string, RoleBatch>();
  for (const role of roles) {
    const adv = new Map(rows.filter((r) => r.role === role && r.mode === 'ladder').map((r) => [r.runId, r.advantage]));
    const samples = policySamples(calls, role, (runId) => adv.get(runId));
    out.set(role, { samples, signal: samples.filter((s) => s.advantage !== 0).length });
  }
  return out;
}

/** Where iteration `k`'s version of `role` is written: `<versionsDir>/<loopId>/<role>/iter-<kkk>.gguf` (role made file-safe). */
export function versionFile(versionsDir: string, loopId: string, role: string, k: number): string {
  return path.join(versionsDir, loopId, safeName(role), `iter-${String(k).padStart(3, '0')}.gguf`);
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
 * reward spread, and the step's loss, KL, tokens and tokens per second (when it stepped).
 */
export function roleIterationMetrics(runs: readonly RunRecord[], role: string, summary: RolloutSummary, batch: RoleBatch, step: StepResult | undefined, currentPath: string): RoleIterationMetrics {
  const m: RoleIterationMetrics = {
    reward: roleReward(runs, role),
    rungs: rungMeans(runs, role),
    samples: batch.samples.length,
    signalSamples: batch.signal,
    zeroSpreadGroups: summary.roles[role]?.zeroSpreadGroups ?? 0,
    trainTokens: step?.tokens ?? 0,
    path: currentPath,
  };
  if (step) {
    m.loss = step.loss;
    if (step.kl !== undefined) m.kl = step.kl;
    if (step.ms > 0) m.trainTokensPerSecond = step.tokens / (step.ms / 1000);
  }
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
 * An iteration's metrics: mean grader score, the roles' metrics, completion tokens sampled (the
 * recorded ids, else the call's count) and their rate over the sampling seconds, and the
 * seconds of sampling, training, write + reload and in all.
 */
export function iterationMetrics(k: number, experimentId: string, runs: readonly RunRecord[], calls: readonly ExperimentCall[], roles: Record<string, RoleIterationMetrics>, t: IterationClock): IterationMetrics {
  const sampledTokens = calls.reduce((s, c) => s + (c.completionTokenIds?.length ?? c.completionTokens), 0);
  return {
    iteration: k,
    experimentId,
    score: mean(runs.map((r) => r.score)),
    roles,
    sampledTokens,
    sampleTokensPerSecond: sampledTokens / Math.max(1e-9, (t.sampled - t.start) / 1000),
    seconds: { sampling: (t.sampled - t.start) / 1000, training: (t.trained - t.sampled) / 1000, writeReload: (t.end - t.trained) / 1000, total: (t.end - t.start) / 1000 },
  };
}

/**
 * A held-out evaluation's result: mean grader score over its runs, their number, each trained
 * role's mean ladder reward, and the first three error-free completions of each role.
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

const isNum = (x: number | undefined): x is number => typeof x === 'number' && Number.isFinite(x);
const safeName = (role: string) => role.replace(/[^A-Za-z0-9_.-]/g, '_');
