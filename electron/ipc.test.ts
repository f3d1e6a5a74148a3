import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, API_CHANNELS, createHandlers, createRemoteApi, type FlowlabApi } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { registerIpc, type IpcInvokeEventLike, type IpcMainLike } from './ipc.ts';

type Listener = (event: IpcInvokeEventLike, ...args: unknown[]) => unknown;

/** A fake ipcMain that records listeners and lets a test invoke them like a renderer would. */
class FakeIpcMain implements IpcMainLike {
  readonly listeners = new Map<string, Listener>();
  handle(channel: string, listener: Listener): void {
    if (this.listeners.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.listeners.set(channel, listener);
  }
  removeHandler(channel: string): void {
    this.listeners.delete(channel);
  }
  /** Calls a channel as `ipcRenderer.invoke(channel, payload)` would, from `url`. */
  async invoke(channel: string, payload?: unknown, url = 'file:///app/out/renderer/index.html'): Promise<unknown> {
    const listener = this.listeners.get(channel);
    if (!listener) throw new Error(`No handler registered for '${channel}'`);
    return listener({ senderFrame: { url } }, payload);
  }
}

const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function realHandlers(): FlowlabApi {
  const store = openStore(':memory:');
  stores.push(store);
  return createHandlers({ store, version: '1.2.3' });
}

describe('registerIpc', () => {
  it('registers exactly the allowlisted channels, nothing else the handlers carry', () => {
    const ipc = new FakeIpcMain();
    const handlers = Object.assign(realHandlers(), { dropTables: () => 'boom' });
    registerIpc(ipc, handlers);
    expect([...ipc.listeners.keys()]).toEqual([...API_CHANNELS]);
    expect(ipc.listeners.has('flowlab:dropTables')).toBe(false);
    expect(ipc.listeners.has('dropTables')).toBe(false);
  });

  it('passes payloads to handlers untouched and resolves with their results', async () => {
    const ipc = new FakeIpcMain();
    const seen: unknown[] = [];
    const base = realHandlers();
    const spy: FlowlabApi = {
      ...base,
      listRuns: (payload) => {
        seen.push(payload);
        return [];
      },
    };
    registerIpc(ipc, spy);
    const payload = { experimentId: 'exp-1' };
    await expect(ipc.invoke('flowlab:listRuns', payload)).resolves.toEqual([]);
    expect(seen).toEqual([payload]);
    expect(seen[0]).toBe(payload);
    await expect(ipc.invoke('flowlab:appInfo')).resolves.toEqual({ version: '1.2.3', dbFile: ':memory:' });
  });

  it('turns a handler error into a rejected promise carrying the ApiError message and code', async () => {
    const ipc = new FakeIpcMain();
    const logged: [string, string][] = [];
    registerIpc(ipc, realHandlers(), { onError: (e, channel) => logged.push([e.code, channel]) });

    const bad = ipc.invoke('flowlab:listRuns', { experimentId: 42 });
    await expect(bad).rejects.toThrow('listRuns: payload field "experimentId": expected string, received number [BAD_REQUEST experimentId]');
    expect(ApiError.fromWire(await bad.catch((e: unknown) => e))).toMatchObject({ code: 'BAD_REQUEST', method: 'listRuns', field: 'experimentId' });
    const missing = await ipc.invoke('flowlab:getExperiment', { id: 'nope' }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(Error);
    expect(ApiError.fromWire(missing)).toMatchObject({ code: 'NOT_FOUND', method: 'getExperiment' });
    expect(logged).toEqual([
      ['BAD_REQUEST', 'flowlab:listRuns'],
      ['NOT_FOUND', 'flowlab:getExperiment'],
    ]);
  });

  it('wraps a non-API failure as INTERNAL, naming the method', async () => {
    const ipc = new FakeIpcMain();
    registerIpc(ipc, { ...realHandlers(), appInfo: () => { throw new TypeError('disk on fire'); } });
    await expect(ipc.invoke('flowlab:appInfo')).rejects.toThrow('appInfo: disk on fire [INTERNAL]');
  });

  it('refuses calls from untrusted frames before the handler runs', async () => {
    const ipc = new FakeIpcMain();
    let called = false;
    registerIpc(ipc, { ...realHandlers(), listExperiments: () => ((called = true), []) }, {
      isTrustedSender: (e) => e.senderFrame?.url.startsWith('file://') ?? false,
    });
    await expect(ipc.invoke('flowlab:listExperiments', undefined, 'https://evil.example/')).rejects.toThrow(/\[FORBIDDEN\]$/);
    expect(called).toBe(false);
    await expect(ipc.invoke('flowlab:listExperiments')).resolves.toEqual([]);
    expect(called).toBe(true);
  });

  it('removes its listeners when disposed', () => {
    const ipc = new FakeIpcMain();
    const dispose = registerIpc(ipc, realHandlers());
    dispose();
    expect(ipc.listeners.size).toBe(0);
    dispose(); // idempotent
  });

  it('works end to end with the remote client a preload builds', async () => {
    const ipc = new FakeIpcMain();
    registerIpc(ipc, realHandlers());
    const client = createRemoteApi((method, payload) => ipc.invoke(`flowlab:${method}`, payload));
    await expect(client.listExperiments()).resolves.toEqual([]);
    const res = await client.validateWorkflow({ text: 'name: x\n' });
    expect(res.ok).toBe(false);
  });
});
