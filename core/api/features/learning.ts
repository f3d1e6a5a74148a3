/**
 * The learning feature: the weight versions written by training, with their lineage, and each
 * role's learning curves from the train loop (per iteration: mean reward, rungs, KL, tokens/s,
 * seconds) with the held-out before/after comparison. Store reads: train-loop versions carry
 * `hyper.loopId` and `iteration`; the loop's held-out evaluations are `run` experiments whose
 * `config.trainLoop` names the loop and the phase. Plain, JSON-safe data.
 */
import * as z from 'zod';
import { answerGuard, labelClassOf, type AnswerGuard } from '../../guards/index.ts';
import { RUNGS } from '../../reward/ladder.ts';
import type { Store } from '../../store/index.ts';
import type { WeightVersion } from '../../store/weights.ts';
import { defineFeature } from '../feature.ts';
import { Name } from '../fields.ts';

/** `listWeightVersions`' and `getLearningCurves`' payload. */
export interface LearningPayload {
  /** Only this role. */
  role?: string;
}

/** A stored weight version (hyper-parameters and metrics parsed) with its lineage fields. */
export type WeightVersionView = WeightVersion;

/** The rung means of the reward ladder (format, validity, completion/execution, correctness/answer, credit). */
export interface RungMeans {
  format: number;
  validity: number;
  completion: number;
  correctness: number;
  credit: number;
}

/** One role's numbers in one train-loop iteration (from the version written that iteration). */
export interface CurvePoint {
  iteration: number;
  versionId: string;
  experimentId: string | null;
  /** Mean ladder reward h of the role over the iteration's rollouts. */
  reward: number | null;
  /** Mean grader score of the iteration's rollouts. */
  score: number | null;
  /** Rung means: from the version's metrics, else from the iteration experiment's stored ladders; null when neither has them. */
  rungs: RungMeans | null;
  /** Mean k3 KL to the starting weights (null when not measured). */
  kl: number | null;
  loss: number | null;
  /** Train tokens per second of the role's policy step. */
  tokensPerSecond: number | null;
  /** Seconds of the iteration: sampling, training, and writing this role's version (null where not recorded). */
  seconds: { sampling: number | null; training: number | null; writeReload: number | null };
}

/** A held-out evaluation of a loop (a stored `run` experiment, `config.trainLoop.phase` = `heldout-before|after`). */
export interface HeldoutSide {
  experimentId: string;
  /** Mean grader score over the held-out runs. */
  score: number;
  /** Mean ladder reward of the role; null when no run has one. */
  reward: number | null;
  /** Runs stored. */
  runs: number;
  /** Share of runs correct (0..1), and the constant guard of their answers (core/guards answerGuard: best constant, distinct answers, CONSTANT). */
  accuracy: number;
  guard: AnswerGuard;
}

/** One train loop of a role: its curve and its held-out comparison. */
export interface LoopCurve {
  loopId: string;
  /** In iteration order. */
  points: CurvePoint[];
  /** Null where the loop recorded no such evaluation (no held-out tasks, or it has not run yet). */
  before: HeldoutSide | null;
  after: HeldoutSide | null;
  /** Hyper-parameters of the loop (from its first version). */
  hyper: Record<string, unknown>;
}

/** A role's learning: its train loops, oldest first. */
export interface RoleLearning {
  role: string;
  loops: LoopCurve[];
}

/** `getLearningCurves`' answer. */
export interface LearningCurves {
  roles: RoleLearning[];
}

/** The training-result methods (store reads, synchronous on the host). */
export interface LearningApi {
  /** Every weight version (or a role's), oldest first, with lineage, hyper-parameters and metrics. */
  listWeightVersions(payload?: LearningPayload): WeightVersionView[];
  /** Per role, each train loop's per-iteration metrics and held-out before/after. */
  getLearningCurves(payload?: LearningPayload): LearningCurves;
}

export const learningFeature = defineFeature<LearningApi>()({
  name: 'learning',
  payloads: {
    listWeightVersions: z.strictObject({ role: Name.optional() }).optional(),
    getLearningCurves: z.strictObject({ role: Name.optional() }).optional(),
  },
  handlers: ({ store }: { store: Store }) => ({
    listWeightVersions: (payload) => listVersions(store, payload?.role),
    getLearningCurves: (payload) => buildLearningCurves(store, payload?.role),
  }),
});

/** Every weight version (or a role's), oldest first. */
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
