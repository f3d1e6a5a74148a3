import { describe, expect, it } from 'vitest';
import { bradleyTerry, rankPlayers, type Match } from './bradleyTerry.ts';
import { MassRankError } from './rankErrors.ts';
import { matchesOf, ringPairs, type JudgedPair } from './tournament.ts';

const games = (a: string, b: string, winner: Match['winner'], times: number): Match[] => Array.from({ length: times }, () => ({ a, b, winner }));
const strengths = (r: ReturnType<typeof bradleyTerry>) => r.players.map((p) => p.strength);

/** The root in (lo, hi) of f, by bisection (f(lo), f(hi) of opposite signs). */
function root(f: (x: number) => number, lo: number, hi: number): number {
  for (let k = 0; k < 200; k++) {
    const mid = (lo + hi) / 2;
    if (Math.sign(f(mid)) === Math.sign(f(lo))) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/**
 * An independent reference of the update (Hunter 2004 §3 with MASS's 0.5 prior), written from the
 * formula over a games matrix: numerator wins + 0.5, denominator 0.5/(p_i+1) + Σ_j n_ij/(p_i+p_j).
 */
function reference(ids: string[], matches: Match[], iterations: number): number[] {
  const n = ids.length;
  const at = (id: string) => ids.indexOf(id);
  const W = Array.from({ length: n }, () => Array(n).fill(0) as number[]);
  for (const m of matches) {
    const i = at(m.a);
    const j = at(m.b);
    if (m.winner === 'A') W[i]![j]! += 1;
    else if (m.winner === 'B') W[j]![i]! += 1;
    else {
      W[i]![j]! += 0.5;
      W[j]![i]! += 0.5;
    }
  }
  let p: number[] = Array(n).fill(1);
  for (let t = 0; t < iterations; t++) {
    const q = p.map((pi, i) => {
      const num = W[i]!.reduce((s, x) => s + x, 0) + 0.5;
      let den = 0.5 / (pi + 1);
      for (let j = 0; j < n; j++) if (j !== i) den += (W[i]![j]! + W[j]![i]!) / (pi + p[j]!);
      return num / den;
    });
    const mean = q.reduce((s, x) => s + x, 0) / n;
    p = q.map((x) => x / mean);
  }
  return p;
}

describe('Bradley-Terry (MM, 0.5 prior, mean 1)', () => {
  // A beats B 3-1; C loses its 2 games to A and its 2 games to B.
  const case1 = [...games('A', 'B', 'A', 3), ...games('A', 'B', 'B', 1), ...games('C', 'A', 'B', 2), ...games('B', 'C', 'A', 2)];

  it('A beats B 3-1 and C loses every game: the first iteration by hand, then a finite ranking A > B > C', () => {
    // From p = 1: A = 5.5 / (0.25 + 4/2 + 2/2) = 22/13; B = 3.5 / 3.25 = 14/13; C = 0.5 / (0.25 + 1 + 1) = 2/9;
    // mean 350/351, so p = (297, 189, 39) / 175.
    const one = bradleyTerry(['A', 'B', 'C'], case1, { iterations: 1 });
    expect(strengths(one)[0]).toBeCloseTo(297 / 175, 14);
    expect(strengths(one)[1]).toBeCloseTo(189 / 175, 14);
    expect(strengths(one)[2]).toBeCloseTo(39 / 175, 14);
    const r = bradleyTerry(['A', 'B', 'C'], case1);
    const [a, b, c] = r.players;
    expect(r.iterations).toBe(500);
    expect(a!.wins).toBe(5);
    expect(b!.wins).toBe(3);
    expect(c!.wins).toBe(0);
    expect(c!.losses).toBe(4);
    expect(a!.score).toBeGreaterThan(b!.score);
    expect(b!.score).toBeGreaterThan(c!.score);
    for (const p of r.players) expect(Number.isFinite(p.score)).toBe(true);
    expect((a!.strength + b!.strength + c!.strength) / 3).toBeCloseTo(1, 12);
    expect(rankPlayers(r).map((p) => p.id)).toEqual(['A', 'B', 'C']);
    // 500 iterations reach the fixed point: one more iteration changes nothing.
    const more = bradleyTerry(['A', 'B', 'C'], case1, { iterations: 501 });
    strengths(more).forEach((s, i) => expect(s).toBeCloseTo(strengths(r)[i]!, 12));
  });

  it('two players, one game: the strength of the winner is the root of x³ − 4x² + 6 in (1, 2)', () => {
    // With p_A = x, p_B = 2 − x: A's update is 3(x+1)/(x+2), B's is (3−x)/(4−x); the fixed point of
    // update-then-rescale has their ratio equal to x/(2−x), which reduces to x³ − 4x² + 6 = 0.
    const x = root((v) => v ** 3 - 4 * v ** 2 + 6, 1, 2);
    const r = bradleyTerry(['A', 'B'], [{ a: 'A', b: 'B', winner: 'A' }]);
    expect(r.players[0]!.strength).toBeCloseTo(x, 9);
    expect(r.players[1]!.strength).toBeCloseTo(2 - x, 9);
    expect(r.players[0]!.score).toBeCloseTo(Math.log(x), 9);
    // The loser is still finite (it never won).
    expect(Number.isFinite(r.players[1]!.score)).toBe(true);
  });

  it('the mirror: one unbeaten player (C wins all 4, B beats A 3-1) is finite and first', () => {
    const mirror = [...games('A', 'B', 'B', 3), ...games('A', 'B', 'A', 1), ...games('C', 'A', 'A', 2), ...games('B', 'C', 'B', 2)];
    // From p = 1: A = 1.5/3.25 = 6/13, B = 3.5/3.25 = 14/13, C = 4.5/2.25 = 2; mean 46/39 -> (9, 21, 39)/23.
    const one = bradleyTerry(['A', 'B', 'C'], mirror, { iterations: 1 });
    expect(strengths(one)).toEqual([9 / 23, 21 / 23, 39 / 23].map((v) => expect.closeTo(v, 14)));
    const r = bradleyTerry(['A', 'B', 'C'], mirror);
    expect(r.players[2]!.losses).toBe(0);
    for (const p of r.players) expect(Number.isFinite(p.score)).toBe(true);
    expect(rankPlayers(r).map((p) => p.id)).toEqual(['C', 'B', 'A']);
    const ref = reference(['A', 'B', 'C'], mirror, 500);
    strengths(r).forEach((s, i) => expect(Math.abs(s - ref[i]!)).toBeLessThan(1e-9));
  });

  it('ties count half to each side', () => {
    // Two ties: both strengths stay exactly 1, scores 0.
    const tied = bradleyTerry(['A', 'B'], games('A', 'B', 'tie', 2));
    expect(strengths(tied)).toEqual([1, 1]);
    expect(tied.players.map((p) => p.score)).toEqual([0, 0]);
    expect(tied.players[0]!.ties).toBe(2);
    expect(tied.players[0]!.wins).toBe(1);
    // Two ties weigh exactly as one win each way.
    const split = bradleyTerry(['A', 'B', 'C'], [...games('A', 'B', 'tie', 2), { a: 'A', b: 'C', winner: 'A' }]);
    const even = bradleyTerry(['A', 'B', 'C'], [{ a: 'A', b: 'B', winner: 'A' }, { a: 'A', b: 'B', winner: 'B' }, { a: 'A', b: 'C', winner: 'A' }]);
    strengths(split).forEach((s, i) => expect(s).toBeCloseTo(strengths(even)[i]!, 14));
    // A ties B and beats C; first iteration: A = 2/1.25 = 1.6, B = 1/0.75 = 4/3, C = 0.5/0.75 = 2/3; mean 1.2.
    const one = bradleyTerry(['A', 'B', 'C'], [{ a: 'A', b: 'B', winner: 'tie' }, { a: 'C', b: 'A', winner: 'B' }], { iterations: 1 });
    expect(strengths(one)).toEqual([4 / 3, 10 / 9, 5 / 9].map((v) => expect.closeTo(v, 14)));
  });

  it('a fixed 54-pair ring tournament of 18 runs matches the formula to 1e-9', () => {
    const ids = Array.from({ length: 18 }, (_, i) => `run-${String(i).padStart(2, '0')}`);
    const pairs = ringPairs(ids, { seed: 12 });
    expect(pairs).toHaveLength(54);
    // A fixed verdict rule: the run with the larger hidden quality wins; equal quality (i mod 6) ties.
    const quality = (id: string) => Number(id.slice(4)) % 6;
    const judged: JudgedPair[] = pairs.map((p) => ({ ...p, winner: quality(p.a) > quality(p.b) ? 'A' : quality(p.a) < quality(p.b) ? 'B' : 'tie', rationale: 'hidden quality' }));
    const matches = matchesOf(judged);
    const r = bradleyTerry(ids, matches);
    const ref = reference(ids, matches, 500);
    r.players.forEach((p, i) => {
      expect(Math.abs(p.strength - ref[i]!)).toBeLessThan(1e-9);
      expect(Math.abs(p.score - Math.log(ref[i]!))).toBeLessThan(1e-9);
      expect(p.games).toBe(6);
    });
    // At the fixed point every strength is its own update rescaled (the formula holds).
    const next = reference(ids, matches, 501);
    next.forEach((v, i) => expect(Math.abs(v - ref[i]!)).toBeLessThan(1e-9));
  });

  it('ranks are stable under relabelling (names, player order and match order permuted)', () => {
    const ids = Array.from({ length: 18 }, (_, i) => `r${i}`);
    const pairs = ringPairs(ids, { seed: 5 });
    const q = (id: string) => (Number(id.slice(1)) * 7) % 11;
    const matches: Match[] = pairs.map((p) => ({ a: p.a, b: p.b, winner: q(p.a) > q(p.b) ? 'A' : q(p.a) < q(p.b) ? 'B' : 'tie' }));
    const base = rankPlayers(bradleyTerry(ids, matches));
    // Rename r<i> -> x<(5i+3) mod 18>, reverse the player list, reverse the matches and swap every A/B.
    const rename = (id: string) => `x${(Number(id.slice(1)) * 5 + 3) % 18}`;
    const flip: Record<Match['winner'], Match['winner']> = { A: 'B', B: 'A', tie: 'tie' };
    const relabelled = rankPlayers(bradleyTerry(ids.map(rename).reverse(), [...matches].reverse().map((m) => ({ a: rename(m.b), b: rename(m.a), winner: flip[m.winner] }))));
    const rankOf = new Map(relabelled.map((p) => [p.id, p]));
    for (const p of base) {
      const other = rankOf.get(rename(p.id))!;
      expect(Math.abs(other.score - p.score)).toBeLessThan(1e-9);
      // Equal scores (same hidden quality) may trade places; distinct scores keep their rank.
      const sameScore = base.filter((o) => Math.abs(o.score - p.score) <= 1e-9).map((o) => o.rank);
      expect(sameScore).toContain(other.rank);
    }
    // With distinct qualities every rank is kept exactly.
    const strict: Match[] = pairs.map((p) => ({ a: p.a, b: p.b, winner: Number(p.a.slice(1)) > Number(p.b.slice(1)) ? 'A' : 'B' }));
    const s1 = rankPlayers(bradleyTerry(ids, strict));
    const s2 = rankPlayers(bradleyTerry(ids.map(rename).reverse(), [...strict].reverse().map((m) => ({ a: rename(m.b), b: rename(m.a), winner: flip[m.winner] }))));
    expect(s2.map((p) => p.id)).toEqual(s1.map((p) => rename(p.id)));
  });

  it('never NaN or infinite: no games at all, one player always losing, a long chain', () => {
    const none = bradleyTerry(['A', 'B', 'C'], []);
    expect(strengths(none)).toEqual([1, 1, 1]);
    const chain = Array.from({ length: 30 }, (_, i) => ({ a: `p${i}`, b: `p${i + 1}`, winner: 'A' as const }));
    const r = bradleyTerry(Array.from({ length: 31 }, (_, i) => `p${i}`), [...chain, ...chain, ...chain]);
    for (const p of r.players) expect(Number.isFinite(p.score)).toBe(true);
    expect(rankPlayers(r)[0]!.id).toBe('p0');
    expect(rankPlayers(r)[30]!.id).toBe('p30');
  });

  it('bad input names the match', () => {
    expect(() => bradleyTerry(['A'], [{ a: 'A', b: 'Z', winner: 'A' }])).toThrow(/match 0 names unknown player "Z"/);
    expect(() => bradleyTerry(['A', 'B'], [{ a: 'A', b: 'A', winner: 'A' }])).toThrow(MassRankError);
    expect(() => bradleyTerry(['A', 'B'], [{ a: 'A', b: 'B', winner: 'C' as 'A' }])).toThrow(/winner "C"/);
    expect(() => bradleyTerry(['A', 'A'], [])).toThrow(/listed twice/);
  });
});
