/**
 * Group-relative advantages (GRPO: Shao et al. 2024, DeepSeekMath, §4.1; Flow-GRPO: AgentFlow,
 * Li et al. 2025, which broadcasts one trajectory's outcome reward to all its planner turns).
 *
 * Within one task's group of G rollouts: A_i = (r_i − mean(r)) / (std(r) + ε), with the
 * population standard deviation (divide by G, not G − 1) and ε = 1e-6. A group whose rewards
 * are all equal (zero spread, including a single rollout) gives A = 0 for every rollout and is
 * reported as such: it carries no learning signal.
 */
export const ADVANTAGE_EPS = 1e-6;

export interface GroupStats {
  mean: number;
  /** Population standard deviation. */
  std: number;
  advantages: number[];
  /** True when every reward is equal (std below 1e-12): all advantages are exactly 0. */
  zeroSpread: boolean;
}

/** Advantages of one group. Throws RangeError on an empty group or a non-finite reward. */
export function groupAdvantages(rewards: readonly number[], eps = ADVANTAGE_EPS): GroupStats {
  if (rewards.length === 0) throw new RangeError('a group needs at least one rollout');
  for (const r of rewards) if (!Number.isFinite(r)) throw new RangeError(`reward ${r} is not finite`);
  const n = rewards.length;
  const mean = rewards.reduce((s, r) => s + r, 0) / n;
  const std = Math.sqrt(rewards.reduce((s, r) => s + (r - mean) ** 2, 0) / n);
  const zeroSpread = std < 1e-12;
  return { mean, std, zeroSpread, advantages: rewards.map((r) => (zeroSpread ? 0 : (r - mean) / (std + eps))) };
}

/** One rollout as advantage computation sees it. */
export interface Rollout {
  runId: string;
  /** Each role's ladder reward h_ρ in this rollout (roles that did not take part are absent). */
  rewards: Record<string, number>;
  /** The trajectory's outcome reward (the grader's score, 0..1), for Flow-GRPO. */
  outcome: number;
}

export interface RoleAdvantage {
  runId: string;
  role: string;
  mode: 'ladder' | 'flow-grpo';
  reward: number;
  advantage: number;
  groupMean: number;
  groupStd: number;
  groupSize: number;
  zeroSpread: boolean;
}

/**
 * Per-role ladder advantages of one group: for each learning role ρ, A_ρ,i from h_ρ,i over the
 * rollouts where ρ has a reward (FloWright co-evolution: every role learns from its own slice
 * of the same harness signal).
 */
export function ladderAdvantages(group: readonly Rollout[], roles: readonly string[], eps = ADVANTAGE_EPS): RoleAdvantage[] {
  const out: RoleAdvantage[] = [];
  for (const role of roles) {
    const members = group.filter((r) => r.rewards[role] !== undefined);
    if (!members.length) continue;
    const stats = groupAdvantages(members.map((r) => r.rewards[role]!), eps);
    members.forEach((r, i) => out.push({
      runId: r.runId, role, mode: 'ladder', reward: r.rewards[role]!, advantage: stats.advantages[i]!,
      groupMean: stats.mean, groupStd: stats.std, groupSize: members.length, zeroSpread: stats.zeroSpread,
    }));
  }
  return out;
}

/**
 * Flow-GRPO: one outcome reward per trajectory, normalised over the group's trajectories
 * (per trajectory, NOT per turn: normalising over turns would weight long trajectories more),
 * then broadcast unchanged to every learning role of that trajectory — and, by
 * `broadcastToTurns`, to every turn (model call) of the role.
 */
export function flowGrpoAdvantages(group: readonly Rollout[], roles: readonly string[], eps = ADVANTAGE_EPS): RoleAdvantage[] {
  const stats = groupAdvantages(group.map((r) => r.outcome), eps);
  const out: RoleAdvantage[] = [];
  group.forEach((r, i) => {
    for (const role of roles) {
      if (r.rewards[role] === undefined) continue;
      out.push({ runId: r.runId, role, mode: 'flow-grpo', reward: r.outcome, advantage: stats.advantages[i]!, groupMean: stats.mean, groupStd: stats.std, groupSize: group.length, zeroSpread: stats.zeroSpread });
    }
  });
  return out;
}

/** A turn: one model call of a role in a trajectory. */
export interface Turn {
  nodeId: string;
  attempt: number;
  callIndex: number;
  role: string;
}

/** The same advantage on every turn of the role (Flow-GRPO's broadcast). */
export function broadcastToTurns<T extends Turn>(turns: readonly T[], role: string, advantage: number): Array<T & { advantage: number }> {
  return turns.filter((t) => t.role === role).map((t) => ({ ...t, advantage }));
}
