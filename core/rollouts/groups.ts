import type { AdvantageRow } from '../store/improve.ts';
import type { RunRecord } from '../results/index.ts';
import { flowGrpoAdvantages, ladderAdvantages, type RoleAdvantage, type Rollout } from './advantages.ts';

/** Planned task index of rollout `g` of task `t` in a group of size G. */
export const rolloutIndex = (t: number, g: number, G: number) => t * G + g;
/** The id of rollout `g` of a dataset task. */
export const rolloutTaskId = (taskId: string, g: number) => `${taskId}#r${g}`;
/** The dataset task a rollout was sampled for. */
export const groupKeyOf = (rolloutTaskIdText: string) => rolloutTaskIdText.replace(/#r\d+$/, '');

export interface RolloutSummary {
  groups: number;
  trajectories: number;
  /** Groups whose ladder rewards had zero spread for every learning role (no signal at all). */
  zeroSpreadGroups: number;
  /** Groups whose outcome rewards had zero spread (no Flow-GRPO signal). */
  zeroSpreadOutcomeGroups: number;
  roles: Record<string, { reward: { mean: number; std: number }; advantage: { mean: number; std: number }; zeroSpreadGroups: number }>;
}

/**
 * Advantages of every complete group of a rollouts experiment (runs grouped by task: index / G),
 * both per-role ladder (GRPO) and Flow-GRPO, ready for `store.improve.saveAdvantages`, and their
 * summary. Incomplete groups (an interrupted experiment) are skipped until resumed.
 */
export function groupRollouts(runs: readonly RunRecord[], G: number, roles: readonly string[]): { rows: AdvantageRow[]; summary: RolloutSummary } {
  const byGroup = new Map<number, RunRecord[]>();
  for (const r of runs) {
    const g = Math.floor(r.taskIndex / G);
    byGroup.set(g, [...(byGroup.get(g) ?? []), r]);
  }
  const rows: AdvantageRow[] = [];
  let groups = 0;
  let trajectories = 0;
  let zeroSpreadGroups = 0;
  let zeroSpreadOutcomeGroups = 0;
  const perRole: Record<string, { rewards: number[]; advantages: number[]; zero: number }> = Object.fromEntries(roles.map((r) => [r, { rewards: [], advantages: [], zero: 0 }]));
  const toRow = (key: string) => (a: RoleAdvantage): AdvantageRow => ({ runId: a.runId, role: a.role, mode: a.mode, groupKey: key, reward: a.reward, advantage: a.advantage, groupMean: a.groupMean, groupStd: a.groupStd, groupSize: a.groupSize });
  for (const [, members] of [...byGroup.entries()].sort((a, b) => a[0] - b[0])) {
    if (members.length < G) continue;
    groups++;
    trajectories += members.length;
    const key = groupKeyOf(members[0]!.taskId);
    const rollouts: Rollout[] = members.map((r) => ({
      runId: r.runId,
      outcome: r.score,
      rewards: Object.fromEntries(roles.filter((role) => r.ladder?.[role]).map((role) => [role, r.ladder![role]!.reward])),
    }));
    const ladder = ladderAdvantages(rollouts, roles);
    const flow = flowGrpoAdvantages(rollouts, roles);
    rows.push(...ladder.map(toRow(key)), ...flow.map(toRow(key)));
    const zeroRoles = new Set(ladder.filter((a) => a.zeroSpread).map((a) => a.role));
    if (roles.every((r) => zeroRoles.has(r) || !ladder.some((a) => a.role === r))) zeroSpreadGroups++;
    if (flow[0]?.zeroSpread ?? true) zeroSpreadOutcomeGroups++;
    for (const role of roles) {
      const mine = ladder.filter((a) => a.role === role);
      if (mine[0]?.zeroSpread) perRole[role]!.zero++;
      for (const a of mine) { perRole[role]!.rewards.push(a.reward); perRole[role]!.advantages.push(a.advantage); }
    }
  }
  const ms = (xs: number[]) => {
    if (!xs.length) return { mean: 0, std: 0 };
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    return { mean: round(mean), std: round(Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / xs.length)) };
  };
  const summary: RolloutSummary = {
    groups,
    trajectories,
    zeroSpreadGroups,
    zeroSpreadOutcomeGroups,
    roles: Object.fromEntries(roles.map((r) => [r, { reward: ms(perRole[r]!.rewards), advantage: ms(perRole[r]!.advantages), zeroSpreadGroups: perRole[r]!.zero }])),
  };
  return { rows, summary };
}

const round = (x: number) => Math.round(x * 1e9) / 1e9;
