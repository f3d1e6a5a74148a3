/**
 * Sandbox processes for the lab's utility process. The lab (electron/worker.ts) runs the code
 * sandbox's pool, but Electron's `utilityProcess.fork` exists only in main ("Process: Main"), so
 * main forks on the lab's behalf over a dedicated message port (a `MessageChannelMain` port handed
 * to the lab right after it starts): the lab gets a `UtilityFork` ({@link remoteUtilityFork}) that
 * models/sandbox/launcher.ts `utilityLauncher` uses as if it were Electron's, and main runs
 * {@link serveSandboxForks}, which calls the real one. Each sandbox process is then an Electron
 * utility process: it needs no RunAsNode fuse.
 *
 * No Electron import: both ends take a small port shape, so tests wire them in memory.
 *
 * Protocol (structured-clone data, one port):
 *   lab -> main   {op:'fork', id, modulePath, args, options} | {op:'send', id, data} | {op:'kill', id}
 *   main -> lab   {op:'spawn', id, pid} | {op:'message', id, data} | {op:'stderr', id, text}
 *                 | {op:'exit', id, code} | {op:'error', id, message}
 */
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { UtilityChildLike, UtilityFork, UtilityForkOptions } from '../models/sandbox/index.ts';

/** A message port as both ends see it (Electron's `MessagePortMain`; `start()` begins delivery). */
export interface PortLike {
  postMessage(message: unknown): void;
  on(event: 'message', listener: (event: { data: unknown }) => void): unknown;
  start(): void;
}

/** Lab -> main. */
type ForkRequest =
  | { op: 'fork'; id: number; modulePath: string; args: string[]; options: UtilityForkOptions }
  | { op: 'send'; id: number; data: unknown }
  | { op: 'kill'; id: number };

/** Main -> lab. */
type ForkEvent =
  | { op: 'spawn'; id: number; pid: number | undefined }
  | { op: 'message'; id: number; data: unknown }
  | { op: 'stderr'; id: number; text: string }
  | { op: 'exit'; id: number; code: number }
  | { op: 'error'; id: number; message: string };

/**
 * Main's end: forks each requested sandbox process with `fork` (Electron's
 * `utilityProcess.fork`) and relays its messages, stderr and exit. `dispose()` kills every process
 * still running (the lab went away).
 */
export function serveSandboxForks(port: PortLike, fork: UtilityFork): { dispose(): void; readonly running: number } {
  const children = new Map<number, UtilityChildLike>();
  port.on('message', ({ data }) => {
    const req = data as ForkRequest;
    if (!req || typeof req !== 'object' || typeof req.id !== 'number') return;
    if (req.op === 'fork') {
      let child: UtilityChildLike;
      try {
        child = fork(req.modulePath, req.args, req.options);
      } catch (err) {
        port.postMessage({ op: 'error', id: req.id, message: (err as Error).message } satisfies ForkEvent);
        port.postMessage({ op: 'exit', id: req.id, code: -1 } satisfies ForkEvent);
        return;
      }
      children.set(req.id, child);
      child.on('spawn', () => port.postMessage({ op: 'spawn', id: req.id, pid: child.pid } satisfies ForkEvent));
      child.on('message', (m) => port.postMessage({ op: 'message', id: req.id, data: m } satisfies ForkEvent));
      child.on('exit', (code) => {
        children.delete(req.id);
        port.postMessage({ op: 'exit', id: req.id, code } satisfies ForkEvent);
      });
      child.stderr?.on('data', (chunk: string | Buffer) => port.postMessage({ op: 'stderr', id: req.id, text: String(chunk) } satisfies ForkEvent));
    } else if (req.op === 'send') {
      children.get(req.id)?.postMessage(req.data);
    } else if (req.op === 'kill') {
      children.get(req.id)?.kill();
    }
  });
  port.start();
  return {
    dispose: () => {
      for (const c of children.values()) c.kill();
      children.clear();
    },
    get running() {
      return children.size;
    },
  };
}

/** The lab's end: a `UtilityFork` whose processes main starts ({@link serveSandboxForks}). */
export function remoteUtilityFork(port: PortLike): UtilityFork {
  let nextId = 1;
  const live = new Map<number, { emitter: EventEmitter; stderr: PassThrough; state: { pid: number | undefined; exited: boolean } }>();
  port.on('message', ({ data }) => {
    const ev = data as ForkEvent;
    const c = ev && typeof ev === 'object' ? live.get(ev.id) : undefined;
    if (!c) return;
    switch (ev.op) {
      case 'spawn':
        c.state.pid = ev.pid;
        c.emitter.emit('spawn');
        break;
      case 'message':
        c.emitter.emit('message', ev.data);
        break;
      case 'stderr':
        c.stderr.write(ev.text);
        break;
      case 'error':
        c.emitter.emit('error', ev.message);
        break;
      case 'exit':
        c.state.exited = true;
        live.delete(ev.id);
        c.stderr.end();
        c.emitter.emit('exit', ev.code);
        break;
      default:
        ev satisfies never;
    }
  });
  port.start();
  return (modulePath, args, options) => {
    const id = nextId++;
    const emitter = new EventEmitter();
    const stderr = new PassThrough();
    const state = { pid: undefined as number | undefined, exited: false };
    live.set(id, { emitter, stderr, state });
    port.postMessage({ op: 'fork', id, modulePath, args, options } satisfies ForkRequest);
    const child = {
      get pid() {
        return state.pid;
      },
      postMessage: (data: unknown) => {
        if (!state.exited) port.postMessage({ op: 'send', id, data } satisfies ForkRequest);
      },
      kill: () => {
        if (state.exited) return false;
        port.postMessage({ op: 'kill', id } satisfies ForkRequest);
        return true;
      },
      on: (event: string, listener: (...a: never[]) => void) => {
        emitter.on(event, listener as (...a: unknown[]) => void);
        return child;
      },
      stderr,
    };
    return child as unknown as UtilityChildLike;
  };
}
