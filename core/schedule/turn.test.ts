/**
 * runOrdered's `turn` (core/schedule/ordered.ts): work that stores as it ends (a MASS step)
 * waits for its turn before writing, so its writes land in item order whatever order the work
 * finishes in; when the loop stops early, the turns not reached reject and nothing hangs.
 */
import { describe, expect, it } from 'vitest';
import { runOrdered } from './ordered.ts';
import { Scheduler } from './scheduler.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('runOrdered turn', () => {
  it('work finishing in reverse order writes in item order when it awaits its turn', async () => {
    const lane = new Scheduler().lane('steps', 5);
    const finished: number[] = [];
    const written: number[] = [];
    await runOrdered({
      items: [0, 1, 2, 3, 4],
      lane,
      run: async (x, _i, turn) => {
        await sleep(5 * (5 - x)); // 4 finishes first, 0 last
        finished.push(x);
        await turn();
        written.push(x);
        return x;
      },
      commit: () => {},
    });
    expect(finished).toEqual([4, 3, 2, 1, 0]);
    expect(written).toEqual([0, 1, 2, 3, 4]);
    expect(lane.stats().maxInFlight).toBe(5);
    lane.close();
  });

  it('an error at item 1 rejects the turns of the items after it: they write nothing, and runOrdered returns', async () => {
    const lane = new Scheduler().lane('steps', 4);
    const written: number[] = [];
    const refused: string[] = [];
    const p = runOrdered({
      items: [0, 1, 2, 3],
      lane,
      run: async (x, _i, turn) => {
        if (x === 1) {
          await sleep(10);
          throw new Error('step 1 failed');
        }
        try {
          await turn();
        } catch (err) {
          refused.push(`${x}: ${(err as Error).name}`);
          throw err;
        }
        written.push(x);
        return x;
      },
      commit: () => {},
    });
    await expect(p).rejects.toThrow('step 1 failed');
    expect(written).toEqual([0]);
    expect(refused.sort()).toEqual(['2: AbortError', '3: AbortError']);
  });

  it('at width 1 every turn is already due', async () => {
    const lane = new Scheduler().lane('one', 1);
    const log: string[] = [];
    await runOrdered({
      items: ['a', 'b'],
      lane,
      window: 1,
      run: async (x, _i, turn) => {
        await turn();
        log.push(x);
        return x;
      },
      commit: (x) => void log.push(`commit ${x}`),
    });
    expect(log).toEqual(['a', 'commit a', 'b', 'commit b']);
  });
});
