import { describe, expect, it } from 'vitest';
import { describeDecisions } from './decisions.ts';
import { defaultParallel } from './defaults.ts';
import { runOrdered } from './ordered.ts';
import { Scheduler } from './scheduler.ts';

/** A promise opened by hand. */
function gate() {
  let open!: () => void;
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}
const tick = () => new Promise((r) => setTimeout(r, 0));

describe('Scheduler', () => {
  it('gives freed slots to the lane holding fewest, so two lanes converge to an even share of the budget', async () => {
    const s = new Scheduler({ capacity: 4 });
    const a = s.lane('a', 4);
    const b = s.lane('b', 4);
    const gates = { a: Array.from({ length: 6 }, gate), b: Array.from({ length: 6 }, gate) };
    const order: string[] = [];
    const submit = (lane: typeof a, name: 'a' | 'b', i: number) => void lane.submit(async () => {
      order.push(`${name}${i}`);
      await gates[name][i]!.wait;
    });
    for (let i = 0; i < 6; i++) submit(a, 'a', i);
    for (let i = 0; i < 6; i++) submit(b, 'b', i);
    await tick();
    // A came first and took the whole budget; B waits.
    expect(order).toEqual(['a0', 'a1', 'a2', 'a3']);
    expect(s.stats().inFlight).toBe(4);
    // A frees one: B holds 0 < A's 3, so B gets it; again (B 1 < A 2); then A 2 vs B 2 ... A frees -> A 1 < B 2 -> A.
    gates.a[0]!.open();
    await tick();
    gates.a[1]!.open();
    await tick();
    expect(order.slice(4)).toEqual(['b0', 'b1']);
    gates.a[2]!.open();
    await tick();
    expect(order.slice(6)).toEqual(['a4']);
    expect(s.laneStats().map((l) => [l.label, l.inFlight])).toEqual([['a', 2], ['b', 2]]);
    expect(s.stats()).toEqual({ inFlight: 4, maxInFlight: 4 });
    a.close();
    b.close();
  });

  it('bounds a lane by its width below the budget, and rejects a width that is not a positive integer', async () => {
    const s = new Scheduler({ capacity: 10 });
    const lane = s.lane('x', 3);
    const g = gate();
    const runs = Array.from({ length: 7 }, () => lane.submit(() => g.wait));
    await tick();
    expect(lane.stats().inFlight).toBe(3);
    g.open();
    await Promise.all(runs);
    expect(lane.stats()).toEqual({ inFlight: 0, maxInFlight: 3 });
    expect(() => s.lane('bad', 0)).toThrow(/positive integer/);
    expect(() => s.setCapacity(1.5)).toThrow(/positive integer/);
  });
});

describe('runOrdered', () => {
  it('commits in item order though work finishes in reverse order, with `width` in flight', async () => {
    const lane = new Scheduler().lane('exp', 4);
    const gates = Array.from({ length: 8 }, gate);
    const committed: number[] = [];
    const p = runOrdered({
      items: [0, 1, 2, 3, 4, 5, 6, 7],
      lane,
      run: async (x) => {
        await gates[x]!.wait;
        return x * 10;
      },
      commit: (r, x, i) => {
        expect(r).toBe(x * 10);
        committed.push(i);
      },
    });
    await tick();
    expect(lane.stats().inFlight).toBe(4);
    // 3, 2, 1 finish first: nothing is committed before 0 is.
    for (const i of [3, 2, 1]) gates[i]!.open();
    await tick();
    expect(committed).toEqual([]);
    gates[0]!.open();
    await tick();
    expect(committed).toEqual([0, 1, 2, 3]);
    for (const i of [7, 6, 5, 4]) gates[i]!.open();
    expect(await p).toEqual({ committed: 8, stopped: false, aborted: false });
    expect(committed).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(lane.stats().maxInFlight).toBe(4);
    lane.close();
  });

  it('window 1 starts each item only after the one before it is committed', async () => {
    const lane = new Scheduler().lane('online', 8);
    const log: string[] = [];
    await runOrdered({
      items: ['a', 'b', 'c'],
      lane,
      window: 1,
      run: async (x) => {
        log.push(`run ${x}`);
        await tick();
        return x;
      },
      commit: async (x) => {
        await tick();
        log.push(`commit ${x}`);
      },
    });
    expect(log).toEqual(['run a', 'commit a', 'run b', 'commit b', 'run c', 'commit c']);
  });

  it('a commit returning false stops there: later results are not committed, queued work never starts', async () => {
    const lane = new Scheduler().lane('halt', 2);
    const ran: number[] = [];
    const committed: number[] = [];
    const out = await runOrdered({
      items: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
      lane,
      window: 2,
      run: async (x) => {
        ran.push(x);
        await tick();
        return x;
      },
      commit: (x) => {
        committed.push(x);
        return x !== 3;
      },
    });
    expect(out).toEqual({ committed: 4, stopped: true, aborted: false });
    expect(committed).toEqual([0, 1, 2, 3]);
    // With a window of 2, item 4 is started once item 2 is committed, item 5 once item 3 is: none after.
    expect(ran).toEqual([0, 1, 2, 3, 4]);
  });

  it('an error of item k is thrown after items < k are committed and the work in flight settled', async () => {
    const lane = new Scheduler().lane('err', 3);
    const committed: number[] = [];
    let inFlight = 0;
    const p = runOrdered({
      items: [0, 1, 2, 3, 4],
      lane,
      run: async (x) => {
        inFlight++;
        await new Promise((r) => setTimeout(r, x === 1 ? 1 : 10));
        inFlight--;
        if (x === 1) throw new Error('boom at 1');
        return x;
      },
      commit: (x) => void committed.push(x),
    });
    await expect(p).rejects.toThrow('boom at 1');
    expect(committed).toEqual([0]);
    expect(inFlight).toBe(0);
  });

  it('an aborted signal stops starting work; what started is committed in order', async () => {
    const lane = new Scheduler().lane('cancel', 2);
    const ac = new AbortController();
    const committed: number[] = [];
    const out = await runOrdered({
      items: [0, 1, 2, 3, 4, 5],
      lane,
      window: 2,
      signal: ac.signal,
      run: async (x) => {
        if (x === 1) ac.abort();
        await tick();
        return x;
      },
      commit: (x) => void committed.push(x),
    });
    expect(out).toEqual({ committed: 2, stopped: false, aborted: true });
    expect(committed).toEqual([0, 1]);
  });
});

describe('defaultParallel', () => {
  it('is three times the summed concurrency of distinct endpoints over the references the roles use', () => {
    const cfg = {
      models: {
        default: 'openai:http://a:1/v1#m&concurrency=8,http://b:1/v1#m&concurrency=16',
        judge: 'openai:http://a:1/v1#m&concurrency=8', // the same endpoint as default's first: counted once
        unused: 'openai:http://c:1/v1#m&concurrency=64',
      },
      roleModels: { planner: 'default', solver: 'default', verifier: 'judge' },
    };
    // 8 + 16 = 24 call slots; three tasks per slot (TASKS_PER_SLOT) = 72 tasks in flight.
    expect(defaultParallel(cfg)).toEqual({ parallel: 72, why: '3 x the sum of endpoint concurrency 8 + 16 = 3 x 24' });
    // An endpoint without &concurrency serves 4 at once (core/model/endpoint.ts): 12 tasks.
    expect(defaultParallel({ models: { default: 'openai:http://a:1/v1#m' }, roleModels: { r: 'default' } }).parallel).toBe(12);
  });

  it('is 1 for a local GGUF file unless tune measured a sequence count; local and served add up', () => {
    expect(defaultParallel({ models: { default: '/m/stories.gguf' }, roleModels: { r: 'default' } })).toEqual({ parallel: 1, why: 'local GGUF stories.gguf: 1 (flowlab tune measured no sequence count)' });
    expect(defaultParallel({ models: { default: '/m/stories.gguf' }, roleModels: { r: 'default' } }, () => 6).parallel).toBe(6);
    expect(defaultParallel({ models: { default: '/m/a.gguf', s: 'openai:http://a:1/v1#m&concurrency=8' }, roleModels: { r: 'default', q: 's' } }).parallel).toBe(25); // 1 + 3 x 8
  });
});

describe('describeDecisions', () => {
  it('sums up decisions per endpoint in the order they first appear', () => {
    const a = 'http://a/v1#m';
    const b = 'http://b/v1#m';
    const line = describeDecisions([
      { at: 1, endpoint: a, action: 'decrease', limit: 16, reason: '429' },
      { at: 2, endpoint: b, action: 'remove', limit: 0, reason: 'cannot reach', retryAt: 1002 },
      { at: 3, endpoint: a, action: 'decrease', limit: 8, reason: '503' },
      { at: 4, endpoint: a, action: 'increase', limit: 9, reason: 'answered' },
      { at: 1005, endpoint: b, action: 'restore', limit: 32, reason: 'answered again' },
    ], new Map([[a, 32]]));
    expect(line).toBe('endpoint decisions (docs/scale.md): http://a/v1#m limit 32 -> 9 (2 decreases on 429/503, 1 increase); http://b/v1#m taken out 1x, back 1x');
    expect(describeDecisions([])).toBe('');
  });
});

describe('Scheduler groups', () => {
  it('bounds the lanes of a group by its capacity together, shares it evenly, and widens one as the other ends', async () => {
    const s = new Scheduler({ capacity: 100 });
    const g = s.group('study', 4);
    g.add('cell-a');
    g.add('cell-b');
    const a = s.lane('cell-a', 4);
    const b = s.lane('cell-b', 4);
    const outside = s.lane('other', 3);
    const gatesA = Array.from({ length: 4 }, gate);
    const gatesB = Array.from({ length: 4 }, gate);
    const doneA = gatesA.map((x) => a.submit(() => x.wait));
    gatesB.forEach((x) => void b.submit(() => x.wait));
    const other = Array.from({ length: 3 }, () => outside.submit(() => Promise.resolve()));
    await tick();
    // A asked first and took the group's 4; B waits; the lane outside the group is not held back.
    expect([a.stats().inFlight, b.stats().inFlight]).toEqual([4, 0]);
    expect((await Promise.all(other)).every((r) => !r.skipped)).toBe(true);
    gatesA[0]!.open();
    gatesA[1]!.open();
    await tick();
    expect([a.stats().inFlight, b.stats().inFlight]).toEqual([2, 2]);
    for (const x of gatesA.slice(2)) x.open();
    await Promise.all(doneA);
    await tick();
    // A is done: B holds the whole group budget.
    expect(b.stats().inFlight).toBe(4);
    g.close();
  });
});
