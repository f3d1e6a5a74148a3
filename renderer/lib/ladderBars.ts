/**
 * The reward ladder as stacked horizontal bars (pure math; views/LadderChart.tsx draws it).
 * Per role, each rung contributes weight × value: f, v, e and a stack to the right of zero,
 * the credit rung c (−1..0) to the left. One scale is shared by every role so bars compare.
 */
import { RUNGS as RUNG_KEYS, type LadderScores, type RoleLadder, type Rung as RungKey, type RunRecord } from '../../core/api/client.ts';

export { RUNG_KEYS, type RungKey };

/** The paper's symbols: h = w_f·f + w_v·v + w_e·e + w_a·a + w_c·c. */
export const RUNG_SYMBOL: Record<RungKey, string> = { format: 'f', validity: 'v', completion: 'e', correctness: 'a', credit: 'c' };

/** What a bar needs of a role's ladder (a run's RoleLadder or an experiment's mean). */
export interface LadderValues extends LadderScores {
  role: string;
  /** Nodes the role ran and nodes it wired (a run's counts, or their means); absent when not recorded. */
  nodesRun?: number;
  nodesWired?: number;
}

/**
 * What the validity rung v measures for a role (FloWright, "hierarchical reward ladder"): for a
 * role that wired nodes (a designer), that its graph is well-formed: every node it wired passed
 * validation (and every node it ran gave a valid output); for a role that only ran nodes, that its
 * outputs were valid (parsed, met their contracts).
 */
export function validityMeaning(l: Pick<LadderValues, 'nodesWired'>): string {
  return (l.nodesWired ?? 0) > 0 ? 'its graph well-formed: every node it wired passed validation' : 'its outputs valid: each node it ran met its contract';
}

/** Whether the role wired nodes of the run (a designer, or a hand-set wirer). */
export const wiredNodes = (l: Pick<LadderValues, 'nodesWired'>): boolean => (l.nodesWired ?? 0) > 0;

export interface BarSegment {
  rung: RungKey;
  symbol: string;
  value: number;
  weight: number;
  /** weight × value. */
  contribution: number;
  /** Start and end on the shared scale (x0 <= x1); negative contributions lie left of zero. */
  x0: number;
  x1: number;
}

export interface LadderBar {
  role: string;
  segments: BarSegment[];
  reward: number;
  highestRung: number;
}

export interface LadderScale {
  /** Leftmost value on the scale (<= 0). */
  min: number;
  /** Rightmost value (>= 0). */
  max: number;
}

/** One role's bar: positive contributions stacked from 0 rightwards, negative from 0 leftwards. */
export function ladderBar(l: LadderValues): LadderBar {
  let right = 0;
  let left = 0;
  const segments: BarSegment[] = RUNG_KEYS.map((rung) => {
    const value = l[rung];
    const weight = l.weights[rung];
    const contribution = weight * value;
    let x0: number;
    let x1: number;
    if (contribution >= 0) {
      x0 = right;
      x1 = right += contribution;
    } else {
      x1 = left;
      x0 = left += contribution;
    }
    return { rung, symbol: RUNG_SYMBOL[rung], value, weight, contribution, x0, x1 };
  });
  return { role: l.role, segments, reward: l.reward, highestRung: l.highestRung };
}

/**
 * The scale that fits every role's best and worst case: from −(credit weight) (credit −1) to the
 * sum of the positive weights (every other rung at 1). Weights are signed as written.
 */
export function ladderScale(ladders: readonly LadderValues[]): LadderScale {
  let min = 0;
  let max = 0;
  for (const l of ladders) {
    let lo = 0;
    let hi = 0;
    for (const rung of RUNG_KEYS) {
      const w = l.weights[rung];
      // The rung's value ranges over 0..1 (credit over −1..0): its extremes are 0 and ±w.
      const extreme = rung === 'credit' ? -w : w;
      if (extreme < 0) lo += extreme;
      else hi += extreme;
    }
    for (const s of ladderBar(l).segments) {
      lo = Math.min(lo, s.x0);
      hi = Math.max(hi, s.x1);
    }
    min = Math.min(min, lo);
    max = Math.max(max, hi);
  }
  return { min, max: max > min ? max : min + 1 };
}

/** Maps a scale value to a pixel offset inside `width`. */
export function toPixels(x: number, scale: LadderScale, width: number): number {
  return ((x - scale.min) / (scale.max - scale.min)) * width;
}

/** A run's ladders in role order (roles as the ladder record lists them). */
export function runLadders(run: Pick<RunRecord, 'ladder'>): LadderValues[] {
  return Object.values(run.ladder ?? {}).map(fromRoleLadder);
}

function fromRoleLadder(l: RoleLadder): LadderValues {
  return {
    role: l.role, format: l.format, validity: l.validity, completion: l.completion, correctness: l.correctness, credit: l.credit, weights: l.weights, reward: l.reward, highestRung: l.highestRung,
    ...(typeof l.nodesRun === 'number' ? { nodesRun: l.nodesRun } : {}),
    ...(typeof l.nodesWired === 'number' ? { nodesWired: l.nodesWired } : {}),
  };
}

export interface MeanLadder extends LadderValues {
  /** Runs that had a ladder for this role. */
  runs: number;
  /** How many runs stopped at each highest rung, index 0..5. */
  rungCounts: number[];
}

/**
 * The mean ladder per role across runs (an experiment): each rung, the reward, the highest
 * rung and the nodes run and wired averaged over the runs that scored the role. Weights are the first run's (one workflow).
 */
export function meanLadders(runs: ReadonlyArray<Pick<RunRecord, 'ladder'>>): MeanLadder[] {
  const acc = new Map<string, MeanLadder>();
  for (const run of runs) {
    for (const l of Object.values(run.ladder ?? {})) {
      let m = acc.get(l.role);
      if (!m) {
        m = { role: l.role, format: 0, validity: 0, completion: 0, correctness: 0, credit: 0, weights: l.weights, reward: 0, highestRung: 0, nodesRun: 0, nodesWired: 0, runs: 0, rungCounts: [0, 0, 0, 0, 0, 0] };
        acc.set(l.role, m);
      }
      m.runs++;
      for (const rung of RUNG_KEYS) m[rung] += l[rung];
      m.reward += l.reward;
      m.highestRung += l.highestRung;
      m.nodesRun! += l.nodesRun ?? 0;
      m.nodesWired! += l.nodesWired ?? 0;
      const k = Math.max(0, Math.min(5, Math.round(l.highestRung)));
      m.rungCounts[k]!++;
    }
  }
  return [...acc.values()].map((m) => {
    const n = m.runs;
    return {
      ...m, format: m.format / n, validity: m.validity / n, completion: m.completion / n, correctness: m.correctness / n, credit: m.credit / n, reward: m.reward / n, highestRung: m.highestRung / n,
      nodesRun: m.nodesRun! / n, nodesWired: m.nodesWired! / n,
    };
  });
}

/**
 * The highest rung in words: `rung k/5`, or `not reached` for a role that neither ran nor wired
 * a node (the run stopped before it), which scores rung 0 like a role whose output was garbage but
 * must not read like one. Means: not reached only when no run reached the role.
 */
export function rungText(l: Pick<LadderValues, 'highestRung' | 'nodesRun' | 'nodesWired'>, word = 'rung '): string {
  if (l.nodesRun === 0 && (l.nodesWired ?? 0) === 0) return 'not reached';
  return `${word}${rungLabel(l.highestRung)}`;
}

/** `k/5` for a run; one decimal for a mean. */
export function rungLabel(highestRung: number): string {
  return `${Number.isInteger(highestRung) ? highestRung : highestRung.toFixed(1)}/5`;
}
