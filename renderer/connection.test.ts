import { describe, expect, it } from 'vitest';
import type { LabEvent } from '../core/api/client.ts';
import { createReconnectingSubscribe, retryDelay, type ConnectionStatus, type ReconnectingSource } from './connection.ts';
import { createLabStore } from './state.ts';
import { createRemoteApi } from '../core/api/client.ts';

/** Fake EventSources the test opens, fails and feeds by hand. */
function fakes() {
  const opened: Array<ReconnectingSource & { closed: boolean }> = [];
  const timers: Array<{ fn: () => void; ms: number }> = [];
  return {
    opened,
    timers,
    open: () => {
      const s = { onmessage: null, onopen: null, onerror: null, closed: false, close() { s.closed = true; } } as ReconnectingSource & { closed: boolean };
      opened.push(s);
      return s;
    },
    delay: (fn: () => void, ms: number) => {
      const t = { fn, ms };
      timers.push(t);
      return () => void timers.splice(timers.indexOf(t), 1);
    },
  };
}

describe('the event stream keeps itself up (renderer/connection.ts)', () => {
  it('waits 1 s, 2 s, 4 s ... up to 30 s between retries', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(retryDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('closes a dropped stream itself, retries with backoff, reports each state and delivers events again', () => {
    const f = fakes();
    const statuses: ConnectionStatus[] = [];
    const got: LabEvent[] = [];
    const subscribe = createReconnectingSubscribe('/api/events?token=t', { open: f.open, delay: f.delay, onStatus: (s) => statuses.push(s), now: () => 1000 });
    const off = subscribe((e) => got.push(e));
    expect(f.opened).toHaveLength(1);
    f.opened[0]!.onopen!(new Event('open'));
    expect(statuses).toEqual([]); // open from the start: nothing to report

    f.opened[0]!.onerror!(new Event('error'));
    expect(f.opened[0]!.closed).toBe(true); // no browser retry every 2 s
    expect(statuses.at(-1)).toEqual({ state: 'lost', attempt: 1, retryInMs: 1000, downSince: 1000 });
    f.timers.shift()!.fn();
    expect(statuses.at(-1)).toMatchObject({ state: 'connecting', attempt: 1 });
    f.opened[1]!.onerror!(new Event('error'));
    expect(statuses.at(-1)).toEqual({ state: 'lost', attempt: 2, retryInMs: 2000, downSince: 1000 });
    expect(f.timers.map((t) => t.ms)).toEqual([2000]);
    f.timers.shift()!.fn();
    f.opened[2]!.onopen!(new Event('open'));
    expect(statuses.at(-1)).toEqual({ state: 'open', attempt: 0, retryInMs: null, downSince: null });

    f.opened[2]!.onmessage!(new MessageEvent('message', { data: JSON.stringify({ type: 'stored', areas: ['experiments'] }) }));
    f.opened[2]!.onmessage!(new MessageEvent('message', { data: '{"type":"stored","areas":["nope"]}' }));
    expect(got).toEqual([{ type: 'stored', areas: ['experiments'] }]);
    off();
    expect(f.opened[2]!.closed).toBe(true);
  });

  it('the lab refetches the lists a stored event names, once per window, and everything when the server is back', async () => {
    const calls: string[] = [];
    const api = createRemoteApi(async (method) => {
      calls.push(method);
      if (method === 'listExperiments' || method === 'listCards' || method === 'activeRuns') return [];
      throw new Error('not in this test');
    });
    const timers: Array<() => void> = [];
    const lab = createLabStore(api, { schedule: (fn) => fn(), delay: (fn) => (timers.push(fn), () => {}), prefersDark: false });
    await lab.getState().loadCards();
    calls.length = 0;
    lab.getState().receiveStored({ type: 'stored', areas: ['experiments'] });
    lab.getState().receiveStored({ type: 'stored', areas: ['cards'] }); // within the window: waits
    await Promise.resolve();
    expect(calls.filter((m) => m !== 'appInfo')).toEqual(['listExperiments']);
    timers.shift()!();
    await Promise.resolve();
    expect(calls).toContain('listCards');
    expect(calls).not.toContain('getLearningCurves'); // never shown: not fetched

    lab.getState().setConnection({ state: 'lost', attempt: 1, retryInMs: 1000, downSince: 5 });
    expect(lab.getState().serverDown).toBe(true);
    calls.length = 0;
    timers.splice(0).forEach((t) => t());
    lab.getState().setConnection({ state: 'open', attempt: 0, retryInMs: null, downSince: null });
    expect(lab.getState().serverDown).toBe(false);
    await Promise.resolve();
    expect(calls).toEqual(expect.arrayContaining(['listExperiments', 'listCards']));
  });
});
