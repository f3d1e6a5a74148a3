/** SequencePool's choices with prefix reuse, on fake sequences (tokens as numbers). */
import type { Token } from 'node-llama-cpp';
import { describe, expect, it } from 'vitest';
import { MIN_SHARED_PREFIX, SequencePool, type SequenceSource } from './sequencePool.ts';

class FakeSequence {
  tokens: Token[] = [];
  constructor(readonly id: number) {}
  compareContextTokens(ts: Token[]) {
    let i = 0;
    while (i < ts.length && i < this.tokens.length && ts[i] === this.tokens[i]) i++;
    return { firstDifferentIndex: i };
  }
}

const source = (): SequenceSource & { made: FakeSequence[] } => {
  const made: FakeSequence[] = [];
  return {
    made,
    get sequencesLeft() {
      return 16 - made.length;
    },
    getSequence: (() => {
      const s = new FakeSequence(made.length);
      made.push(s);
      return s;
    }) as unknown as SequenceSource['getSequence'],
  };
};

/** `n` tokens: a chat header shared by every prompt (10 tokens), then `base`, `base + 1`, ... */
const prompt = (base: number, n: number): Token[] => [...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: n - 10 }, (_, i) => base + i)] as Token[];

/** Acquires for `tokens` and, like a call, leaves the prompt (and a completion) in the sequence. */
const call = async (pool: SequencePool<FakeSequence>, tokens: Token[]) => {
  const s = await pool.acquire(undefined, 'm', tokens);
  s.tokens = [...tokens, 999 as Token];
  return s;
};

describe('SequencePool with prefix reuse', () => {
  it('keeps one sequence per prefix: a share of only the chat header does not take another role\'s sequence', async () => {
    const pool = new SequencePool<FakeSequence>(source(), 4);
    const planner = await call(pool, prompt(100, 80));
    pool.release(planner);
    const solver = await call(pool, prompt(500, 80)); // shares the 10-token header only
    expect(solver).not.toBe(planner);
    pool.release(solver);
    // The planner's next task: its system text (100..139) is shared, the question is not.
    const next = await call(pool, [...prompt(100, 50), ...Array.from({ length: 30 }, (_, i) => 2000 + i)] as Token[]);
    expect(next).toBe(planner);
    expect(MIN_SHARED_PREFIX).toBeLessThanOrEqual(40);
  });

  it('evicts the least recently released sequence once all exist', async () => {
    const pool = new SequencePool<FakeSequence>(source(), 2);
    const a = await call(pool, prompt(100, 80));
    const b = await call(pool, prompt(300, 80));
    pool.release(a);
    pool.release(b);
    const c = await call(pool, prompt(700, 80));
    expect(c).toBe(a);
  });

  it('a call whose prompt a busy sequence holds waits for it; calls with one prefix chain on one sequence', async () => {
    const pool = new SequencePool<FakeSequence>(source(), 4);
    const p = prompt(100, 80);
    const first = await call(pool, p);
    const order: number[] = [];
    const second = pool.acquire(undefined, 'm', p).then((s) => (order.push(2), s));
    const third = pool.acquire(undefined, 'm', p).then((s) => (order.push(3), s));
    const other = await call(pool, prompt(5000, 80)); // shares nothing more than the header: a new sequence, no wait
    expect(other).not.toBe(first);
    pool.release(first);
    const s2 = await second;
    expect(s2).toBe(first);
    pool.release(s2);
    expect(await third).toBe(first);
    expect(order).toEqual([2, 3]);
  });

  it('does not wait when the busy sequence shares less than half the prompt', async () => {
    const pool = new SequencePool<FakeSequence>(source(), 4);
    const first = await call(pool, prompt(100, 80));
    const s = await pool.acquire(undefined, 'm', [...prompt(100, 35), ...Array.from({ length: 45 }, (_, i) => 3000 + i)] as Token[]);
    expect(s).not.toBe(first);
  });

  it('an aborted wait for a busy sequence leaves with ABORTED; close rejects the rest', async () => {
    const pool = new SequencePool<FakeSequence>(source(), 4);
    const p = prompt(100, 80);
    await call(pool, p);
    const ac = new AbortController();
    const waiting = pool.acquire(ac.signal, 'm', p);
    ac.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'ABORTED' });
    const later = pool.acquire(undefined, 'm', p);
    pool.close(new Error('closed'));
    await expect(later).rejects.toThrow('closed');
  });

  it('without tokens: the most recently released free sequence, then new ones, then FIFO waiting', async () => {
    const pool = new SequencePool<FakeSequence>(source(), 2);
    const a = await pool.acquire(undefined, 'm');
    const b = await pool.acquire(undefined, 'm');
    const waiting = pool.acquire(undefined, 'm');
    pool.release(b);
    expect(await waiting).toBe(b);
    pool.release(a);
    expect(await pool.acquire(undefined, 'm')).toBe(a);
  });
});
