/**
 * Bradley-Terry strengths of the runs of one task from pairwise verdicts, fitted by
 * minorization-maximization (Hunter 2004, "MM algorithms for generalized Bradley-Terry models",
 * Ann. Statist. 32(1), §3, eq. 3) with the weak prior of MASS's public ranking step: every
 * player gets `prior` virtual wins over `prior` virtual games against an average player of
 * strength 1.
 *
 * One iteration, every player i at once from the previous strengths p (Jacobi):
 *
 *     p_i' = (w_i + prior) / (prior / (p_i + 1) + Σ_{j≠i} n_ij / (p_i + p_j))
 *
 * where w_i counts i's wins (a tie is half a win for each side) and n_ij the games between i and j;
 * then every p' is divided by the mean of p' (mean strength 1). The score is log p. Because of the
 * prior every numerator is at least `prior` and every denominator is positive and finite, so a run
 * that never wins or never loses still gets a finite score; a non-finite value is a bug and throws
 * `NON_FINITE`.
 */
import { MassRankError } from './rankErrors.ts';

/** One judged game: `a` was shown as A, `b` as B; `winner` as the judge answered. */
export interface Match {
  a: string;
  b: string;
  winner: 'A' | 'B' | 'tie';
}

export interface BradleyTerryOptions {
  /** MM iterations (default 500, MASS's public default). */
  iterations?: number;
  /** Virtual wins and games against an average player (default 0.5). */
  prior?: number;
}

/** One player's fitted strength. */
export interface PlayerStrength {
  id: string;
  /** p, with the players' mean strength 1. */
  strength: number;
  /** log p: the ranking score. */
  score: number;
  /** Wins (a tie counts half), losses, ties, games. */
  wins: number;
  losses: number;
  ties: number;
  games: number;
}

export interface BradleyTerryResult {
  /** In the order the players were given. */
  players: PlayerStrength[];
  iterations: number;
  prior: number;
}

/**
 * Fits Bradley-Terry strengths for `players` from `matches` (formula above). Players without a
 * game keep strength near the mean. Errors: `BAD_MATCH` (an unknown or duplicate player, a
 * self-match, a bad winner), `NON_FINITE` (never expected).
 */
export function bradleyTerry(players: readonly string[], matches: readonly Match[], opts: BradleyTerryOptions = {}): BradleyTerryResult {
  const iterations = opts.iterations ?? 500;
  const prior = opts.prior ?? 0.5;
  if (!Number.isInteger(iterations) || iterations < 0) throw new MassRankError('BAD_MATCH', `bradleyTerry: iterations must be a non-negative integer, got ${iterations}`);
  if (!(prior > 0 && Number.isFinite(prior))) throw new MassRankError('BAD_MATCH', `bradleyTerry: prior must be a positive number, got ${prior}`);
  const n = players.length;
  const index = new Map<string, number>();
  players.forEach((p, i) => {
    if (index.has(p)) throw new MassRankError('BAD_MATCH', `bradleyTerry: player "${p}" is listed twice`);
    index.set(p, i);
  });
  // wins[i][j]: i's wins over j (ties half to each side); games[i][j] = wins[i][j] + wins[j][i].
  const wins = Array.from({ length: n }, () => new Float64Array(n));
  const losses = new Float64Array(n);
  const ties = new Float64Array(n);
  matches.forEach((m, k) => {
    const i = index.get(m.a);
    const j = index.get(m.b);
    if (i === undefined || j === undefined) throw new MassRankError('BAD_MATCH', `bradleyTerry: match ${k} names unknown player "${i === undefined ? m.a : m.b}"`);
    if (i === j) throw new MassRankError('BAD_MATCH', `bradleyTerry: match ${k} pits "${m.a}" against itself`);
    if (m.winner === 'A') {
      wins[i]![j]! += 1;
      losses[j]! += 1;
    } else if (m.winner === 'B') {
      wins[j]![i]! += 1;
      losses[i]! += 1;
    } else if (m.winner === 'tie') {
      wins[i]![j]! += 0.5;
      wins[j]![i]! += 0.5;
      ties[i]! += 1;
      ties[j]! += 1;
    } else {
      throw new MassRankError('BAD_MATCH', `bradleyTerry: match ${k} has winner ${JSON.stringify(m.winner)}; expected "A", "B" or "tie"`);
    }
  });
  const totalWins = wins.map((row) => row.reduce((s, x) => s + x, 0));
  let p = new Float64Array(n).fill(1);
  for (let it = 0; it < iterations; it++) {
    const next = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      let denom = prior / (p[i]! + 1);
      for (let j = 0; j < n; j++) {
        if (j === i) continue;
        const nij = wins[i]![j]! + wins[j]![i]!;
        if (nij) denom += nij / (p[i]! + p[j]!);
      }
      next[i] = (totalWins[i]! + prior) / denom;
    }
    const mean = next.reduce((s, x) => s + x, 0) / n;
    for (let i = 0; i < n; i++) next[i] = next[i]! / mean;
    p = next;
  }
  const out = players.map((id, i): PlayerStrength => {
    const strength = p[i]!;
    const score = Math.log(strength);
    if (!Number.isFinite(score) || !(strength > 0)) throw new MassRankError('NON_FINITE', `bradleyTerry: player "${id}" got strength ${strength} after ${iterations} iterations`);
    const games = wins[i]!.reduce((s, x, j) => s + x + wins[j]![i]!, 0);
    return { id, strength, score, wins: totalWins[i]!, losses: losses[i]!, ties: ties[i]!, games };
  });
  return { players: out, iterations, prior };
}

/** A player with its rank (1 = best). */
export interface RankedPlayer extends PlayerStrength {
  rank: number;
}

/** Scores closer than this count as equal when ranking (so float noise never decides a rank). */
export const SCORE_TIE_EPS = 1e-9;

/**
 * Ranks by score, highest first; scores within SCORE_TIE_EPS are equal and fall back to more
 * wins, then fewer losses, then the order the players were given (the tournament's run order).
 * The ranking is label-free: renaming the players renames the ranking and nothing else.
 */
export function rankPlayers(result: BradleyTerryResult): RankedPlayer[] {
  const order = result.players.map((p, i) => ({ p, i }));
  order.sort((x, y) => {
    const d = y.p.score - x.p.score;
    if (Math.abs(d) > SCORE_TIE_EPS) return d;
    if (x.p.wins !== y.p.wins) return y.p.wins - x.p.wins;
    if (x.p.losses !== y.p.losses) return x.p.losses - y.p.losses;
    return x.i - y.i;
  });
  return order.map(({ p }, k) => ({ ...p, rank: k + 1 }));
}
