/**
 * The dry run's arithmetic: cells, model calls, tokens and wall time of a study from measured
 * speeds (a calibration of each condition's workflow on each model, and one train-loop iteration
 * of each training condition; core/studies/calibrate.ts). Pure.
 *
 * Time of an evaluation cell = load + pending runs × seconds per run; of a training unit =
 * overhead (trainer and model load, reloads outside the iterations) + iterations × seconds per
 * iteration; plus, once when anything is left, the runtime's start (`startSeconds`). Calls and tokens scale the same way (a training iteration samples limit × G runs).
 */
import type { StudyCell, TrainingUnit } from './cells.ts';

/** A workflow's measured speed on a model (one condition, one model). */
export interface RunSpeed {
  secondsPerRun: number;
  callsPerRun: number;
  /** Prompt + completion tokens per run. */
  tokensPerRun: number;
  /** Seconds an experiment spends outside its runs (model load, store writes). */
  loadSeconds: number;
}

/** A training condition's measured speed on a model. */
export interface TrainSpeed {
  secondsPerIteration: number;
  callsPerIteration: number;
  tokensPerIteration: number;
  /** Seconds of a train loop outside its iterations (trainer and model load). */
  overheadSeconds: number;
}

/** Measured speeds, keyed `<condition>/<model>`. */
export interface StudySpeeds {
  runs: Record<string, RunSpeed>;
  training: Record<string, TrainSpeed>;
  /** Seconds the first model load of a process costs over a warm one (runtime start), paid once. */
  startSeconds?: number;
  /** Wall seconds the measuring took. */
  calibrationSeconds: number;
}

export interface CellEstimate {
  key: string;
  runs: number;
  calls: number;
  tokens: number;
  seconds: number;
}

export interface StudyEstimate {
  cells: CellEstimate[];
  units: CellEstimate[];
  total: { cells: number; units: number; runs: number; calls: number; tokens: number; seconds: number };
}

export const speedKey = (conditionId: string, modelId: string) => `${conditionId}/${modelId}`;

/**
 * The estimate of what is left of a study. `pendingRuns(cell)`: runs still to do (default: the
 * zone's limit); `unitDone(unit)`: its train loop finished (nothing left). A cell with no run left
 * costs nothing (not even its load). Errors: a condition or model without a measured speed throws
 * (a RangeError naming the key: the calibration must cover every condition and model).
 */
export function estimateStudy(cells: readonly StudyCell[], units: readonly TrainingUnit[], speeds: StudySpeeds, opts: { pendingRuns?: (c: StudyCell) => number; unitDone?: (u: TrainingUnit) => boolean } = {}): StudyEstimate {
  const need = <T>(m: Record<string, T>, k: string): T => {
    const v = m[k];
    if (!v) throw new RangeError(`no measured speed for ${k}`);
    return v;
  };
  const cellEst = cells.map((c): CellEstimate => {
    const runs = opts.pendingRuns ? opts.pendingRuns(c) : c.zone.limit;
    const s = need(speeds.runs, speedKey(c.condition.id, c.model.id));
    return { key: c.key, runs, calls: runs * s.callsPerRun, tokens: runs * s.tokensPerRun, seconds: runs ? s.loadSeconds + runs * s.secondsPerRun : 0 };
  });
  const unitEst = units.map((u): CellEstimate => {
    if (opts.unitDone?.(u)) return { key: u.key, runs: 0, calls: 0, tokens: 0, seconds: 0 };
    const t = u.condition.train!;
    const s = need(speeds.training, speedKey(u.condition.id, u.model.id));
    return { key: u.key, runs: t.iterations * t.limit * t.group, calls: t.iterations * s.callsPerIteration, tokens: t.iterations * s.tokensPerIteration, seconds: s.overheadSeconds + t.iterations * s.secondsPerIteration };
  });
  const sum = (xs: CellEstimate[], f: (e: CellEstimate) => number) => xs.reduce((a, e) => a + f(e), 0);
  const all = [...cellEst, ...unitEst];
  const start = all.some((e) => e.runs > 0) ? (speeds.startSeconds ?? 0) : 0;
  return {
    cells: cellEst,
    units: unitEst,
    total: { cells: cellEst.filter((c) => c.runs > 0).length, units: unitEst.filter((u) => u.runs > 0).length, runs: sum(all, (e) => e.runs), calls: sum(all, (e) => e.calls), tokens: sum(all, (e) => e.tokens), seconds: start + sum(all, (e) => e.seconds) },
  };
}

/** Seconds as `1 m 05 s` (or `42 s`). */
export function formatSeconds(s: number): string {
  if (!Number.isFinite(s)) return '-';
  const r = Math.round(s);
  return r < 60 ? `${r} s` : `${Math.floor(r / 60)} m ${String(r % 60).padStart(2, '0')} s`;
}
