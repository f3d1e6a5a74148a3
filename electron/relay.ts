/**
 * The relay between Electron main and the lab's utility process (electron/worker.ts): main keeps the
 * window, the IPC handlers and quick store reads; the utility process (electron/worker.ts) owns
 * its own store connection and the `LabHost` (runner, models, examples, datasets). Main forwards
 * the lab methods to it as messages and receives results and pushed `LabEvent`s back.
 *
 * No Electron import: both ends take a small message-port shape, so tests wire them together in
 * memory. Main builds its `WorkerLink` from `utilityProcess.fork`; the worker builds its
 * `ParentLink` from `process.parentPort`.
 *
 * Protocol (structured-clone data):
 *   main -> worker  {kind:'init', config} once, then {kind:'call', id, method, payload} and
 *                   finally {kind:'shutdown'};
 *   worker -> main  {kind:'ready'} | {kind:'fatal', message} | {kind:'result', id, ok:true, result}
 *                   | {kind:'result', id, ok:false, error: ApiErrorData} | {kind:'event', event}
 *                   | {kind:'stopped'}.
 */
import {
  ApiError,
  isLabEvent,
  isLabMethod,
  LAB_METHODS,
  toApiError,
  type ApiErrorData,
  type JobEvent,
  type LabEvent,
  type LabHost,
  type LabMethod,
} from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';

/** What the worker needs to build its lab host. Paths are absolute. */
export interface WorkerConfig {
  /** The SQLite database (the worker opens its own connection). */
  dbFile: string;
  /** The model folder (`<userData>/models` unless `FLOWLAB_MODELS` is set). */
  modelDir: string;
  /** The app's `examples/` folder. */
  examplesDir: string;
  /** The shared folder whose `data/` holds the datasets; absent: core's default. */
  sharedDir?: string;
  /** The user data folder: its `datasets/` holds the datasets when no shared folder is named or found. */
  userDataDir?: string;
  /** The Electron build of better-sqlite3's addon to open the store with (electron/native.ts); absent: the package's own. */
  sqliteBinding?: string;
}

/** Messages from main to the worker. */
export type ToWorker =
  | { kind: 'init'; config: WorkerConfig }
  | { kind: 'call'; id: number; method: LabMethod; payload: unknown }
  | { kind: 'shutdown' };

/** Messages from the worker to main. */
export type FromWorker =
  | { kind: 'ready' }
  | { kind: 'fatal'; message: string }
  | { kind: 'result'; id: number; ok: true; result: unknown }
  | { kind: 'result'; id: number; ok: false; error: ApiErrorData }
  | { kind: 'event'; event: LabEvent }
  | { kind: 'stopped' };

/** Main's handle on one worker process (built from `utilityProcess.fork`'s child). */
export interface WorkerLink {
  postMessage(message: ToWorker): void;
  /** Registers the listener of the worker's messages (called once per link). */
  onMessage(listener: (message: unknown) => void): void;
  /** Registers the listener of the worker's exit (called once per link). */
  onExit(listener: (code: number) => void): void;
  /** Ends the worker at once. */
  kill(): void;
}

/** Options of {@link createLabRelay}. */
export interface LabRelayOptions {
  /** Starts a worker. Called on `start()` or the first call, and again after a worker died. */
  spawn: () => WorkerLink;
  /** Sent to each new worker in its `init` message. */
  config: WorkerConfig;
  /** Receives every well-formed LabEvent the worker pushes (main sends them to the window). */
  onEvent: (event: LabEvent) => void;
  /**
   * Called when a worker exits without being asked to (after pending calls were rejected and
   * `failed` events emitted for its running jobs, experiments and train loops). Main marks the store's orphaned
   * experiments interrupted here.
   */
  onUnexpectedExit?: (code: number) => void;
  /** Diagnostics (worker start failures, malformed messages). Default: nothing. */
  log?: (line: string) => void;
}

/** The lab host as main sees it: every method is a message to the worker. */
export interface LabRelay extends LabHost {
  /** Starts the worker now (otherwise the first call does). */
  start(): void;
  /**
   * Asks the worker to cancel its runs (they stay resumable) and close its store, and resolves
   * when it has exited; kills it after `timeoutMs` (default 5000). Later calls start a new one.
   */
  stop(timeoutMs?: number): Promise<void>;
}

interface Pending {
  method: LabMethod;
  resolve: (value: unknown) => void;
  reject: (error: ApiError) => void;
}

/**
 * Main's side of the relay: a `LabHost` whose methods post `call` messages to the worker and
 * resolve with its answers (rejecting with the worker's ApiError, rebuilt with code, method and
 * field). A worker that dies rejects the calls in flight with `UNAVAILABLE` and reports its
 * running experiments as `failed`; the next call starts a fresh worker.
 */
export function createLabRelay(options: LabRelayOptions): LabRelay {
  const log = options.log ?? (() => {});
  const pending = new Map<number, Pending>();
  /** Experiments the current worker reported running. */
  const running = new Map<string, { done: number; total: number }>();
  /** Train loops the current worker reported running. */
  const loops = new Map<string, { roles: string[]; done: number; iterations: number }>();
  /** Jobs of every family the current worker reported running (the one `job` event), by `<kind>:<id>`. */
  const jobs = new Map<string, JobEvent>();
  let nextId = 1;
  let link: WorkerLink | undefined;
  let stopping: { done: Promise<void>; resolve: () => void } | undefined;

  const failPending = (message: (method: LabMethod) => string) => {
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(new ApiError('UNAVAILABLE', message(p.method), p.method));
    }
  };

  const onMessage = (own: WorkerLink, raw: unknown) => {
    if (own !== link) return; // a message from a worker already replaced
    const msg = raw as Partial<FromWorker> | null;
    if (!msg || typeof msg !== 'object') return log(`lab worker: malformed message ${describe(raw)}`);
    switch (msg.kind) {
      case 'result': {
        const m = msg as Extract<FromWorker, { kind: 'result' }>;
        const p = pending.get(m.id);
        if (!p) return log(`lab worker: answer to unknown call ${describe(m.id)}`);
        pending.delete(m.id);
        if (m.ok === true) p.resolve(m.result);
        else p.reject(ApiError.fromData(m.error));
        return;
      }
      case 'event': {
        const event = (msg as { event?: unknown }).event;
        if (!isLabEvent(event)) return log(`lab worker: malformed event ${describe(event)}`);
        if (event.type === 'experiment') {
          if (event.status === 'running') running.set(event.experimentId, { done: event.done, total: event.total });
          else running.delete(event.experimentId);
        } else if (event.type === 'run') {
          const r = running.get(event.experimentId);
          if (r) r.done = event.done;
        } else if (event.type === 'trainLoop') {
          if (event.status === 'running') loops.set(event.loopId, { roles: event.roles, done: event.done, iterations: event.iterations });
          else loops.delete(event.loopId);
        } else if (event.type === 'trainIteration') {
          const l = loops.get(event.loopId);
          if (l) l.done = event.iteration;
        } else if (event.type === 'job') {
          if (event.status === 'running') jobs.set(`${event.kind}:${event.id}`, event);
          else jobs.delete(`${event.kind}:${event.id}`);
        }
        options.onEvent(event);
        return;
      }
      case 'fatal': {
        const message = typeof (msg as { message?: unknown }).message === 'string' ? (msg as { message: string }).message : 'unknown error';
        log(`lab worker could not start: ${message}`);
        failPending((method) => `${method}: the lab could not start: ${message}`);
        return;
      }
      case 'ready':
      case 'stopped':
        return;
      default:
        return log(`lab worker: unknown message ${describe(raw)}`);
    }
  };

  const onExit = (own: WorkerLink, code: number) => {
    if (own !== link) return;
    link = undefined;
    if (stopping) {
      failPending((method) => `${method}: the lab is shutting down`);
      running.clear();
      loops.clear();
      jobs.clear();
      stopping.resolve();
      return;
    }
    log(`lab worker exited unexpectedly (code ${code})`);
    failPending((method) => `${method}: the lab worker stopped (exit code ${code}); try again`);
    for (const j of jobs.values()) options.onEvent({ ...j, status: 'failed', message: `the lab worker stopped (exit code ${code})` });
    jobs.clear();
    for (const [experimentId, r] of running) {
      options.onEvent({ type: 'experiment', experimentId, status: 'failed', done: r.done, total: r.total, message: `the lab worker stopped (exit code ${code}); resume the experiment to finish it` });
    }
    running.clear();
    for (const [loopId, l] of loops) {
      options.onEvent({ type: 'trainLoop', loopId, status: 'failed', ...l, message: `the lab worker stopped (exit code ${code}); the versions written so far are recorded` });
    }
    loops.clear();
    options.onUnexpectedExit?.(code);
  };

  const ensure = (): WorkerLink => {
    if (link) return link;
    const own = options.spawn();
    link = own;
    own.onMessage((m) => onMessage(own, m));
    own.onExit((code) => onExit(own, code));
    own.postMessage({ kind: 'init', config: options.config });
    return own;
  };

  const call = (method: LabMethod, payload?: unknown): Promise<never> => {
    if (stopping) return Promise.reject(new ApiError('UNAVAILABLE', `${method}: the lab is shutting down`, method));
    let target: WorkerLink;
    try {
      target = ensure();
    } catch (err) {
      return Promise.reject(new ApiError('UNAVAILABLE', `${method}: the lab worker cannot start: ${errorMessage(err)}`, method, undefined, { cause: err }));
    }
    const id = nextId++;
    return new Promise<never>((resolve, reject) => {
      pending.set(id, { method, resolve: resolve as (v: unknown) => void, reject });
      target.postMessage({ kind: 'call', id, method, payload });
    });
  };

  const relay = {} as Record<LabMethod, (payload?: unknown) => Promise<never>>;
  for (const method of LAB_METHODS) relay[method] = (payload?: unknown) => call(method, payload);

  return {
    ...(relay as unknown as LabHost),
    start() {
      ensure();
    },
    stop(timeoutMs = 5000) {
      const current = link;
      if (!current) return Promise.resolve();
      if (stopping) return stopping.done;
      let resolve!: () => void;
      const done = new Promise<void>((r) => (resolve = r));
      stopping = { done, resolve };
      const timer = setTimeout(() => current.kill(), timeoutMs);
      current.postMessage({ kind: 'shutdown' });
      return done.finally(() => {
        clearTimeout(timer);
        stopping = undefined;
      });
    },
  };
}

/** The worker's handle on main (built from `process.parentPort`). */
export interface ParentLink {
  postMessage(message: FromWorker): void;
  onMessage(listener: (message: unknown) => void): void;
}

/** A started lab inside the worker. */
export interface WorkerLab {
  host: LabHost;
  /** Cancels running experiments and closes the store. */
  dispose(): Promise<void>;
}

/**
 * The worker's side: builds the lab on `init` (a failure is reported as `fatal`), answers each
 * `call` with a `result` (errors as ApiError data via `toApiError`), forwards the lab's events,
 * and on `shutdown` disposes the lab, posts `stopped` and calls `exit(0)`.
 * Payloads are not validated again here: main's handlers did it before relaying.
 */
export function serveLab(
  parent: ParentLink,
  createLab: (config: WorkerConfig, emit: (event: LabEvent) => void) => WorkerLab,
  exit: (code: number) => void,
): void {
  let lab: WorkerLab | undefined;
  let initError: string | undefined;
  const emit = (event: LabEvent) => parent.postMessage({ kind: 'event', event });

  parent.onMessage((raw) => {
    const msg = raw as Partial<ToWorker> | null;
    if (!msg || typeof msg !== 'object') return;
    if (msg.kind === 'init') {
      try {
        lab = createLab((msg as { config: WorkerConfig }).config, emit);
        parent.postMessage({ kind: 'ready' });
      } catch (err) {
        initError = errorMessage(err);
        parent.postMessage({ kind: 'fatal', message: initError });
      }
      return;
    }
    if (msg.kind === 'call') {
      const { id, method, payload } = msg as { id: number; method: unknown; payload: unknown };
      const answer = (p: Promise<unknown>) =>
        p.then(
          (result) => parent.postMessage({ kind: 'result', id, ok: true, result }),
          (err: unknown) => parent.postMessage({ kind: 'result', id, ok: false, error: toApiError(err, String(method)).toData() }),
        );
      if (!isLabMethod(method)) {
        void answer(Promise.reject(new ApiError('NOT_FOUND', `unknown lab method "${String(method)}"`)));
        return;
      }
      const current = lab;
      if (!current) {
        void answer(Promise.reject(new ApiError('UNAVAILABLE', `${method}: the lab could not start: ${initError ?? 'not initialised'}`, method)));
        return;
      }
      void answer(Promise.resolve().then(() => (current.host[method] as (p: unknown) => unknown)(payload)));
      return;
    }
    if (msg.kind === 'shutdown') {
      const current = lab;
      lab = undefined;
      initError = 'the lab is shutting down';
      void (current ? current.dispose() : Promise.resolve())
        .catch(() => {})
        .then(() => {
          parent.postMessage({ kind: 'stopped' });
          exit(0);
        });
    }
  });
}

function describe(v: unknown): string {
  try {
    return (JSON.stringify(v) ?? String(v)).slice(0, 200);
  } catch {
    return String(v);
  }
}
