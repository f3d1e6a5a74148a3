/**
 * The Learning view's model (pure): a role's newest train loop as chart series, a rung table,
 * the role's weight versions as a lineage list, the held-out before/after comparison, and the
 * newest loop's roles on one axis (co-evolution).
 */
import type { HeldoutSide, LearningCurves, LoopCurve, RoleLearning, WeightVersionView } from '../../core/api/client.ts';

/** The command the empty state suggests. */
export const TRAIN_LOOP_COMMAND = 'npm run flowlab -- train-loop examples/learn-word.yaml --roles writer --dataset learn-word --group 8 --iterations 20 --model ../shared/models/stories260K.gguf';

export const RUNG_COLUMNS = [
  ['format', 'f'],
  ['validity', 'v'],
  ['completion', 'e'],
  ['correctness', 'a'],
  ['credit', 'c'],
] as const;

/** Every role with a curve or a version, sorted. */
export function learningRoles(curves: LearningCurves | undefined, versions: readonly WeightVersionView[] | undefined): string[] {
  const set = new Set<string>([...(curves?.roles.map((r) => r.role) ?? []), ...(versions?.map((v) => v.role) ?? [])]);
  return [...set].sort((a, b) => a.localeCompare(b));
}

/** The loop shown for a role: its newest (the one a running `train-loop` is writing). */
export function currentLoop(role: RoleLearning | undefined): LoopCurve | undefined {
  return role?.loops[role.loops.length - 1];
}

export interface ChartSeries {
  labels: string[];
  reward: Array<number | null>;
  kl: Array<number | null>;
}

/** Mean reward and KL per iteration (null gaps where not measured). */
export function chartSeries(loop: LoopCurve | undefined): ChartSeries {
  const points = loop?.points ?? [];
  return { labels: points.map((p) => String(p.iteration)), reward: points.map((p) => p.reward), kl: points.map((p) => p.kl) };
}

/** Every role a train loop trained, on one iteration axis: the co-evolution of its roles. */
export interface CoevolutionSeries {
  loopId: string;
  /** Iterations present for any of the roles, ascending. */
  labels: string[];
  /** Per role (sorted by name), its mean ladder reward at each label (null where it has no point). */
  roles: Array<{ role: string; reward: Array<number | null> }>;
}

/**
 * The newest train loop (the one whose weight version was written last) as one series per role
 * it trained: how the roles' rewards move together (FloWright, "upstream-downstream
 * co-evolution": the designer and the executors learn from one harness signal). Null when no
 * version of a train loop is stored.
 */
export function coevolution(curves: LearningCurves | undefined, versions: readonly WeightVersionView[] | undefined): CoevolutionSeries | null {
  let newest: WeightVersionView | undefined;
  for (const v of versions ?? []) if (typeof v.hyper['loopId'] === 'string' && v.iteration !== undefined && (!newest || v.createdAt >= newest.createdAt)) newest = v;
  if (!newest || !curves) return null;
  const loopId = newest.hyper['loopId'] as string;
  const loops = curves.roles.flatMap((r) => r.loops.filter((l) => l.loopId === loopId).map((l) => ({ role: r.role, loop: l })));
  if (!loops.length) return null;
  const iterations = [...new Set(loops.flatMap((x) => x.loop.points.map((p) => p.iteration)))].sort((a, b) => a - b);
  return {
    loopId,
    labels: iterations.map(String),
    roles: loops
      .sort((a, b) => a.role.localeCompare(b.role))
      .map(({ role, loop }) => ({ role, reward: iterations.map((it) => loop.points.find((p) => p.iteration === it)?.reward ?? null) })),
  };
}

const fmt = (x: number | null | undefined, digits = 2) => (x === null || x === undefined ? '–' : x.toFixed(digits));

export interface RungRow {
  iteration: number;
  versionId: string;
  reward: string;
  rungs: string[];
  kl: string;
  tokensPerSecond: string;
  /** sampling / training / write+reload seconds. */
  seconds: string;
}

/** One row per iteration: reward, f/v/e/a/c, KL, tokens/s, seconds split. */
export function rungRows(loop: LoopCurve | undefined): RungRow[] {
  return (loop?.points ?? []).map((p) => ({
    iteration: p.iteration,
    versionId: p.versionId,
    reward: fmt(p.reward),
    rungs: RUNG_COLUMNS.map(([k]) => fmt(p.rungs?.[k])),
    kl: fmt(p.kl, 4),
    tokensPerSecond: p.tokensPerSecond === null ? '–' : Math.round(p.tokensPerSecond).toString(),
    seconds: `${fmt(p.seconds.sampling)} / ${fmt(p.seconds.training)} / ${fmt(p.seconds.writeReload)}`,
  }));
}

/** Hyper-parameters as `key value` pairs, the loop id left out (shown elsewhere). */
export function hyperText(hyper: Record<string, unknown>): string {
  return Object.entries(hyper)
    .filter(([k, v]) => k !== 'loopId' && v !== null && v !== undefined)
    .map(([k, v]) => `${k} ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join(' · ');
}

export interface LineageRow {
  id: string;
  iteration: string;
  parent: string;
  path: string;
  hyper: string;
  /** The hyper-parameters differ from the previous row's (always true for the first): the list prints them only then, not once per version. */
  hyperChanged: boolean;
  /** Steps from the lineage's first version (0 for a root; its parent is not of this role or not stored). */
  depth: number;
}

/** A role's versions, oldest first, each with its depth in its lineage. */
export function lineageRows(versions: readonly WeightVersionView[], role: string): LineageRow[] {
  const mine = versions.filter((v) => v.role === role);
  const byId = new Map(mine.map((v) => [v.id, v]));
  const depth = (id: string): number => {
    let d = 0;
    const seen = new Set<string>();
    for (let v = byId.get(id); v?.parentId && byId.has(v.parentId) && !seen.has(v.id); v = byId.get(v.parentId)) {
      seen.add(v.id);
      d++;
    }
    return d;
  };
  return mine.map((v, i) => {
    const hyper = hyperText(v.hyper);
    return {
      id: v.id,
      iteration: v.iteration === undefined ? '–' : String(v.iteration),
      parent: v.parentId ?? '–',
      path: v.path,
      hyper,
      hyperChanged: i === 0 || hyperText(mine[i - 1]!.hyper) !== hyper,
      depth: depth(v.id),
    };
  });
}

export interface BeforeAfter {
  before: HeldoutSide | null;
  after: HeldoutSide | null;
  /** after − before, when both are recorded. */
  deltaScore: number | null;
  deltaReward: number | null;
  /** What to say when a side is missing. */
  note: string | null;
}

export function beforeAfter(loop: LoopCurve | undefined): BeforeAfter {
  const before = loop?.before ?? null;
  const after = loop?.after ?? null;
  const both = before && after;
  return {
    before,
    after,
    deltaScore: both ? after.score - before.score : null,
    deltaReward: both && after.reward !== null && before.reward !== null ? after.reward - before.reward : null,
    note: !loop ? 'no train loop yet' : !before ? 'no held-out evaluation recorded for this loop' : !after ? 'the after evaluation runs when the loop finishes' : null,
  };
}

export const signed = (x: number | null, digits = 2) => (x === null ? '–' : `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(digits)}`);
