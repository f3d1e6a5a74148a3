/**
 * MASS's ring tournament over the N runs of one task (Sakana AI MASS, public code, outer loop):
 * the runs are shuffled with a seed and set on a ring; each run meets its next `neighbours`
 * runs clockwise (default 3), so N runs give N·3 unique pairs when N > 6 (54 for the default
 * 18). Each pair is judged once, in an orientation drawn from the seed (which run is shown as A),
 * and every verdict is recorded with its rationale, so the ranking can be recomputed without the
 * judge.
 */
import { deriveSeed, mulberry32 } from '../random.ts';
import type { Match } from './bradleyTerry.ts';
import { stepsInFlight } from './inFlight.ts';
import { MassRankError } from './rankErrors.ts';

/** One scheduled game: `a` is shown to the judge as A, `b` as B. */
export interface RingPair {
  /** 0-based position in the schedule. */
  index: number;
  a: string;
  b: string;
  /** Steps clockwise on the ring from the earlier run to the later (1..neighbours). */
  distance: number;
  /** True when the orientation draw put the later run of the ring first (as A). */
  swapped: boolean;
}

export interface RingOptions {
  seed: number;
  /** Neighbours each run meets clockwise (default 3). */
  neighbours?: number;
}

/** The seeded ring order of `runIds` (Fisher-Yates over mulberry32). */
export function ringOrder(runIds: readonly string[], seed: number): string[] {
  const order = [...runIds];
  const rand = mulberry32(deriveSeed(seed, 'mass-ring-shuffle'));
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * The schedule: ring order from `seed`, each run against its next `neighbours` runs, duplicates
 * (small rings, where i+d and i−d meet) dropped, orientation drawn per pair. Errors:
 * `BAD_TOURNAMENT` (fewer than 2 runs, a duplicate id, neighbours < 1).
 */
export function ringPairs(runIds: readonly string[], opts: RingOptions): RingPair[] {
  const neighbours = opts.neighbours ?? 3;
  if (runIds.length < 2) throw new MassRankError('BAD_TOURNAMENT', `ring tournament: needs at least 2 runs, got ${runIds.length}`);
  if (!Number.isInteger(neighbours) || neighbours < 1) throw new MassRankError('BAD_TOURNAMENT', `ring tournament: neighbours must be an integer >= 1, got ${neighbours}`);
  const seen = new Set<string>();
  for (const id of runIds) {
    if (seen.has(id)) throw new MassRankError('BAD_TOURNAMENT', `ring tournament: run "${id}" is listed twice`);
    seen.add(id);
  }
  const order = ringOrder(runIds, opts.seed);
  const flip = mulberry32(deriveSeed(opts.seed, 'mass-ring-orientation'));
  const n = order.length;
  const pairs: RingPair[] = [];
  const keys = new Set<string>();
  for (let d = 1; d <= Math.min(neighbours, n - 1); d++) {
    for (let i = 0; i < n; i++) {
      const x = order[i]!;
      const y = order[(i + d) % n]!;
      const key = x < y ? `${x}\u0000${y}` : `${y}\u0000${x}`;
      if (keys.has(key)) continue;
      keys.add(key);
      const swapped = flip() < 0.5;
      pairs.push({ index: pairs.length, a: swapped ? y : x, b: swapped ? x : y, distance: d, swapped });
    }
  }
  return pairs;
}

/** A judge's answer on one pair. */
export interface PairVerdict {
  winner: 'A' | 'B' | 'tie';
  rationale: string;
}

/** One judged pair, as recorded. */
export interface JudgedPair extends RingPair, PairVerdict {}

/**
 * Judges every pair of the schedule once, skipping pairs already in `done` (a resumed
 * tournament: recorded verdicts are kept, never asked again). With `parallel` above 1 that many
 * pairs are judged at once (core/mass/inFlight.ts): `judge` gets `beforeSave` to pass to the
 * judge's step, so verdicts are stored in schedule order whatever order they come in. `onJudged`
 * sees each new verdict in schedule order (to store it before the next is committed). Returns the
 * verdicts in schedule order (the prefix judged when `signal` aborted). Errors: `BAD_TOURNAMENT`
 * (a `done` verdict for a pair the schedule does not have, or in another orientation).
 */
export async function runTournament(
  pairs: readonly RingPair[],
  judge: (pair: RingPair, beforeSave: () => Promise<void>) => Promise<PairVerdict>,
  opts: { done?: readonly JudgedPair[]; onJudged?: (j: JudgedPair) => void | Promise<void>; signal?: AbortSignal; parallel?: number; label?: string } = {},
): Promise<JudgedPair[]> {
  const byIndex = new Map<number, JudgedPair>();
  for (const d of opts.done ?? []) {
    const p = pairs[d.index];
    if (!p || p.a !== d.a || p.b !== d.b) throw new MassRankError('BAD_TOURNAMENT', `ring tournament: recorded verdict ${d.index} (${d.a} vs ${d.b}) is not in this schedule`);
    byIndex.set(d.index, d);
  }
  const judged = await stepsInFlight(
    pairs,
    { parallel: opts.parallel ?? 1, label: opts.label ?? 'ring tournament', ...(opts.signal && { signal: opts.signal }) },
    async (p, _i, beforeSave): Promise<{ j: JudgedPair; fresh: boolean }> => {
      const prior = byIndex.get(p.index);
      if (prior) return { j: prior, fresh: false };
      const v = await judge(p, beforeSave);
      return { j: { ...p, winner: v.winner, rationale: v.rationale }, fresh: true };
    },
    async (r) => {
      if (r.fresh) await opts.onJudged?.(r.j);
    },
  );
  return judged.map((r) => r.j);
}

/** The verdicts as Bradley-Terry matches (A and B as shown). */
export function matchesOf(judged: readonly JudgedPair[]): Match[] {
  return judged.map((j) => ({ a: j.a, b: j.b, winner: j.winner }));
}
