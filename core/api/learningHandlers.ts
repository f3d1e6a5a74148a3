/**
 * The store reads behind `listWeightVersions` and `getLearningCurves` (learning.ts has
 * the types). Train-loop versions carry `hyper.loopId` and `iteration`; the loop's held-out
 * evaluations are `run` experiments whose `config.trainLoop` names the loop and the phase.
 */
import { answerGuard, labelClassOf } from '../guards/index.ts';
import { RUNGS } from '../reward/ladder.ts';
import type { Store } from '../store/index.ts';
import type { WeightVersion } from '../store/weights.ts';
import type { CurvePoint, HeldoutSide, LearningCurves, LoopCurve, RoleLearning, RungMeans, WeightVersionView } from './learning.ts';

export function listVersions(store: Store, role?: string): WeightVersionView[] {
  return store.weights.list(role === undefined ? {} : { role });
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);
const obj = (x: unknown): Record<string, unknown> | undefined => (x !== null && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined);
const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** Rung means recorded in a version's metrics, if complete. */
export function rungsOf(metrics: Record<string, unknown>): RungMeans | null {
  const r = obj(metrics['rungs']);
  if (!r) return null;
  const out: Partial<RungMeans> = {};
  for (const rung of RUNGS) {
    const v = num(r[rung]);
    if (v === null) return null;
    out[rung] = v;
  }
  return out as RungMeans;
}

/** A curve point from a train-loop version (pure; `fallbackRungs` when the metrics lack them). */
export function pointOf(v: WeightVersion, fallbackRungs: () => RungMeans | null): CurvePoint {
  const m = v.metrics;
  const secs = obj(m['seconds']) ?? {};
  const kl = Array.isArray(m['kl']) ? mean((m['kl'] as unknown[]).filter((x): x is number => num(x) !== null)) : num(m['kl']);
  return {
    iteration: v.iteration ?? 0,
    versionId: v.id,
    experimentId: v.experimentId ?? null,
    reward: num(m['reward']),
    score: num(m['score']),
    rungs: rungsOf(m) ?? fallbackRungs(),
    kl,
    loss: num(m['loss']),
    tokensPerSecond: num(m['trainTokensPerSecond']),
    seconds: { sampling: num(secs['sampling']), training: num(secs['training']), writeReload: num(secs['writeReload']) ?? num(secs['write']) },
  };
}

/** Per role, its train loops with per-iteration metrics and the held-out before/after. */
export function buildLearningCurves(store: Store, role?: string): LearningCurves {
  const versions = store.weights.list(role === undefined ? {} : { role }).filter((v) => v.iteration !== undefined && typeof v.hyper['loopId'] === 'string');
  const runsCache = new Map<string, ReturnType<Store['listRuns']>>();
  const runsOf = (id: string) => {
    let r = runsCache.get(id);
    if (!r) {
      try {
        r = store.listRuns(id);
      } catch {
        r = [];
      }
      runsCache.set(id, r);
    }
    return r;
  };
  // Held-out experiments by loop and phase (the newest of each).
  const heldout = new Map<string, string>();
  const datasetOf = new Map<string, string>();
  for (const e of [...store.listExperiments()].sort((a, b) => a.createdAt - b.createdAt)) {
    const tl = obj(obj(e.config)?.['trainLoop']);
    const phase = tl?.['phase'];
    if (typeof tl?.['loopId'] === 'string' && (phase === 'heldout-before' || phase === 'heldout-after')) {
      heldout.set(`${tl['loopId']}\u0000${phase}`, e.id);
      datasetOf.set(e.id, e.dataset);
    }
  }
  const side = (loopId: string, phase: string, r: string): HeldoutSide | null => {
    const id = heldout.get(`${loopId}\u0000heldout-${phase}`);
    if (!id) return null;
    const runs = runsOf(id);
    const hs = runs.flatMap((x) => (x.ladder?.[r] ? [x.ladder[r].reward] : []));
    const ds = datasetOf.get(id);
    return { experimentId: id, score: mean(runs.map((x) => x.score)), reward: hs.length ? mean(hs) : null, runs: runs.length, accuracy: mean(runs.map((x) => (x.correct ? 1 : 0))), guard: answerGuard(runs, ds === undefined ? undefined : labelClassOf(ds)) };
  };
  const experimentRungs = (experimentId: string | undefined, r: string): RungMeans | null => {
    if (!experimentId) return null;
    const ladders = runsOf(experimentId).flatMap((x) => (x.ladder?.[r] ? [x.ladder[r]] : []));
    if (!ladders.length) return null;
    return Object.fromEntries(RUNGS.map((rung) => [rung, mean(ladders.map((l) => l[rung]))])) as unknown as RungMeans;
  };

  const byRole = new Map<string, Map<string, WeightVersion[]>>();
  for (const v of versions) {
    const loops = byRole.get(v.role) ?? new Map<string, WeightVersion[]>();
    byRole.set(v.role, loops);
    const loopId = v.hyper['loopId'] as string;
    const list = loops.get(loopId);
    if (list) list.push(v);
    else loops.set(loopId, [v]);
  }
  const roles: RoleLearning[] = [...byRole.entries()].map(([r, loops]) => ({
    role: r,
    loops: [...loops.entries()].map(([loopId, vs]): LoopCurve => ({
      loopId,
      points: [...vs].sort((a, b) => a.iteration! - b.iteration!).map((v) => pointOf(v, () => experimentRungs(v.experimentId, r))),
      before: side(loopId, 'before', r),
      after: side(loopId, 'after', r),
      hyper: vs[0]!.hyper,
    })),
  }));
  roles.sort((a, b) => a.role.localeCompare(b.role));
  return { roles };
}
