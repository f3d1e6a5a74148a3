/**
 * The rollouts feature: a rollouts experiment's groups with each role's reward h and
 * group-relative advantage A (ladder mode) and the Flow-GRPO outcome advantage, read from the
 * store. Plain, structured-clone-safe and JSON-safe data (no NaN, no undefined in arrays).
 */
import * as z from 'zod';
import type { RunRecord } from '../../results/index.ts';
import { groupKeyOf } from '../../rollouts/groups.ts';
import type { AdvantageRow, Store } from '../../store/index.ts';
import type { ExperimentStatus } from '../../store/types.ts';
import { ApiError } from '../errors.ts';
import { defineFeature } from '../feature.ts';
import { Id } from '../fields.ts';

/** `getRollouts`'s payload. */
export interface GetRolloutsPayload {
  experimentId: string;
}

/** One role in one rollout: its ladder reward h_ρ and its group-relative advantage A_ρ. */
export interface RolloutRoleValue {
  /** h_ρ of the role in this rollout. */
  reward: number;
  /** A_ρ = (h_ρ − mean) / (std + 1e-6) within the group; null until the group is complete and its advantages stored. */
  advantage: number | null;
}

/** One rollout (a trajectory) of a group. */
export interface RolloutEntry {
  runId: string;
  /** Planned task index within the experiment (group index × G + rollout index). */
  taskIndex: number;
  /** The rollout's task id, `<dataset task id>#r<g>`. */
  taskId: string;
  /** The rollout's recorded seed. */
  seed: number;
  /** The grader's score 0..1: the trajectory's outcome reward. */
  score: number;
  correct: boolean;
  status: RunRecord['status'];
  /** Each learning role that took part: reward h and advantage A (ladder mode). */
  perRole: Record<string, RolloutRoleValue>;
  /** Flow-GRPO: the outcome reward normalised over the group's trajectories, broadcast to every turn; null until stored. */
  outcomeAdvantage: number | null;
  /** Faults were injected into this run (SIMULATED). */
  simulated: boolean;
}

/** A role's reward statistics over a group (population std). */
export interface RolloutRoleStats {
  mean: number;
  std: number;
  /** Rollouts in which the role has a reward. */
  size: number;
}

/** One task's group of G rollouts. */
export interface RolloutGroup {
  /** 0-based group number (the dataset task's position in the experiment). */
  index: number;
  /** The dataset task id the group was sampled for. */
  groupKey: string;
  /** Every one of the G rollouts is stored (an interrupted experiment can leave a group short; resume completes it). */
  complete: boolean;
  /** In rollout order. */
  rollouts: RolloutEntry[];
  /** Per learning role: every rollout got the same h, so every advantage is 0 (no learning signal). */
  zeroSpread: Record<string, boolean>;
  /** Per learning role: mean and std of h over the group. */
  stats: Record<string, RolloutRoleStats>;
  /** The outcome rewards (scores) over the group; `zeroSpread`: every rollout scored the same (no Flow-GRPO signal). */
  outcome: { mean: number; std: number; zeroSpread: boolean };
  /** Every learning role with a reward has zero spread: the group teaches nothing. */
  noSignal: boolean;
}

/** `getRollouts`'s answer. */
export interface RolloutsView {
  experimentId: string;
  workflowName: string;
  status: ExperimentStatus;
  /** Rollouts per task, G. */
  group: number;
  temperature: number;
  /** Co-evolution mode, e.g. `multi-agent`, `single:solver`. */
  mode: string;
  learningRoles: string[];
  /** Groups planned (dataset tasks). */
  plannedGroups: number;
  /** Groups with at least one stored rollout, in task order. */
  groups: RolloutGroup[];
}

/** The rollouts method (a store read, synchronous on the host). */
export interface RolloutsApi {
  /**
   * A rollouts experiment's groups: each rollout's seed, score, and per learning role its reward
   * h and advantage A, the Flow-GRPO outcome advantage, and zero-spread flags.
   * Errors: `NOT_FOUND` (no such experiment), `BAD_REQUEST` (field `experimentId`: not a rollouts experiment).
   */
  getRollouts(payload: GetRolloutsPayload): RolloutsView;
}

export const rolloutsFeature = defineFeature<RolloutsApi>()({
  name: 'rollouts',
  payloads: { getRollouts: z.strictObject({ experimentId: Id }) },
  handlers: ({ store }: { store: Store }) => ({ getRollouts: ({ experimentId }) => buildRolloutsView(store, experimentId) }),
});

/** Spread below this is zero (the same threshold `groupAdvantages` uses). */
const ZERO_SPREAD = 1e-12;

interface RolloutsConfigShape {
  group: number;
  temperature: number;
  mode: string;
  learningRoles: string[];
}

/** The `rollouts` block of a rollouts experiment's config, checked; null when absent or malformed. */
export function rolloutsConfigOf(config: unknown): RolloutsConfigShape | null {
  const parsed = rolloutsBlock.safeParse(config);
  if (!parsed.success) return null;
  const r = parsed.data.rollouts;
  return {
    group: r.group,
    temperature: typeof r.temperature === 'number' ? r.temperature : 0,
    mode: typeof r.mode === 'string' ? r.mode : 'multi-agent',
    learningRoles: Array.isArray(r.learningRoles) ? r.learningRoles.filter((x): x is string => typeof x === 'string') : [],
  };
}

/** A config's `rollouts` block as far as the Rollouts view needs it: a whole group size of at least 1; the rest read leniently. */
const rolloutsBlock = z.looseObject({ rollouts: z.looseObject({ group: z.number().int().min(1), temperature: z.unknown(), mode: z.unknown(), learningRoles: z.unknown() }) });

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const popStd = (xs: readonly number[]) => {
  if (!xs.length) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length);
};

/**
 * A rollouts experiment's groups with each rollout's per-role reward and advantage (from the
 * stored ladder-mode rows) and the Flow-GRPO outcome advantage (flow-grpo rows). Runs are grouped
 * as `flowlab rollouts` planned them: group = floor(taskIndex / G).
 * @throws ApiError `BAD_REQUEST` (field `experimentId`) when the experiment is not a rollouts experiment.
 */
export function buildRolloutsView(store: Store, experimentId: string): RolloutsView {
  const exp = store.getExperiment(experimentId); // NOT_FOUND
  if (exp.kind !== 'rollouts') {
    throw new ApiError(
      'BAD_REQUEST',
      `getRollouts: experiment ${exp.id} is a ${exp.kind} experiment, not a rollouts experiment; make one with \`flowlab rollouts <workflow.yaml> --dataset gsm8k --group 4 ...\``,
      'getRollouts',
      'experimentId',
    );
  }
  const cfg = rolloutsConfigOf(exp.config);
  if (!cfg) throw new ApiError('INTERNAL', `getRollouts: experiment ${exp.id} has no valid rollouts configuration (config.rollouts.group)`, 'getRollouts');
  const G = cfg.group;
  const runs = store.listRuns(exp.id);
  const rows = store.improve.advantagesOf(exp.id);
  const ladderRows = new Map<string, AdvantageRow>();
  const flowRows = new Map<string, AdvantageRow>();
  for (const r of rows) {
    if (r.mode === 'ladder') ladderRows.set(`${r.runId}\u0000${r.role}`, r);
    else if (!flowRows.has(r.runId)) flowRows.set(r.runId, r);
  }
  // Learning roles as recorded; roles seen only in stored rows are added after them.
  const roles = [...cfg.learningRoles];
  for (const r of rows) if (r.mode === 'ladder' && !roles.includes(r.role)) roles.push(r.role);

  const byGroup = new Map<number, RunRecord[]>();
  for (const run of runs) {
    const g = Math.floor(run.taskIndex / G);
    const list = byGroup.get(g);
    if (list) list.push(run);
    else byGroup.set(g, [run]);
  }

  const groups: RolloutGroup[] = [...byGroup.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, members]) => {
      members.sort((a, b) => a.taskIndex - b.taskIndex);
      const rollouts: RolloutEntry[] = members.map((run) => {
        const perRole: RolloutEntry['perRole'] = {};
        for (const role of roles) {
          const row = ladderRows.get(`${run.runId}\u0000${role}`);
          const reward = row?.reward ?? run.ladder?.[role]?.reward;
          if (reward === undefined) continue;
          perRole[role] = { reward, advantage: row ? row.advantage : null };
        }
        const flow = flowRows.get(run.runId);
        return {
          runId: run.runId,
          taskIndex: run.taskIndex,
          taskId: run.taskId,
          seed: run.seed,
          score: run.score,
          correct: run.correct,
          status: run.status,
          perRole,
          outcomeAdvantage: flow ? flow.advantage : null,
          simulated: run.simulated === true,
        };
      });
      const zeroSpread: Record<string, boolean> = {};
      const stats: Record<string, RolloutRoleStats> = {};
      for (const role of roles) {
        const hs = rollouts.flatMap((r) => (r.perRole[role] ? [r.perRole[role].reward] : []));
        if (!hs.length) continue;
        const std = popStd(hs);
        stats[role] = { mean: mean(hs), std, size: hs.length };
        zeroSpread[role] = std < ZERO_SPREAD;
      }
      const scores = rollouts.map((r) => r.score);
      const outcomeStd = popStd(scores);
      const judged = Object.values(zeroSpread);
      return {
        index,
        groupKey: groupKeyOf(members[0]!.taskId),
        complete: members.length >= G,
        rollouts,
        zeroSpread,
        stats,
        outcome: { mean: mean(scores), std: outcomeStd, zeroSpread: outcomeStd < ZERO_SPREAD },
        noSignal: judged.length > 0 && judged.every(Boolean),
      };
    });

  return {
    experimentId: exp.id,
    workflowName: exp.workflowName,
    status: exp.status,
    group: G,
    temperature: cfg.temperature,
    mode: cfg.mode,
    learningRoles: roles,
    plannedGroups: Math.ceil(store.listTasks(exp.id).length / G),
    groups,
  };
}

