/**
 * Sandbox processes forked by main on the lab's behalf (electron/sandboxForks.ts): the lab's pool
 * (models/sandbox) with the desktop launcher over a remote fork, main's end forking with Node's
 * fork in place of Electron's `utilityProcess.fork`, the two ends joined by an in-memory port
 * pair (structured-clone copies, as a real port delivers). Real Pyodide processes run.
 */
import { EventEmitter } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeUtilityFork, PyodideSandbox, utilityLauncher, type UtilityForkOptions } from '../models/sandbox/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { remoteUtilityFork, serveSandboxForks, type PortLike } from './sandboxForks.ts';

/** Two joined ports; delivery starts on `start()` and is asynchronous, each message a structured clone. */
function portPair(): [PortLike, PortLike] {
  const make = (): PortLike & { peer?: EventEmitter; emitter: EventEmitter; queue: unknown[]; started: boolean } => {
    const emitter = new EventEmitter();
    const port = {
      emitter,
      queue: [] as unknown[],
      started: false,
      peer: undefined as EventEmitter | undefined,
      postMessage(message: unknown) {
        const copy = structuredClone(message);
        setImmediate(() => other(port).deliver(copy));
      },
      on(event: 'message', listener: (e: { data: unknown }) => void) {
        emitter.on(event, listener);
        return port;
      },
      start() {
        port.started = true;
        for (const m of port.queue.splice(0)) emitter.emit('message', { data: m });
      },
      deliver(m: unknown) {
        if (port.started) emitter.emit('message', { data: m });
        else port.queue.push(m);
      },
    };
    return port;
  };
  const a = make();
  const b = make();
  const other = (p: unknown) => (p === a ? b : a) as unknown as { deliver(m: unknown): void };
  return [a, b];
}

describe('sandbox processes forked by main for the lab', () => {
  let sandbox: PyodideSandbox | undefined;
  afterAll(async () => {
    await sandbox?.close();
  });

  it('main receives the fork with the launcher\'s options (cwd outside any asar) and relays messages and exit', async () => {
    const [labPort, mainPort] = portPair();
    const seen: Array<{ modulePath: string; options: UtilityForkOptions }> = [];
    const service = serveSandboxForks(mainPort, (modulePath, args, options) => {
      seen.push({ modulePath, options });
      return nodeUtilityFork(modulePath, args, options);
    });
    sandbox = new PyodideSandbox({ size: 1, snapshotDir: false, launcher: utilityLauncher(remoteUtilityFork(labPort), tempDir('lab-sandbox')) });
    const r = await sandbox.run({ code: 'print(sum(range(101)))', timeoutMs: 10_000 });
    expect(r).toMatchObject({ status: 'ok', stdout: '5050\n' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.options.cwd).not.toMatch(/\.asar([\\/]|$)/);
    expect(seen[0]!.modulePath).toMatch(/sandbox-worker-[0-9a-f]{16}\.mjs$/);
    expect(service.running).toBe(1);
    // A run past its limit: the lab asks main to kill the process; a fresh one replaces it.
    const slow = await sandbox.run({ code: 'while True:\n    pass', timeoutMs: 1_500 });
    expect(slow.status).toBe('timeout');
    const again = await sandbox.run({ code: 'print(6 * 7)', timeoutMs: 10_000 });
    expect(again.stdout).toBe('42\n');
    expect(seen.length).toBeGreaterThanOrEqual(2);
    await sandbox.close();
    service.dispose();
    expect(service.running).toBe(0);
  }, 240_000);

  it('a fork that throws in main reaches the lab as a failed start, not a hang', async () => {
    const [labPort, mainPort] = portPair();
    serveSandboxForks(mainPort, () => {
      throw new Error('utilityProcess is not available');
    });
    const fork = remoteUtilityFork(labPort);
    const child = fork('/x.mjs', [], { execArgv: [], cwd: '/', env: {}, stdio: 'pipe', serviceName: 't' });
    const events: unknown[] = [];
    child.on('error', (...a) => events.push(['error', ...a]));
    await new Promise<void>((resolve) => child.on('exit', (code) => {
      events.push(['exit', code]);
      resolve();
    }));
    expect(events).toEqual([['error', 'utilityProcess is not available'], ['exit', -1]]);
  });
});
