import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers, createRemoteApi, type LabEvent } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { createEventHub, startLabServer, type EventHub, type LabServer } from '../host/index.ts';
import { createApiClient, createEventSourceSubscribe, createHttpInvoke, createPreloadSubscribe, pageToken, subscribe, type EventSourceLike } from './api.ts';

describe('the HTTP transport against flowlab serve', () => {
  let store: Store;
  let server: LabServer;
  let hub: EventHub;
  beforeEach(async () => {
    store = openStore(':memory:');
    hub = createEventHub();
    server = await startLabServer({ api: createHandlers({ store, version: '3.1.4' }), subscribe: hub.subscribe, rendererDir: '/nonexistent', token: 'tok' });
  });
  afterEach(async () => {
    await server.close();
    store.close();
  });

  it('calls the API with the token and returns results', async () => {
    const api = createApiClient(createRemoteApi(createHttpInvoke('tok', { baseUrl: `http://127.0.0.1:${server.port}` })));
    await expect(api.appInfo()).resolves.toEqual({ version: '3.1.4', dbFile: ':memory:' });
    await expect(api.listExperiments()).resolves.toEqual([]);
    const res = await api.validateWorkflow({ text: 'name: x\n' });
    expect(res.ok).toBe(false);
  });

  it('rebuilds API errors with code, method and field', async () => {
    const api = createApiClient(createRemoteApi(createHttpInvoke('tok', { baseUrl: `http://127.0.0.1:${server.port}` })));
    const err = await api.listRuns({ experimentId: 42 as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toData()).toEqual({ code: 'BAD_REQUEST', message: 'listRuns: payload field "experimentId": expected string, received number', method: 'listRuns', field: 'experimentId' });
    const noLab = await api.listModels().catch((e: unknown) => e);
    expect(noLab).toMatchObject({ code: 'UNAVAILABLE', method: 'listModels' });
  });

  it('a wrong token is FORBIDDEN; an unreachable server UNAVAILABLE', async () => {
    const wrong = createApiClient(createRemoteApi(createHttpInvoke('nope', { baseUrl: `http://127.0.0.1:${server.port}` })));
    await expect(wrong.appInfo()).rejects.toMatchObject({ code: 'FORBIDDEN', message: expect.stringContaining('appInfo: missing or wrong session token') });
    const gone = createApiClient(createRemoteApi(createHttpInvoke('tok', { baseUrl: 'http://127.0.0.1:1' })));
    await expect(gone.appInfo()).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('is `flowlab serve` still running?') });
  });
});

describe('event subscriptions', () => {
  class FakeSource implements EventSourceLike {
    static opened: FakeSource[] = [];
    onmessage: ((event: MessageEvent) => void) | null = null;
    closed = false;
    constructor(readonly url: string) {
      FakeSource.opened.push(this);
    }
    close() {
      this.closed = true;
    }
    push(data: string) {
      this.onmessage?.({ data } as MessageEvent);
    }
  }
  const ev: LabEvent = { type: 'run', experimentId: 'e', runId: 'e/0', taskIndex: 0, done: 1, total: 1, status: 'completed', correct: true };

  it('shares one EventSource among listeners, drops malformed events, closes with the last listener', () => {
    FakeSource.opened = [];
    const sub = createEventSourceSubscribe('/api/events?token=t', (u) => new FakeSource(u));
    const a: LabEvent[] = [];
    const b: LabEvent[] = [];
    const offA = sub((e) => a.push(e));
    const offB = sub((e) => b.push(e));
    expect(FakeSource.opened.map((s) => s.url)).toEqual(['/api/events?token=t']);
    const src = FakeSource.opened[0]!;
    src.push(JSON.stringify(ev));
    src.push('not json');
    src.push(JSON.stringify({ type: 'run' }));
    offA();
    src.push(JSON.stringify(ev));
    expect([a.length, b.length]).toEqual([1, 2]);
    expect(src.closed).toBe(false);
    offB();
    expect(src.closed).toBe(true);
    sub(() => {});
    expect(FakeSource.opened).toHaveLength(2);
  });

  it('checks events from the preload too', () => {
    let deliver: (e: LabEvent) => void = () => {};
    const sub = createPreloadSubscribe((l) => ((deliver = l), () => {}));
    const got: LabEvent[] = [];
    sub((e) => got.push(e));
    deliver(ev);
    deliver({ type: 'bogus' } as never);
    expect(got).toEqual([ev]);
  });

  it('outside a browser nothing is delivered and the client says how to open the lab', async () => {
    expect(typeof subscribe(() => {})).toBe('function');
    await expect(createApiClient().appInfo()).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('`flowlab serve`') });
  });

  it('reads the token from the page URL', () => {
    expect(pageToken('?token=abc')).toBe('abc');
    expect(pageToken('?x=1')).toBeUndefined();
    expect(pageToken('')).toBeUndefined();
  });
});
