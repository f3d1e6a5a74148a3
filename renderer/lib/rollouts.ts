/**
 * The Rollouts view's model (pure): which experiments are rollouts experiments, a group's
 * rollouts as side-by-side columns, and how a signed advantage reads — a sign symbol and a
 * signed number, never colour alone — with a bar around zero.
 */
import type { ExperimentSummary, RolloutEntry, RolloutGroup, RolloutsView } from '../../core/api/client.ts';

/** The rollouts experiments of a list (kind `rollouts`), in list order (newest first). */
export function rolloutExperiments(list: readonly ExperimentSummary[]): ExperimentSummary[] {
  return list.filter((e) => e.kind === 'rollouts');
}

/** Which side of zero a value is on; `none` when there is no value. */
export type Sign = 'pos' | 'neg' | 'zero' | 'none';

/** Values closer to zero than this read as zero (they print as 0.00 anyway). */
const ZERO = 5e-3;

export function signOf(x: number | null | undefined): Sign {
  if (x === null || x === undefined || !Number.isFinite(x)) return 'none';
  if (Math.abs(x) < ZERO) return 'zero';
  return x > 0 ? 'pos' : 'neg';
}

/** The symbol beside a signed value: ▲ above zero, ▼ below, = at zero, – none. */
export const SIGN_SYMBOL: Record<Sign, string> = { pos: '▲', neg: '▼', zero: '=', none: '–' };
/** Words for screen readers and tooltips. */
export const SIGN_WORD: Record<Sign, string> = { pos: 'positive', neg: 'negative', zero: 'zero', none: 'not computed' };

/** A signed number with an explicit sign: `+1.22`, `−0.71` (U+2212), `0.00`; null -> `–`. */
export function signed(x: number | null | undefined, digits = 2): string {
  const sign = signOf(x);
  if (sign === 'none') return '–';
  if (sign === 'zero') return (0).toFixed(digits);
  const text = Math.abs(x!).toFixed(digits);
  return sign === 'pos' ? `+${text}` : `−${text}`;
}

/** A plain number to `digits` places; null -> `–`. */
export function fixed(x: number | null | undefined, digits = 2): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits);
}

/** A bar around a centre line: which side it grows to and how far (0..50% of the track). */
export interface SignedBar {
  sign: Sign;
  /** Percent of the whole track (the half on its side is 50). */
  widthPct: number;
}

/** The bar of `x` on a track from −scale to +scale. */
export function signedBar(x: number | null | undefined, scale: number): SignedBar {
  const sign = signOf(x);
  if (sign === 'none' || sign === 'zero' || !(scale > 0)) return { sign, widthPct: 0 };
  return { sign, widthPct: Math.min(50, (Math.abs(x!) / scale) * 50) };
}

/** One role in one rollout column. */
export interface RoleCell {
  role: string;
  /** h, formatted; `–` when the role did not take part. */
  h: string;
  /** A, signed; `–` until the group's advantages are stored. */
  a: string;
  sign: Sign;
  bar: SignedBar;
  /** The role had zero spread in this group (so A is exactly 0). */
  zeroSpread: boolean;
}

/** One rollout as a column. */
export interface RolloutColumn {
  runId: string;
  /** `r0`, `r1`, … (the rollout's index in its group). */
  label: string;
  seed: number;
  score: string;
  correct: boolean;
  status: RolloutEntry['status'];
  simulated: boolean;
  roles: RoleCell[];
  outcome: { a: string; sign: Sign; bar: SignedBar };
}

/** A group laid out as columns, with its flags in words. */
export interface GroupModel {
  roles: string[];
  columns: RolloutColumn[];
  /** Per role: `mean h 0.50 · std 0.41`, and whether it has zero spread. */
  roleStats: Array<{ role: string; text: string; zeroSpread: boolean }>;
  /** Track scale shared by every advantage bar of the group (largest |A|, at least 1). */
  scale: number;
  /** Short flags in words: no learning signal, zero-spread roles, equal outcomes, incomplete. */
  flags: string[];
  correct: number;
}

/** `r<g>` from a rollout's task id (`t0#r2` -> `r2`), else from its position. */
export function rolloutLabel(r: Pick<RolloutEntry, 'taskId' | 'taskIndex'>, G: number): string {
  const m = /#r(\d+)$/.exec(r.taskId);
  return `r${m ? m[1] : G > 0 ? r.taskIndex % G : r.taskIndex}`;
}

/** A group of a rollouts experiment as columns (rollout order) and rows (learning roles). */
export function groupModel(view: Pick<RolloutsView, 'learningRoles' | 'group'>, group: RolloutGroup): GroupModel {
  const roles = view.learningRoles.filter((role) => group.rollouts.some((r) => r.perRole[role]));
  for (const r of group.rollouts) for (const role of Object.keys(r.perRole)) if (!roles.includes(role)) roles.push(role);
  const all = group.rollouts.flatMap((r) => [r.outcomeAdvantage, ...Object.values(r.perRole).map((v) => v.advantage)]);
  const scale = Math.max(1, ...all.map((a) => (a === null ? 0 : Math.abs(a))));
  const columns = group.rollouts.map<RolloutColumn>((r) => ({
    runId: r.runId,
    label: rolloutLabel(r, view.group),
    seed: r.seed,
    score: fixed(r.score),
    correct: r.correct,
    status: r.status,
    simulated: r.simulated,
    roles: roles.map((role) => {
      const v = r.perRole[role];
      return {
        role,
        h: fixed(v?.reward),
        a: signed(v?.advantage),
        sign: signOf(v?.advantage),
        bar: signedBar(v?.advantage, scale),
        zeroSpread: group.zeroSpread[role] === true,
      };
    }),
    outcome: { a: signed(r.outcomeAdvantage), sign: signOf(r.outcomeAdvantage), bar: signedBar(r.outcomeAdvantage, scale) },
  }));
  const roleStats = roles.map((role) => {
    const s = group.stats[role];
    return { role, text: s ? `mean h ${fixed(s.mean)} · std ${fixed(s.std)}` : 'no reward', zeroSpread: group.zeroSpread[role] === true };
  });
  return { roles, columns, roleStats, scale, flags: groupFlags(group), correct: group.rollouts.filter((r) => r.correct).length };
}

/** The group's flags in words (readable without colour). */
export function groupFlags(group: RolloutGroup): string[] {
  const flags: string[] = [];
  if (!group.complete) flags.push('incomplete: advantages are computed once every rollout is stored (flowlab resume)');
  if (group.noSignal) flags.push('no learning signal: every learning role got the same h in every rollout, so every advantage is 0');
  else {
    const zero = Object.entries(group.zeroSpread).filter(([, z]) => z).map(([role]) => role);
    if (zero.length) flags.push(`zero spread for ${zero.join(', ')}: no learning signal for ${zero.length === 1 ? 'that role' : 'those roles'} (A = 0)`);
  }
  if (group.complete && group.outcome.zeroSpread) flags.push('equal outcomes: every rollout scored the same, so the Flow-GRPO advantage is 0');
  return flags;
}

/** The label of a group in the picker: `task 0 t0 · 1/4 ✓` (the task number `flowlab ls` prints before `/rollout`), with `no signal` / `incomplete` words. */
export function groupLabel(group: RolloutGroup): string {
  const correct = group.rollouts.filter((r) => r.correct).length;
  const words = [group.noSignal ? 'no signal' : '', group.complete ? '' : 'incomplete'].filter(Boolean);
  return `task ${group.index} ${group.groupKey} · ${correct}/${group.rollouts.length} ✓${words.length ? ` · ${words.join(' · ')}` : ''}`;
}
