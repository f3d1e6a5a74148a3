import { describe, expect, it } from 'vitest';
import { ringOrder, ringPairs, runTournament, type JudgedPair, type RingPair } from './tournament.ts';

const ids18 = Array.from({ length: 18 }, (_, i) => `run-${i}`);
const key = (p: { a: string; b: string }) => [p.a, p.b].sort().join('|');

describe('ring tournament', () => {
  it('18 runs: 54 unique pairs, every run in 6 games, its 3 clockwise neighbours on the seeded ring', () => {
    const pairs = ringPairs(ids18, { seed: 7 });
    expect(pairs).toHaveLength(54);
    expect(new Set(pairs.map(key)).size).toBe(54);
    const order = ringOrder(ids18, 7);
    expect([...order].sort()).toEqual([...ids18].sort());
    expect(order).not.toEqual(ids18);
    for (const id of ids18) expect(pairs.filter((p) => p.a === id || p.b === id)).toHaveLength(6);
    const at = new Map(order.map((id, i) => [id, i]));
    for (const p of pairs) {
      const [first, second] = p.swapped ? [p.b, p.a] : [p.a, p.b];
      expect((at.get(second)! - at.get(first)! + 18) % 18).toBe(p.distance);
      expect(p.distance).toBeGreaterThanOrEqual(1);
      expect(p.distance).toBeLessThanOrEqual(3);
    }
    expect(pairs.map((p) => p.index)).toEqual(Array.from({ length: 54 }, (_, i) => i));
  });

  it('orientation and order come from the seed: same seed same schedule, another seed another', () => {
    expect(ringPairs(ids18, { seed: 7 })).toEqual(ringPairs(ids18, { seed: 7 }));
    expect(ringPairs(ids18, { seed: 8 }).map((p) => `${p.a}>${p.b}`)).not.toEqual(ringPairs(ids18, { seed: 7 }).map((p) => `${p.a}>${p.b}`));
    const swapped = ringPairs(ids18, { seed: 7 }).filter((p) => p.swapped).length;
    // 54 fair coin flips: not all one way.
    expect(swapped).toBeGreaterThan(10);
    expect(swapped).toBeLessThan(44);
  });

  it('small rings drop the duplicate pairs: 4 runs with 3 neighbours meet each other once (6 pairs)', () => {
    const pairs = ringPairs(['a', 'b', 'c', 'd'], { seed: 1 });
    expect(pairs).toHaveLength(6);
    expect(new Set(pairs.map(key)).size).toBe(6);
    expect(ringPairs(['a', 'b'], { seed: 1 })).toHaveLength(1);
    expect(ringPairs(ids18, { seed: 1, neighbours: 1 })).toHaveLength(18);
  });

  it('bad schedules are refused with the reason', () => {
    expect(() => ringPairs(['a'], { seed: 1 })).toThrow(/at least 2 runs/);
    expect(() => ringPairs(['a', 'a'], { seed: 1 })).toThrow(/listed twice/);
    expect(() => ringPairs(['a', 'b'], { seed: 1, neighbours: 0 })).toThrow(/neighbours/);
  });

  it('judges each pair once, records every verdict, and a resumed tournament asks only the rest', async () => {
    const pairs = ringPairs(ids18, { seed: 3 });
    const asked: number[] = [];
    const recorded: JudgedPair[] = [];
    const judge = async (p: RingPair) => {
      asked.push(p.index);
      return { winner: p.index % 3 === 0 ? ('tie' as const) : ('A' as const), rationale: `pair ${p.index}` };
    };
    const ctrl = new AbortController();
    const partial = await runTournament(pairs, async (p) => {
      const v = await judge(p);
      if (p.index === 19) ctrl.abort();
      return v;
    }, { onJudged: (j) => void recorded.push(j), signal: ctrl.signal });
    expect(partial).toHaveLength(20);
    expect(recorded).toHaveLength(20);
    asked.length = 0;
    const all = await runTournament(pairs, judge, { done: recorded });
    expect(all).toHaveLength(54);
    expect(asked).toEqual(Array.from({ length: 34 }, (_, i) => i + 20));
    expect(all[0]).toMatchObject({ index: 0, winner: 'tie', rationale: 'pair 0' });
    expect(all.map((j) => j.index)).toEqual(pairs.map((p) => p.index));
    await expect(runTournament(pairs, judge, { done: [{ ...recorded[0]!, a: recorded[0]!.b, b: recorded[0]!.a }] })).rejects.toThrow(/not in this schedule/);
  });
});
