import { describe, expect, it } from 'vitest';
import type { LabEvent, WorkshopView } from '../../../core/api/client.ts';
import { CONNECTED, type ConnectionStatus } from '../../connection.ts';
import { followWorkshop, isLoopbackUrl, publicFactValue, revealTraces, verdictOf, WORKSHOP_POLL_MS, workshopStream } from './followWorkshop.ts';

const LOST: ConnectionStatus = { state: 'lost', attempt: 1, retryInMs: 1000, downSince: 5 };

/** A fake page: its event stream, status, poll timer and `getWorkshop` (each answer is `version` n, resolved by the test). */
function page(initial: ConnectionStatus | null = CONNECTED) {
  const listeners = new Set<(e: LabEvent) => void>();
  const statusListeners = new Set<(s: ConnectionStatus) => void>();
  const polls: Array<{ fn: () => void; ms: number; stopped: boolean }> = [];
  const pending: Array<(v: WorkshopView) => void> = [];
  const shown: number[] = [];
  let status = initial;
  const stop = followWorkshop({
    fetch: () => new Promise<WorkshopView>((resolve) => pending.push(resolve)),
    onView: (v) => shown.push(v.version),
    onError: () => {},
    subscribe: (l) => (listeners.add(l), () => void listeners.delete(l)),
    onConnectionStatus: (l) => (statusListeners.add(l), () => void statusListeners.delete(l)),
    connectionStatus: () => status,
    every: (fn, ms) => {
      const p = { fn, ms, stopped: false };
      polls.push(p);
      return () => void (p.stopped = true);
    },
  });
  const flush = () => new Promise((r) => setTimeout(r, 0));
  return {
    stop, shown, pending, listeners, statusListeners,
    running: () => polls.filter((p) => !p.stopped),
    push: (e: LabEvent) => listeners.forEach((l) => l(e)),
    status: (s: ConnectionStatus) => ((status = s), statusListeners.forEach((l) => l(s))),
    /** Answers the oldest pending fetch with version `n`. */
    answer: async (n: number) => {
      pending.shift()!({ version: n } as WorkshopView);
      await flush();
    },
  };
}

describe('followWorkshop: the store\'s workshop events, polling only while the stream is down', () => {
  it('fetches once, then on each stored event naming workshop (not other areas), never polling while the stream is up', async () => {
    const p = page();
    expect(p.pending).toHaveLength(1);
    await p.answer(1);
    p.push({ type: 'stored', areas: ['experiments'] });
    expect(p.pending).toHaveLength(0);
    p.push({ type: 'stored', areas: ['cards', 'workshop'] });
    expect(p.pending).toHaveLength(1);
    // Two more events while that fetch is in flight: one fetch after it, not two.
    p.push({ type: 'stored', areas: ['workshop'] });
    p.push({ type: 'stored', areas: ['workshop'] });
    expect(p.pending).toHaveLength(1);
    await p.answer(2);
    expect(p.pending).toHaveLength(1);
    await p.answer(3);
    expect(p.shown).toEqual([1, 2, 3]);
    expect(p.running()).toEqual([]);
    p.stop();
    p.push({ type: 'stored', areas: ['workshop'] });
    expect(p.pending).toHaveLength(0);
    expect(p.listeners.size + p.statusListeners.size).toBe(0);
  });

  it('polls every WORKSHOP_POLL_MS while the stream is down, stops and fetches once when it is back', async () => {
    const p = page();
    await p.answer(1);
    p.status(LOST);
    expect(p.running().map((x) => x.ms)).toEqual([WORKSHOP_POLL_MS]);
    p.status({ ...LOST, state: 'connecting', retryInMs: null });
    expect(p.running()).toHaveLength(1); // still one poll, not a second
    p.running()[0]!.fn();
    await p.answer(2);
    p.status(CONNECTED);
    expect(p.running()).toEqual([]);
    expect(p.pending).toHaveLength(1);
    await p.answer(3);
    expect(p.shown).toEqual([1, 2, 3]);
    p.stop();
  });

  it('a page whose token has no stream (down from the start, or no stream at all) polls from the start', () => {
    for (const initial of [LOST, null]) {
      const p = page(initial);
      expect(p.running().map((x) => x.ms)).toEqual([WORKSHOP_POLL_MS]);
      p.stop();
      expect(p.running()).toEqual([]);
    }
  });
});

describe('the attendee page (issue 29 defects)', () => {
  it('opens no event stream for an attendee (it retried /api/events into 403s), and polls', () => {
    let subscribed = 0;
    const live = { subscribe: () => (subscribed++, () => {}), onConnectionStatus: () => () => {}, connectionStatus: () => ({ state: 'open' }) as never };
    const polls: number[] = [];
    const stop = followWorkshop({ fetch: async () => ({}) as never, onView: () => {}, onError: () => {}, ...workshopStream('attendee', live), every: (_fn, ms) => (polls.push(ms), () => {}) });
    stop();
    expect(subscribed).toBe(0);
    expect(polls).toEqual([WORKSHOP_POLL_MS]);
    expect(workshopStream('presenter', live)).toBe(live);
  });

  it("shows file names, not the presenter's absolute paths", () => {
    expect(publicFactValue('/home/presenter/models/stories260K.gguf')).toBe('stories260K.gguf');
    expect(publicFactValue('model C:\\Users\\p\\m\\tiny.gguf, 3 runs')).toBe('model tiny.gguf, 3 runs');
    expect(publicFactValue('3 of 4 right (75%)')).toBe('3 of 4 right (75%)');
  });

  it('says right in green only for a right prediction, wrong in red for a wrong one', () => {
    expect(verdictOf('a', 'a')).toEqual({ text: 'You were right!', tone: 'right' });
    expect(verdictOf('b', 'a')).toEqual({ text: 'Not this time: your prediction was wrong.', tone: 'wrong' });
    expect(verdictOf(undefined, 'a').tone).toBe('none');
  });
});

describe('the presenter page\'s join panel (issue 29 defect: a QR code of a loopback address, no warning)', () => {
  it('knows a URL only this machine can open', () => {
    for (const u of ['http://127.0.0.1:5177/w?t=1', 'http://127.8.9.10/', 'http://localhost:80/', 'http://LOCALHOST/', 'http://a.localhost/', 'http://[::1]:5177/']) expect([u, isLoopbackUrl(u)]).toEqual([u, true]);
    for (const u of ['http://192.168.1.20:5177/w', 'http://10.0.0.2/', 'http://lab.example:80/', 'http://1270.0.0.1/', 'not a url']) expect([u, isLoopbackUrl(u)]).toEqual([u, false]);
  });
});

describe('the reveal links the runs a step wrote to their traces (it could not open them)', () => {
  it('pairs each run with its experiment, the longest id its run id starts with, and drops runs of no listed experiment', () => {
    expect(revealTraces({ experimentIds: ['exp-a', 'exp-a-2'], runIds: ['exp-a/0', 'exp-a-2/1', 'exp-b/0'] })).toEqual([
      { runId: 'exp-a/0', experimentId: 'exp-a', hash: '#/trace/exp-a/exp-a%2F0' },
      { runId: 'exp-a-2/1', experimentId: 'exp-a-2', hash: '#/trace/exp-a-2/exp-a-2%2F1' },
    ]);
    expect(revealTraces({ experimentIds: ['exp-a'], runIds: [] })).toEqual([]);
  });
});
