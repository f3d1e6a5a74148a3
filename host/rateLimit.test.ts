import { describe, expect, it } from 'vitest';
import { ApiError } from '../core/api/index.ts';
import type { Store } from '../core/store/index.ts';
import { RateLimiter } from './rateLimit.ts';
import { attendeeAllow, RateLimitedError, type WorkshopExperiments } from './workshop.ts';

describe('RateLimiter (token bucket)', () => {
  it('lets a burst through, then one call per 1/perSecond, with the wait in whole seconds', () => {
    let t = 0;
    const rl = new RateLimiter({ burst: 3, perSecond: 0.5 }, () => t);
    expect([rl.take('a'), rl.take('a'), rl.take('a')]).toEqual([0, 0, 0]);
    expect(rl.take('a')).toBe(2); // 1 token at 0.5/s: 2 s
    expect(rl.take('b')).toBe(0); // another key has its own bucket
    t = 1000; // half a token back
    expect(rl.take('a')).toBe(1);
    t = 2000; // one token back (0.5 + 0.5)
    expect(rl.take('a')).toBe(0);
    expect(rl.take('a')).toBe(2);
  });

  it('keeps at most maxKeys keys (full buckets are dropped first)', () => {
    let t = 0;
    const rl = new RateLimiter({ burst: 1, perSecond: 1 }, () => t, 100);
    for (let i = 0; i < 1000; i++) rl.take(`k${i}`);
    expect(rl.size).toBeLessThanOrEqual(100);
    t = 10_000;
    rl.take('late');
    expect(rl.size).toBe(1); // every other bucket had refilled
  });
});

describe('attendeeAllow: joins per address', () => {
  it('mints one identity per join and refuses joins past the per-address burst with 429', () => {
    const joined = new Set<string>();
    let n = 0;
    // A stand-in session (only what the guard reads); the store is never reached for these methods.
    const session: WorkshopExperiments = {
      experimentIds: () => new Set(),
      join: () => {
        const id = `at-${String(++n).padStart(12, '0')}`;
        joined.add(id);
        return { id };
      },
      attendees: { has: (id) => joined.has(id), wasRemoved: () => false },
    };
    const allow = attendeeAllow(session, {} as Store, { limits: { joinsPerAddress: { burst: 3, perSecond: 1 / 60 } }, now: () => 0 });
    const req = { address: '10.0.0.7', cookie: undefined };
    const cookies = [0, 1, 2].map(() => allow('joinWorkshop', undefined, req)!.setCookie!);
    expect(new Set(cookies).size).toBe(3);
    let err: unknown;
    try {
      allow('joinWorkshop', undefined, req);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RateLimitedError);
    expect([(err as ApiError).code, (err as RateLimitedError).retryAfter]).toEqual(['RATE_LIMITED', 60]);
    // Another address still joins; a holder of a valid cookie re-joins as itself, minting nothing.
    expect(allow('joinWorkshop', undefined, { address: '10.0.0.8', cookie: undefined })!.payload).toEqual({ attendee: 'at-000000000004' });
    expect(allow('joinWorkshop', undefined, { address: '10.0.0.7', cookie: cookies[0]!.split(';')[0] })).toEqual({ payload: { attendee: 'at-000000000001' } });
    expect(n).toBe(4);
  });
});
