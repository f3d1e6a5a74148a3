/**
 * The order in which the endpoint pool grants waiting calls (pool.ts; docs/scale.md): least
 * attained service first — the call of the task that has started the fewest calls goes first,
 * ties in arrival order — not plain first come, first served.
 */
import { describe, expect, it } from 'vitest';
import { parseEndpointRef } from '../../core/model/index.ts';
import { EndpointPool, type Lease } from './pool.ts';

describe('EndpointPool grant order', () => {
  it('grants the waiting call of the task with the fewest calls started first, ties in arrival order', async () => {
    const [spec] = parseEndpointRef('openai:http://a.test:1/v1#m&concurrency=1');
    const pool = new EndpointPool([spec!]);
    // Task "old" has started one call, which holds the only slot.
    let held: Lease = await pool.acquire(undefined, 'm', undefined, 'old');
    const granted: string[] = [];
    const wait = (label: string, task?: string) =>
      void pool.acquire(undefined, 'm', undefined, task).then((l) => {
        granted.push(label);
        held = l;
      });
    wait('old#2', 'old'); // arrives first, but its task has a call started (rank 1)
    wait('mid#1', 'mid'); // rank 0 (mid has started none yet)...
    wait('new#1', 'new'); // rank 0
    wait('untracked'); // no task: ranks as a first call, rank 0
    // Hand the one slot on, one release at a time; each grant resolves before the next release.
    for (let i = 0; i < 4; i++) {
      held.release('ok');
      await new Promise((r) => setImmediate(r));
    }
    // Rank 0 callers in arrival order, then the task with a call started. FIFO would start with old#2.
    expect(granted).toEqual(['mid#1', 'new#1', 'untracked', 'old#2']);
    held.release('ok');
    expect(pool.outstanding()).toEqual([0]);
  });

  it('ranks a task by the calls it has started so far, so a task two calls in waits behind one a call in; an idle pool forgets', async () => {
    const [spec] = parseEndpointRef('openai:http://a.test:1/v1#m&concurrency=2');
    const pool = new EndpointPool([spec!]);
    // c holds one slot throughout (the pool is never idle); on the other, a starts 2 calls, b 1.
    const c = await pool.acquire(undefined, 'm', undefined, 'c');
    for (const t of ['a', 'a', 'b']) (await pool.acquire(undefined, 'm', undefined, t)).release('ok');
    let held = await pool.acquire(undefined, 'm', undefined, 'c');
    const granted: string[] = [];
    for (const t of ['a', 'b'])
      void pool.acquire(undefined, 'm', undefined, t).then((l) => {
        granted.push(t);
        held = l;
      });
    for (let i = 0; i < 2; i++) {
      held.release('ok');
      await new Promise((r) => setImmediate(r));
    }
    expect(granted).toEqual(['b', 'a']);
    held.release('ok');
    c.release('ok');
    // Idle now: the counts are dropped, so a waits in arrival order again, before b.
    const d = await pool.acquire(undefined, 'm', undefined, 'd');
    const e = await pool.acquire(undefined, 'm', undefined, 'e');
    const again: string[] = [];
    const pa = pool.acquire(undefined, 'm', undefined, 'a').then((l) => (again.push('a'), l));
    const pb = pool.acquire(undefined, 'm', undefined, 'b').then((l) => (again.push('b'), l));
    d.release('ok');
    e.release('ok');
    for (const l of await Promise.all([pa, pb])) l.release('ok');
    expect(again).toEqual(['a', 'b']);
  });
});
