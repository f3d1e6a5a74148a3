import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { SandboxError, checkSandboxRequest, type CodeSandbox, type SandboxRequest, type SandboxResult, type SandboxStatus } from '../../core/sandbox/index.ts';
import { WORKER_SOURCE } from './workerSource.ts';
import { defaultSandboxLauncher, outsideAsar, type SandboxChild, type SandboxLauncher } from './launcher.ts';

/**
 * The isolation layers (docs/sandbox.md). All on by default; switching one off is for measuring
 * what the others stop (bench/sandboxLayers.ts), never for running untrusted code.
 */
export interface SandboxLayers {
  /** Node's permission model: read the pyodide folder only; no writes, child processes, workers, addons. */
  permission: boolean;
  /** V8 `--disallow-code-generation-from-strings`: no `eval` / `Function` in the worker. */
  noCodeGen: boolean;
  /** The worker's socket entry points replaced; `process`, `fetch`, `WebSocket` removed from its globals. */
  jsHardening: boolean;
  /** `jsglobals` an empty object (what `import js` sees) instead of the worker's `globalThis`. */
  emptyJsGlobals: boolean;
  /** `js` and `pyodide_js` unregistered from Pyodide's JsFinder. */
  unregisterJs: boolean;
  /** The Python import guard (js, pyodide*, _pyodide*, ctypes, micropip refused) and those modules purged from sys.modules. */
  importGuard: boolean;
}

/** Every layer on. */
export const ALL_LAYERS: SandboxLayers = { permission: true, noCodeGen: true, jsHardening: true, emptyJsGlobals: true, unregisterJs: true, importGuard: true };

/** Options of `PyodideSandbox`. Every limit is a default for requests that leave it out. */
export interface PyodideSandboxOptions {
  /** Interpreter processes kept warm (each ~60-100 MB resident). Default min(2, CPU count). */
  size?: number;
  /** Default wall-clock limit of a run, ms. Default 10 000. */
  timeoutMs?: number;
  /** Default WebAssembly heap cap, MiB. Default 512. */
  memoryMb?: number;
  /** Default output cap (stdout + stderr), bytes. Default 1 MiB. */
  outputBytes?: number;
  /** A worker whose heap grew past this many MiB is replaced after its run (heaps never shrink). Default 256. */
  recycleHeapMb?: number;
  /** V8 old-space cap of each worker, MiB (`--max-old-space-size`). Default 256. */
  jsHeapMb?: number;
  /** Most ms a worker may take to start and load Pyodide. Default 120 000. */
  startTimeoutMs?: number;
  /** The pyodide package folder. Default: resolved from this module (`pyodide/package.json`). */
  pyodideDir?: string;
  /**
   * Folder caching the interpreter's memory snapshot between processes (`<key>.snapshot`, key =
   * sha256 of the pyodide version, Node version, CPU architecture and the worker program), or false for no file. Default
   * `<os temp>/flowlab-sandbox-<uid>` (made 0700; a file not owned by this user is ignored).
   */
  snapshotDir?: string | false;
  /** Layers to switch off, for measurement only (see `SandboxLayers`). Default: all on. */
  layers?: Partial<SandboxLayers>;
  /**
   * How worker processes start (models/sandbox/launcher.ts). Default: the process-wide default,
   * `child_process.spawn` of Node unless the desktop app set Electron's utility-process one.
   */
  launcher?: SandboxLauncher;
}

/** A started worker process and what the pool knows of it. */
interface Worker {
  child: SandboxChild;
  ready: Promise<void>;
  busy: boolean;
  dead: boolean;
  /** Settles the run in flight, if any. */
  onResult?: (msg: WorkerMessage) => void;
  onExit?: (why: string) => void;
  /** Rejects the run in flight with `CLOSED`. */
  onClose?: () => void;
  stderrTail: string;
  heapMb: number;
}

interface WorkerMessage {
  type: string;
  id?: number;
  status?: SandboxStatus;
  stdout?: string;
  stderr?: string;
  error?: { type: string; message: string };
  heapMb?: number;
  tainted?: boolean;
  loadMs?: number;
  bytes?: Uint8Array;
}

interface Queued {
  req: Required<SandboxRequest>;
  signal?: AbortSignal;
  resolve: (r: SandboxResult) => void;
  reject: (e: unknown) => void;
}

const MB = 1024 * 1024;

/**
 * The folder holding pyodide.mjs and its runtime files, real path (symlinks resolved). In a
 * packaged app the package resolves inside `app.asar`; its files are unpacked beside it
 * (forge.config.ts), and a worker process can read only real files: `app.asar.unpacked`.
 */
export function pyodidePackageDir(): string {
  const require = createRequire(import.meta.url);
  return outsideAsar(fs.realpathSync(path.dirname(require.resolve('pyodide/package.json'))));
}

/**
 * The Node flags of a worker: Node's permission model (`--experimental-permission` before Node
 * 23, `--permission` after) with read access to the pyodide folder only and no write, child
 * process, worker or addon permission; code generation from strings off (`eval`, `Function`);
 * a V8 heap cap. The launcher adds how the program is given (models/sandbox/launcher.ts).
 * Reference: Node.js "Permissions" documentation (process-based permissions).
 */
export function workerArgs(pyodideDir: string, jsHeapMb: number, nodeVersion = process.versions.node, layers: SandboxLayers = ALL_LAYERS): string[] {
  const major = Number(nodeVersion.split('.')[0]);
  return [
    ...(layers.permission ? [major >= 23 ? '--permission' : '--experimental-permission', `--allow-fs-read=${pyodideDir}${path.sep}`] : []),
    ...(layers.noCodeGen ? ['--disallow-code-generation-from-strings'] : []),
    `--max-old-space-size=${jsHeapMb}`,
    '--no-warnings',
  ];
}

/** Resident size of a process in MiB (Linux /proc), or undefined where unknown. */
function residentMb(pid: number | undefined): number | undefined {
  if (pid === undefined || process.platform !== 'linux') return undefined;
  try {
    const pages = Number(fs.readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    return (pages * 4096) / MB;
  } catch {
    return undefined;
  }
}

/**
 * `CodeSandbox` over a warm pool of Pyodide interpreters, each in its own permission-restricted
 * Node process (see `workerArgs` and `WORKER_SOURCE` for the layers). A run goes to an idle
 * worker (or waits for one); past its wall-clock limit the worker is killed (SIGKILL), the run
 * scores `timeout`, and a fresh worker replaces it; a worker that died, grew its heap past
 * `recycleHeapMb`, or whose standard modules a run changed (`tainted`) is replaced too.
 * Workers start on the first run (or `warm()`); `close()` kills them.
 */
export class PyodideSandbox implements CodeSandbox {
  private readonly size: number;
  private readonly defaults: { timeoutMs: number; memoryMb: number; outputBytes: number };
  private readonly recycleHeapMb: number;
  private readonly jsHeapMb: number;
  private readonly startTimeoutMs: number;
  private pyodideDirOpt: string | undefined;
  private readonly workers: Worker[] = [];
  private readonly queue: Queued[] = [];
  private closed = false;
  private nextId = 1;
  private startFailures = 0;
  /** Workers started so far (the first `size` plus replacements). */
  started = 0;
  /** Milliseconds each worker took to load, in ready order. */
  readonly loadMs: number[] = [];
  /** How each worker started, in ready order: `cold` (made the snapshot) or `snapshot`. */
  readonly starts: ('cold' | 'snapshot')[] = [];
  private snapshot: Uint8Array | undefined;
  private snapshotDir: string | false;
  private snapshotBroken = false;
  private pending = 0;
  private keepAlive: ReturnType<typeof setInterval> | undefined;
  private readonly layers: SandboxLayers;
  private readonly launcher: SandboxLauncher;

  constructor(opts: PyodideSandboxOptions = {}) {
    this.size = Math.max(1, opts.size ?? Math.min(2, os.availableParallelism?.() ?? os.cpus().length));
    this.defaults = { timeoutMs: opts.timeoutMs ?? 10_000, memoryMb: opts.memoryMb ?? 512, outputBytes: opts.outputBytes ?? MB };
    this.recycleHeapMb = opts.recycleHeapMb ?? 256;
    this.jsHeapMb = opts.jsHeapMb ?? 256;
    this.startTimeoutMs = opts.startTimeoutMs ?? 120_000;
    this.pyodideDirOpt = opts.pyodideDir;
    this.layers = { ...ALL_LAYERS, ...opts.layers };
    this.launcher = opts.launcher ?? defaultSandboxLauncher();
    // A pool with a layer off keeps its snapshot to itself (it was taken under other settings).
    if (Object.values(this.layers).includes(false)) this.snapshotDir = false;
    this.snapshotDir = opts.snapshotDir ?? path.join(os.tmpdir(), `flowlab-sandbox-${process.getuid?.() ?? 'user'}`);
  }

  /** Starts the pool's workers now and resolves when all are ready. */
  async warm(): Promise<void> {
    while (this.workers.length < this.size) this.workers.push(this.startWorker());
    this.hold(+1);
    try {
      await Promise.all(this.workers.map((w) => w.ready));
    } finally {
      this.hold(-1);
    }
  }

  /**
   * Workers and their IPC channels are unref'd (an idle pool never holds its parent open); while
   * a run waits or runs, or `warm` waits, one interval handle keeps the parent's event loop alive.
   */
  private hold(delta: 1 | -1): void {
    this.pending += delta;
    if (delta === 1 && this.pending === 1) this.keepAlive = setInterval(() => {}, 60_000);
    if (this.pending === 0) clearInterval(this.keepAlive);
  }

  run(request: SandboxRequest, signal?: AbortSignal): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new SandboxError('CLOSED', 'the sandbox is closed'));
    try {
      checkSandboxRequest(request);
    } catch (err) {
      return Promise.reject(err);
    }
    if (signal?.aborted) return Promise.reject(new SandboxError('ABORTED', 'the sandbox run was cancelled before it started'));
    try {
      void this.pyodideDir;
    } catch (cause) {
      return Promise.reject(new SandboxError('START_FAILED', `cannot find the pyodide package: ${(cause as Error).message}`, {}, { cause }));
    }
    const req = { ...this.defaults, ...stripUndefined(request) } as Required<SandboxRequest>;
    this.hold(+1);
    return new Promise<SandboxResult>((resolve, reject) => {
      this.queue.push({ req, signal, resolve, reject });
      this.pump();
    }).finally(() => this.hold(-1));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(new SandboxError('CLOSED', 'the sandbox was closed before the run started'));
    for (const w of this.workers.splice(0)) {
      w.onClose?.();
      this.kill(w, 'the sandbox was closed');
    }
  }

  /** Hands queued runs to idle workers, starting workers up to `size`. */
  private pump(): void {
    while (this.workers.length < this.size && !this.closed) this.workers.push(this.startWorker());
    for (const w of this.workers) {
      if (this.queue.length === 0) return;
      if (w.busy || w.dead) continue;
      const q = this.queue.shift()!;
      w.busy = true;
      void this.dispatch(w, q);
    }
  }

  private async dispatch(w: Worker, q: Queued): Promise<void> {
    try {
      await w.ready;
    } catch (err) {
      this.replace(w);
      if (++this.startFailures >= 3) {
        this.failAll(err);
        q.reject(err);
      } else {
        this.queue.unshift(q);
        this.pump();
      }
      return;
    }
    this.startFailures = 0;
    if (q.signal?.aborted) {
      w.busy = false;
      q.reject(new SandboxError('ABORTED', 'the sandbox run was cancelled before it started'));
      this.pump();
      return;
    }
    const { req } = q;
    const id = this.nextId++;
    const t0 = performance.now();
    const rssCapMb = req.memoryMb + this.jsHeapMb + 256;
    let settled = false;
    const finish = (status: SandboxStatus, msg: Partial<WorkerMessage>, retire: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      q.signal?.removeEventListener('abort', onAbort);
      w.onResult = undefined;
      w.onExit = undefined;
      w.onClose = undefined;
      if (retire) this.replace(w);
      else w.busy = false;
      q.resolve({
        status,
        stdout: msg.stdout ?? '',
        stderr: msg.stderr ?? '',
        ...(msg.error && { error: msg.error }),
        ms: Math.round((performance.now() - t0) * 10) / 10,
      });
      this.pump();
    };
    const timer = setTimeout(() => finish('timeout', { error: { type: 'Timeout', message: `killed after ${req.timeoutMs} ms` } }, true), req.timeoutMs);
    const poll = setInterval(() => {
      const rss = residentMb(w.child.pid);
      if (rss !== undefined && rss > rssCapMb) finish('memory', { error: { type: 'MemoryLimit', message: `process resident size ${Math.round(rss)} MiB passed ${rssCapMb} MiB; killed` } }, true);
    }, 100);
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      this.replace(w);
      q.reject(new SandboxError('ABORTED', 'the sandbox run was cancelled; its interpreter was killed'));
      this.pump();
    };
    q.signal?.addEventListener('abort', onAbort, { once: true });
    w.onClose = () => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(poll);
      q.reject(new SandboxError('CLOSED', 'the sandbox was closed during the run'));
    };
    w.onResult = (msg) => {
      w.heapMb = msg.heapMb ?? w.heapMb;
      const retire = msg.tainted === true || msg.status === 'crashed' || w.heapMb > this.recycleHeapMb;
      finish(msg.status ?? 'crashed', msg, retire);
    };
    w.onExit = (why) => finish('crashed', { error: { type: 'WorkerExit', message: why } }, true);
    w.child.send({ type: 'run', id, code: req.code, memoryMb: req.memoryMb, outputBytes: req.outputBytes });
  }

  /** The cached snapshot, when a file of ours is there; undefined otherwise (never throws). */
  private readSnapshot(): Uint8Array | undefined {
    if (this.snapshotDir === false) return undefined;
    try {
      const file = snapshotFile(this.snapshotDir, this.pyodideDir);
      const st = fs.statSync(file);
      if (process.getuid && st.uid !== process.getuid()) return undefined;
      return fs.readFileSync(file);
    } catch {
      return undefined;
    }
  }

  /** Caches a snapshot for later processes (best effort: a failure only costs the next start). */
  private writeSnapshot(bytes: Uint8Array): void {
    if (this.snapshotDir === false) return;
    try {
      fs.mkdirSync(this.snapshotDir, { recursive: true, mode: 0o700 });
      const file = snapshotFile(this.snapshotDir, this.pyodideDir);
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, bytes, { mode: 0o600 });
      fs.renameSync(tmp, file);
    } catch { /* best effort */ }
  }

  /** Kills a worker and puts a fresh one in its place. */
  private replace(w: Worker): void {
    this.kill(w, 'replaced');
    const at = this.workers.indexOf(w);
    if (at >= 0) this.workers.splice(at, 1);
    if (!this.closed) this.pump();
  }

  private kill(w: Worker, why: string): void {
    if (w.dead) return;
    w.dead = true;
    w.child.kill();
    void why;
  }

  private failAll(err: unknown): void {
    for (const q of this.queue.splice(0)) q.reject(err);
  }

  /** The pyodide folder, resolved on the first start (so constructing a sandbox touches nothing). */
  private get pyodideDir(): string {
    this.pyodideDirOpt ??= pyodidePackageDir();
    return this.pyodideDirOpt;
  }

  private startWorker(): Worker {
    this.started++;
    const env: Record<string, string> = { FLOWLAB_PYODIDE_URL: pathToFileURL(path.join(this.pyodideDir, 'pyodide.mjs')).href };
    if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
    if (this.snapshotBroken) this.snapshot = undefined;
    else this.snapshot ??= this.readSnapshot();
    const fromSnapshot = this.snapshot !== undefined;
    let started = false;
    const w: Worker = { child: undefined as unknown as SandboxChild, busy: false, dead: false, stderrTail: '', heapMb: 0, ready: Promise.resolve() };
    let child: SandboxChild;
    try {
      child = this.launcher({ source: WORKER_SOURCE, execArgv: workerArgs(this.pyodideDir, this.jsHeapMb, process.versions.node, this.layers), env, cwd: this.pyodideDir });
    } catch (cause) {
      w.dead = true;
      w.ready = Promise.reject(new SandboxError('START_FAILED', `cannot start a sandbox worker: ${(cause as Error).message}`, {}, { cause }));
      w.ready.catch(() => {});
      return w;
    }
    w.child = child;
    child.onStderr((s) => { w.stderrTail = (w.stderrTail + s).slice(-4000); });
    child.send({ type: 'init', snapshot: this.snapshot ?? null, layers: this.layers });
    child.unref();
    w.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill(w, 'start timed out');
        reject(new SandboxError('START_FAILED', `a sandbox worker did not load Pyodide within ${this.startTimeoutMs} ms`));
      }, this.startTimeoutMs);
      timer.unref();
      child.onMessage((raw) => {
        const msg = raw as WorkerMessage;
        if (msg?.type === 'ready') {
          clearTimeout(timer);
          started = true;
          this.loadMs.push(msg.loadMs ?? 0);
          this.starts.push(fromSnapshot ? 'snapshot' : 'cold');
          w.heapMb = msg.heapMb ?? 0;
          resolve();
        } else if (msg?.type === 'snapshot' && msg.bytes instanceof Uint8Array) {
          if (this.snapshot === undefined || this.snapshotBroken) {
            this.snapshot = msg.bytes;
            this.snapshotBroken = false;
            this.writeSnapshot(msg.bytes);
          }
        } else if (msg?.type === 'result') {
          w.onResult?.(msg);
        }
      });
      child.onError((err) => {
        clearTimeout(timer);
        reject(new SandboxError('START_FAILED', `cannot start a sandbox worker (${process.execPath}): ${err.message}`, {}, { cause: err }));
      });
      child.onExit((code, sig) => {
        clearTimeout(timer);
        const why = `the sandbox worker exited (${sig ?? `status ${code}`})${w.stderrTail ? `: ${w.stderrTail.trim().slice(-600)}` : ''}`;
        const wasDead = w.dead;
        w.dead = true;
        // A snapshot this Node cannot load is not used again (the next worker starts cold).
        if (fromSnapshot && !started) this.snapshotBroken = true;
        reject(new SandboxError('START_FAILED', why));
        if (!wasDead) {
          w.onExit?.(why);
          const at = this.workers.indexOf(w);
          if (at >= 0) this.workers.splice(at, 1);
          if (!this.closed && this.queue.length) this.pump();
        }
      });
    });
    w.ready.catch(() => {});
    return w;
  }
}

/** The snapshot file of this pyodide and worker program, under `dir`. */
function snapshotFile(dir: string, pyodideDir: string): string {
  let version = '?';
  try {
    version = (JSON.parse(fs.readFileSync(path.join(pyodideDir, 'package.json'), 'utf8')) as { version?: string }).version ?? '?';
  } catch { /* an unreadable package.json keys as '?' */ }
  const key = createHash('sha256').update(`${version}\0${process.versions.node}\0${process.arch}\0${WORKER_SOURCE}`).digest('hex').slice(0, 16);
  return path.join(dir, `pyodide-${version}-${key}.snapshot`);
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
