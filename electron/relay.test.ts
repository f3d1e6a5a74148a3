import { describe, expect, it } from 'vitest';
import { ApiError, createHandlers, createRemoteApi, EVENT_CHANNEL, type LabEvent, type LabHost } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { createDesktopApi, type IpcRendererLike } from './desktopApi.ts';
import { registerIpc, type IpcInvokeEventLike, type IpcMainLike } from './ipc.ts';
import { createLabRelay, serveLab, type FromWorker, type ToWorker, type WorkerConfig, type WorkerLab, type WorkerLink } from './relay.ts';

const CONFIG: WorkerConfig = { dbFile: '/data/flowlab.db', modelDir: '/data/models', examplesDir: '/app/examples' };

/** Lets queued message deliveries run. */
const tick = () => new Promise((r) => setTimeout(r, 0));

/**
 * An in-memory utility process: messages cross as structured clones, asynchronously, like
 * `child.postMessage` / `process.parentPort`. `createLab` builds the worker's lab on `init`.
 */
class FakeWorker implements WorkerLink {
  readonly toWorker: ToWorker[] = [];
  readonly fromWorker: FromWorker[] = [];
  exitCode: number | undefined;
  killed = false;
  private mainListener?: (m: unknown) => void;
  private exitListener?: (code: number) => void;
  private workerListener?: (m: unknown) => void;

  constructor(createLab: (config: WorkerConfig, emit: (e: LabEvent) => void) => WorkerLab) {
    serveLab(
      {
        postMessage: (m) => {
          if (this.exitCode !== undefined) return;
          this.fromWorker.push(m);
          const copy = structuredClone(m);
          setTimeout(() => this.mainListener?.(copy), 0);
        },
        onMessage: (l) => (this.workerListener = l),
      },
      createLab,
      (code) => this.exit(code),
    );
  }
  postMessage(message: ToWorker): void {
    if (this.exitCode !== undefined) return;
    this.toWorker.push(message);
    const copy = structuredClone(message);
    setTimeout(() => this.workerListener?.(copy), 0);
  }
  onMessage(listener: (message: unknown) => void): void {
    this.mainListener = listener;
  }
  onExit(listener: (code: number) => void): void {
    this.exitListener = listener;
  }
  kill(): void {
    this.killed = true;
    this.exit(15);
  }
  /** The process ends (crash, kill or a clean exit). */
  exit(code: number): void {
    if (this.exitCode !== undefined) return;
    this.exitCode = code;
    setTimeout(() => this.exitListener?.(code), 0);
  }
  /** Pushes a raw message to main as if the worker had sent it. */
  inject(message: unknown): void {
    setTimeout(() => this.mainListener?.(message), 0);
  }
}

/** A worker-side lab that records calls; `emit` is captured so tests can push events. */
function fakeWorkerLab(over: Partial<LabHost> = {}) {
  const calls: [string, unknown][] = [];
  const configs: WorkerConfig[] = [];
  let emit: (e: LabEvent) => void = () => {};
  let disposed = 0;
  const host: LabHost = {
    listExamples: () => [],
    listDatasets: () => [{ name: 'gsm8k', splits: ['test'], describe: 'math', available: true }],
    listModels: async () => [],
    addModel: async ({ path }) => ({ path, fileName: 'a.gguf', sizeBytes: 3, source: 'added' }),
    testModel: async () => ({ text: 'x', promptTokens: 1, completionTokens: 1, ms: 1 }),
    startRun: async (req) => {
      calls.push(['startRun', req]);
      emit({ type: 'experiment', experimentId: 'exp-w', status: 'running', done: 0, total: req.limit });
      return { experimentId: 'exp-w' };
    },
    cancelRun: ({ experimentId }) => ({ cancelled: experimentId === 'exp-w' }),
    activeRuns: () => [{ experimentId: 'exp-w', done: 0, total: 2, startedAt: 1 }],
    ...over,
  };
  return {
    calls,
    configs,
    get disposed() {
      return disposed;
    },
    emit: (e: LabEvent) => emit(e),
    create: (config: WorkerConfig, e: (ev: LabEvent) => void): WorkerLab => {
      configs.push(config);
      emit = e;
      return { host, dispose: async () => void disposed++ };
    },
  };
}

function setup(over: Partial<LabHost> = {}, createLab?: (config: WorkerConfig, emit: (e: LabEvent) => void) => WorkerLab) {
  const lab = fakeWorkerLab(over);
  const workers: FakeWorker[] = [];
  const events: LabEvent[] = [];
  const exits: number[] = [];
  const logs: string[] = [];
  const relay = createLabRelay({
    spawn: () => {
      const w = new FakeWorker(createLab ?? lab.create);
      workers.push(w);
      return w;
    },
    config: CONFIG,
    onEvent: (e) => events.push(e),
    onUnexpectedExit: (code) => exits.push(code),
    log: (l) => logs.push(l),
  });
  return { lab, workers, events, exits, logs, relay };
}

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(() => new Error('expected a rejection'), (e: unknown) => e);
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

const RUN = { workflowText: 'name: x\n', dataset: 'gsm8k', split: 'test', limit: 2, seed: 0, models: { default: '/m.gguf' } };

describe('the lab relay (main <-> utility process)', () => {
  it('starts one worker lazily with its config and relays calls and results', async () => {
    const { relay, workers, lab } = setup();
    expect(workers).toHaveLength(0);
    await expect(relay.listDatasets()).resolves.toEqual([{ name: 'gsm8k', splits: ['test'], describe: 'math', available: true }]);
    await expect(relay.startRun(RUN)).resolves.toEqual({ experimentId: 'exp-w' });
    await expect(relay.cancelRun({ experimentId: 'exp-w' })).resolves.toEqual({ cancelled: true });
    await expect(relay.activeRuns()).resolves.toEqual([{ experimentId: 'exp-w', done: 0, total: 2, startedAt: 1 }]);
    expect(workers).toHaveLength(1);
    expect(lab.configs).toEqual([CONFIG]);
    expect(workers[0]!.toWorker[0]).toEqual({ kind: 'init', config: CONFIG });
    expect(workers[0]!.toWorker.slice(1).map((m) => m.kind === 'call' && m.method)).toEqual(['listDatasets', 'startRun', 'cancelRun', 'activeRuns']);
    expect(lab.calls).toEqual([['startRun', RUN]]);
  });

  it('answers concurrent calls each with its own result', async () => {
    const { relay } = setup({ addModel: async ({ path }) => { await new Promise((r) => setTimeout(r, path.length)); return { path, fileName: path, sizeBytes: 0, source: 'added' }; } });
    const results = await Promise.all(['/aaaa.gguf', '/b.gguf', '/cc.gguf'].map((p) => relay.addModel({ path: p })));
    expect(results.map((r) => r.path)).toEqual(['/aaaa.gguf', '/b.gguf', '/cc.gguf']);
  });

  it("rebuilds the worker's errors as ApiErrors with code, method and field", async () => {
    const { relay } = setup({
      startRun: async () => {
        throw new ApiError('BAD_REQUEST', 'startRun: Model file not found: /m.gguf', 'startRun', 'models.default');
      },
      listModels: () => {
        throw new TypeError('header parser crashed');
      },
    });
    expect((await rejection(Promise.resolve(relay.startRun(RUN)))).toData()).toEqual({ code: 'BAD_REQUEST', message: 'startRun: Model file not found: /m.gguf', method: 'startRun', field: 'models.default' });
    expect((await rejection(Promise.resolve(relay.listModels()))).toData()).toEqual({ code: 'INTERNAL', message: 'listModels: header parser crashed', method: 'listModels' });
  });

  it('forwards well-formed events and drops malformed ones', async () => {
    const { relay, workers, events, logs, lab } = setup();
    await relay.startRun(RUN);
    await tick();
    lab.emit({ type: 'run', experimentId: 'exp-w', runId: 'exp-w/0', taskIndex: 0, done: 1, total: 2, status: 'completed', correct: true });
    workers[0]!.inject({ kind: 'event', event: { type: 'run', experimentId: 'exp-w' } });
    workers[0]!.inject('junk');
    workers[0]!.inject({ kind: 'result', id: 999, ok: true, result: 1 });
    await tick();
    await tick();
    expect(events).toEqual([
      { type: 'experiment', experimentId: 'exp-w', status: 'running', done: 0, total: 2 },
      { type: 'run', experimentId: 'exp-w', runId: 'exp-w/0', taskIndex: 0, done: 1, total: 2, status: 'completed', correct: true },
    ]);
    expect(logs).toEqual([
      expect.stringContaining('malformed event'),
      expect.stringContaining('malformed message'),
      expect.stringContaining('answer to unknown call 999'),
    ]);
  });

  it('a crashed worker: calls in flight are UNAVAILABLE, running experiments reported failed, the next call starts a new worker', async () => {
    let hold!: () => void;
    const { relay, workers, events, exits } = setup({ testModel: () => new Promise((r) => (hold = () => r({ text: '', promptTokens: 0, completionTokens: 0, ms: 0 }))) });
    await relay.startRun(RUN);
    await tick();
    const inFlight = relay.testModel({ path: '/m.gguf', prompt: 'x' });
    await tick();
    workers[0]!.exit(139);
    const err = await rejection(Promise.resolve(inFlight));
    expect([err.code, err.message]).toEqual(['UNAVAILABLE', 'testModel: the lab worker stopped (exit code 139); try again']);
    expect(events.at(-1)).toEqual({ type: 'experiment', experimentId: 'exp-w', status: 'failed', done: 0, total: 2, message: 'the lab worker stopped (exit code 139); resume the experiment to finish it' });
    expect(exits).toEqual([139]);
    hold();
    await expect(relay.listDatasets()).resolves.toHaveLength(1);
    expect(workers).toHaveLength(2);
  });

  it('a worker that cannot open its lab answers every call UNAVAILABLE with the reason', async () => {
    const { relay } = setup({}, () => {
      throw new Error('cannot open database /data/flowlab.db: disk I/O error');
    });
    const err = await rejection(Promise.resolve(relay.listExamples()));
    expect(err.code).toBe('UNAVAILABLE');
    expect(err.message).toContain('cannot open database /data/flowlab.db: disk I/O error');
  });

  it('stop(): the worker disposes its lab and exits; later calls start a fresh one', async () => {
    const { relay, workers, lab, exits } = setup();
    await relay.listExamples();
    await relay.stop();
    expect(lab.disposed).toBe(1);
    expect(workers[0]!.exitCode).toBe(0);
    expect(workers[0]!.fromWorker.at(-1)).toEqual({ kind: 'stopped' });
    expect(exits).toEqual([]);
    await relay.stop(); // nothing running: resolves at once
    await relay.listExamples();
    expect(workers).toHaveLength(2);
  });

  it('stop() kills a worker that does not answer in time', async () => {
    const { relay, workers } = setup({}, () => ({ host: fakeWorkerLab().create(CONFIG, () => {}).host, dispose: () => new Promise(() => {}) }));
    await relay.listExamples();
    await relay.stop(20);
    expect(workers[0]!.killed).toBe(true);
  });

  it('end to end: renderer -> preload -> ipcMain -> handlers -> relay -> worker, and events back to the renderer', async () => {
    const store: Store = openStore(':memory:');
    try {
      const lab = fakeWorkerLab();
      // The renderer side of IPC: `invoke` reaches ipcMain's handlers; main's `send` reaches `on` listeners.
      const handlers = new Map<string, (e: IpcInvokeEventLike, ...a: unknown[]) => unknown>();
      const rendererListeners = new Map<string, Set<(e: unknown, ...a: unknown[]) => void>>();
      const ipcRenderer: IpcRendererLike = {
        invoke: async (channel, payload) => handlers.get(channel)!({ senderFrame: { url: 'file:///app/index.html' } }, structuredClone(payload)),
        on: (c, l) => void (rendererListeners.get(c) ?? rendererListeners.set(c, new Set()).get(c)!).add(l),
        removeListener: (c, l) => void rendererListeners.get(c)?.delete(l),
      };
      const send = (channel: string, data: unknown) => rendererListeners.get(channel)?.forEach((l) => l({}, structuredClone(data)));
      // main: handlers over its store with the relay as the lab; events forwarded as main.ts does
      // (webContents.send(EVENT_CHANNEL, e)).
      const relay = createLabRelay({ spawn: () => new FakeWorker(lab.create), config: CONFIG, onEvent: (e) => send(EVENT_CHANNEL, e) });
      const ipcMain: IpcMainLike = { handle: (c, l) => void handlers.set(c, l), removeHandler: (c) => void handlers.delete(c) };
      registerIpc(ipcMain, createHandlers({ store, version: '1', lab: relay }));
      // the preload
      const desktop = createDesktopApi(ipcRenderer);
      const seen: LabEvent[] = [];
      const off = desktop.onEvent((e) => seen.push(e));

      await expect(desktop.startRun(RUN)).resolves.toEqual({ experimentId: 'exp-w' });
      await tick();
      expect(seen).toEqual([{ type: 'experiment', experimentId: 'exp-w', status: 'running', done: 0, total: 2 }]);
      // A malformed payload is refused in main; the worker never sees it.
      await expect(desktop.startRun({ ...RUN, limit: 0 })).rejects.toThrow('startRun: payload field "limit": must be at least 1 [BAD_REQUEST limit]');
      expect(lab.calls).toHaveLength(1);
      // A malformed push is dropped by the preload.
      send(EVENT_CHANNEL, { type: 'experiment', experimentId: 'exp-w' });
      off();
      off();
      lab.emit({ type: 'experiment', experimentId: 'exp-w', status: 'completed', done: 2, total: 2 });
      await tick();
      await tick();
      expect(seen).toHaveLength(1);
      expect(rendererListeners.get(EVENT_CHANNEL)?.size).toBe(0);
      await relay.stop();
    } finally {
      store.close();
    }
  });
});

describe('createDesktopApi (the preload)', () => {
  it('exposes every API method plus onEvent, frozen', () => {
    const api = createDesktopApi({ invoke: async () => null, on: () => {}, removeListener: () => {} });
    expect(Object.isFrozen(api)).toBe(true);
    expect(typeof api.onEvent).toBe('function');
    expect(Object.keys(api)).toEqual([...Object.keys(createRemoteApi(async () => null)), 'onEvent']);
    expect(() => api.onEvent(42 as never)).toThrow('onEvent takes a listener function');
  });

  it("strips Electron's invoke prefix from errors", async () => {
    const api = createDesktopApi({
      invoke: async () => {
        throw new Error("Error invoking remote method 'flowlab:listModels': Error: listModels: boom [INTERNAL]");
      },
      on: () => {},
      removeListener: () => {},
    });
    await expect(api.listModels()).rejects.toThrow(/^listModels: boom \[INTERNAL\]$/);
  });
});
