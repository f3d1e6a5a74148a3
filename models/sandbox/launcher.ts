/**
 * How a sandbox worker process starts (models/sandbox/pool.ts): one interface, two ways.
 *
 * - {@link nodeLauncher}: `child_process.spawn(process.execPath, [flags, '--input-type=module', '-'])`
 *   with the program on stdin and an IPC channel (the CLI, `flowlab serve`, tests).
 * - {@link utilityLauncher}: Electron's `utilityProcess.fork(file, [], {execArgv, cwd, env})` (the
 *   desktop app), which starts a Node process from the app's own binary without the RunAsNode fuse
 *   (Electron's utilityProcess API, "Process: Main"). It takes no stdin, so the program is written
 *   once to a file in a real folder (`scriptDir`, e.g. `<userData>/sandbox`) and the permission
 *   model is allowed to read that file too. The working directory must be a real folder: Electron's
 *   asar documentation says a child process cannot use a directory inside an archive, so a cwd
 *   inside `app.asar` is moved to `app.asar.unpacked` ({@link outsideAsar}) and one that stays inside
 *   an archive is refused.
 *
 * The pool talks to either through {@link SandboxChild}; the program itself reads whichever parent
 * channel it has (`process.parentPort` in a utility process, `process.send` in Node).
 */
import { fork as nodeFork, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** What a launcher starts: one worker program with its flags, environment and working directory. */
export interface LaunchSpec {
  /** The program (an ES module's text). */
  source: string;
  /** Node / V8 flags (the permission model, heap cap, ...), without the program's own path. */
  execArgv: string[];
  /** The child's whole environment. */
  env: Record<string, string>;
  /** Its working directory: a real folder. */
  cwd: string;
}

/** A started worker, as the pool sees it. */
export interface SandboxChild {
  /** The process id once known (undefined before the process started, or where not reported). */
  readonly pid: number | undefined;
  /** Sends a structured-clone message to the worker. */
  send(message: unknown): void;
  onMessage(listener: (message: unknown) => void): void;
  /** The worker ended: its exit code (null when a signal ended it) and signal name if known. */
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  /** The process could not be started. */
  onError(listener: (err: Error) => void): void;
  /** Text the worker wrote on stderr (kept by the pool for error messages). */
  onStderr(listener: (text: string) => void): void;
  /** Ends the worker at once (SIGKILL under Node; Electron's kill() for a utility process). */
  kill(): void;
  /** Lets the parent exit while the worker idles. */
  unref(): void;
}

/** Starts a worker. */
export type SandboxLauncher = (spec: LaunchSpec) => SandboxChild;

/**
 * `path` with any `<name>.asar` folder segment replaced by `<name>.asar.unpacked` (where Electron
 * puts files kept out of the archive, forge.config.ts `asar.unpack`). Paths with no `.asar`
 * segment come back unchanged.
 */
export function outsideAsar(p: string): string {
  return p
    .split(/([\\/])/)
    .map((part) => (part.toLowerCase().endsWith('.asar') ? `${part}.unpacked` : part))
    .join('');
}

/** True when a folder segment of `p` is an asar archive (`….asar`). */
export function insideAsar(p: string): boolean {
  return p.split(/[\\/]/).some((part) => part.toLowerCase().endsWith('.asar'));
}

/** Launches workers with `child_process.spawn` of this process's Node (the program on stdin). */
export function nodeLauncher(execPath: string = process.execPath): SandboxLauncher {
  return (spec) => {
    const child = spawn(execPath, [...spec.execArgv, '--input-type=module', '-'], {
      stdio: ['pipe', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
      env: spec.env,
      cwd: spec.cwd,
      windowsHide: true,
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(spec.source);
    child.stderr?.setEncoding('utf8');
    return {
      get pid() {
        return child.pid;
      },
      send: (message) => {
        if (child.connected) child.send(message as never);
      },
      onMessage: (listener) => void child.on('message', listener),
      onExit: (listener) => void child.on('exit', (code, signal) => listener(code, signal)),
      onError: (listener) => void child.on('error', listener),
      onStderr: (listener) => void child.stderr?.on('data', (s: string) => listener(s)),
      kill: () => void child.kill('SIGKILL'),
      unref: () => {
        child.unref();
        (child as unknown as { channel?: { unref(): void } }).channel?.unref();
      },
    };
  };
}

/** The child of Electron's `utilityProcess.fork`, as far as the launcher uses it (Electron's `UtilityProcess`). */
export interface UtilityChildLike {
  readonly pid: number | undefined;
  postMessage(message: unknown): void;
  kill(): boolean;
  on(event: 'spawn', listener: () => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  on(event: 'exit', listener: (code: number) => void): unknown;
  on(event: 'error', listener: (...args: unknown[]) => void): unknown;
  readonly stderr: NodeJS.ReadableStream | null;
}

/** The options of `utilityProcess.fork` the launcher sets. */
export interface UtilityForkOptions {
  execArgv: string[];
  cwd: string;
  env: Record<string, string>;
  stdio: 'pipe';
  serviceName: string;
}

/** Electron's `utilityProcess.fork` (or a stand-in that forwards to it, electron/sandboxForks.ts). */
export type UtilityFork = (modulePath: string, args: string[], options: UtilityForkOptions) => UtilityChildLike;

/**
 * Writes `source` to `<dir>/sandbox-worker-<sha256 prefix>.mjs` unless that file is there
 * (temp file + rename), and returns its path. The name changes with the text, so an updated app
 * never runs an old program.
 */
export function writeWorkerScript(dir: string, source: string): string {
  const file = path.join(dir, `sandbox-worker-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.mjs`);
  if (fs.existsSync(file) && fs.readFileSync(file, 'utf8') === source) return file;
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, source, { mode: 0o600 });
  fs.renameSync(tmp, file);
  return file;
}

/**
 * Launches workers with Electron's `utilityProcess.fork`: the program from a file in `scriptDir`
 * (a real folder outside the app's archive), the permission model also allowed to read that file,
 * the working directory moved out of any `.asar` ({@link outsideAsar}).
 *
 * @throws Error when `scriptDir` or the working directory lies inside an asar archive even after
 *   the move (a child process cannot start there).
 */
export function utilityLauncher(fork: UtilityFork, scriptDir: string): SandboxLauncher {
  if (insideAsar(scriptDir)) throw new Error(`the sandbox's script folder ${scriptDir} is inside an asar archive; give a real folder (e.g. the user data folder)`);
  return (spec) => {
    const cwd = outsideAsar(spec.cwd);
    if (insideAsar(cwd)) throw new Error(`the sandbox's working directory ${spec.cwd} is inside an asar archive`);
    const script = writeWorkerScript(scriptDir, spec.source);
    const execArgv = spec.execArgv.map((a) => (a.startsWith('--allow-fs-read=') ? outsideAsar(a) : a));
    if (execArgv.some((a) => a.startsWith('--allow-fs-read='))) execArgv.push(`--allow-fs-read=${script}`);
    const env = Object.fromEntries(Object.entries(spec.env).map(([k, v]) => [k, insideAsar(v) ? outsideAsar(v) : v]));
    const child = fork(script, [], { execArgv, cwd, env, stdio: 'pipe', serviceName: 'Flowlab sandbox' });
    child.stderr?.setEncoding?.('utf8');
    let exited = false;
    return {
      get pid() {
        return child.pid;
      },
      send: (message) => {
        if (!exited) child.postMessage(message);
      },
      onMessage: (listener) => void child.on('message', listener),
      onExit: (listener) =>
        void child.on('exit', (code) => {
          exited = true;
          listener(code, null);
        }),
      onError: (listener) => void child.on('error', (...args) => listener(new Error(`utility process error: ${args.map(String).join(' ')}`))),
      onStderr: (listener) => void child.stderr?.on('data', (s: string | Buffer) => listener(String(s))),
      kill: () => {
        if (!exited) child.kill();
      },
      unref: () => {},
    };
  };
}

/**
 * Node's `child_process.fork`, shaped as Electron's `utilityProcess.fork`: the desktop app's launch
 * path ({@link utilityLauncher}: program file, flags, cwd, env) run under plain Node, where the
 * worker talks over Node's IPC channel instead of `process.parentPort`. Used by the tests and
 * available to any Node host.
 */
export const nodeUtilityFork: UtilityFork = (modulePath, args, options) => {
  const child = nodeFork(modulePath, args, {
    execArgv: options.execArgv,
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
  });
  child.stderr?.setEncoding('utf8');
  return {
    get pid() {
      return child.pid;
    },
    postMessage: (message) => {
      if (child.connected) child.send(message as never);
    },
    kill: () => child.kill(),
    on(event: string, listener: (...a: never[]) => void) {
      if (event === 'exit') child.on('exit', (code) => (listener as (c: number) => void)(code ?? -1));
      else child.on(event, listener as (...a: unknown[]) => void);
      return this;
    },
    stderr: child.stderr,
  } as UtilityChildLike;
};

let defaultLauncher: SandboxLauncher | undefined;

/**
 * Sets the launcher sandboxes created without one use from now on (the desktop app's lab worker
 * sets the utility-process one, electron/worker.ts); undefined goes back to {@link nodeLauncher}.
 */
export function setDefaultSandboxLauncher(launcher: SandboxLauncher | undefined): void {
  defaultLauncher = launcher;
}

/** The launcher of a sandbox created without one. */
export function defaultSandboxLauncher(): SandboxLauncher {
  return defaultLauncher ?? nodeLauncher();
}
