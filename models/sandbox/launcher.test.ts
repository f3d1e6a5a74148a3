/**
 * The sandbox launcher's Electron branch (`utilityLauncher`): what it hands to
 * `utilityProcess.fork` (recorded by a stand-in), where the working directory and the program
 * file lie (never inside an `.asar`), and the whole pool run through that branch with Node's
 * fork standing in for Electron's (the same program file, flags, cwd and env the app uses).
 */
import fs from 'node:fs';
import path from 'node:path';
import { EventEmitter } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { insideAsar, nodeUtilityFork, outsideAsar, utilityLauncher, writeWorkerScript, type UtilityChildLike, type UtilityForkOptions } from './launcher.ts';
import { PyodideSandbox, pyodidePackageDir, workerArgs } from './pool.ts';
import { WORKER_SOURCE } from './workerSource.ts';

/** A stand-in for `utilityProcess.fork` that records its calls and returns an inert child. */
function recordingFork() {
  const calls: Array<{ modulePath: string; args: string[]; options: UtilityForkOptions }> = [];
  const children: Array<EventEmitter & { posted: unknown[]; killed: number }> = [];
  const fork = (modulePath: string, args: string[], options: UtilityForkOptions): UtilityChildLike => {
    calls.push({ modulePath, args, options });
    const child = Object.assign(new EventEmitter(), { posted: [] as unknown[], killed: 0, pid: 4242, stderr: null });
    children.push(child);
    return Object.assign(child, {
      postMessage: (m: unknown) => void child.posted.push(m),
      kill: () => {
        child.killed++;
        return true;
      },
    }) as unknown as UtilityChildLike;
  };
  return { fork, calls, children };
}

describe('outsideAsar / insideAsar', () => {
  it('moves an app.asar folder segment to app.asar.unpacked, on POSIX and Windows paths', () => {
    expect(outsideAsar('/Applications/Flowlab.app/Contents/Resources/app.asar/node_modules/pyodide')).toBe('/Applications/Flowlab.app/Contents/Resources/app.asar.unpacked/node_modules/pyodide');
    expect(outsideAsar('C:\\Users\\u\\AppData\\Local\\flowlab\\app-0.1.0\\resources\\app.asar\\node_modules\\pyodide')).toBe('C:\\Users\\u\\AppData\\Local\\flowlab\\app-0.1.0\\resources\\app.asar.unpacked\\node_modules\\pyodide');
    expect(outsideAsar('/home/u/flowlab/node_modules/pyodide')).toBe('/home/u/flowlab/node_modules/pyodide');
    // A file named like an archive only in part is left alone.
    expect(outsideAsar('/x/my.asarfile/y')).toBe('/x/my.asarfile/y');
    expect(insideAsar('/r/app.asar/a')).toBe(true);
    expect(insideAsar('/r/app.asar.unpacked/a')).toBe(false);
  });
});

describe("utilityLauncher (the desktop app's branch)", () => {
  const scriptDir = tempDir('sandbox-scripts');
  const asarPyodide = '/opt/Flowlab/resources/app.asar/node_modules/pyodide';

  it('calls utilityProcess.fork with the program file, the flags, a working directory outside the asar, and no stdin', () => {
    const rec = recordingFork();
    const launch = utilityLauncher(rec.fork, scriptDir);
    const execArgv = workerArgs(asarPyodide, 256, '24.11.1');
    const child = launch({ source: WORKER_SOURCE, execArgv, env: { FLOWLAB_PYODIDE_URL: `file://${asarPyodide}/pyodide.mjs` }, cwd: asarPyodide });
    expect(rec.calls).toHaveLength(1);
    const { modulePath, args, options } = rec.calls[0]!;
    expect(options.cwd).toBe('/opt/Flowlab/resources/app.asar.unpacked/node_modules/pyodide');
    expect(insideAsar(options.cwd)).toBe(false);
    expect(path.dirname(modulePath)).toBe(scriptDir);
    expect(fs.readFileSync(modulePath, 'utf8')).toBe(WORKER_SOURCE);
    expect(args).toEqual([]);
    expect(options.stdio).toBe('pipe');
    expect(options.execArgv).toEqual([
      '--permission', '--allow-fs-read=/opt/Flowlab/resources/app.asar.unpacked/node_modules/pyodide/', '--disallow-code-generation-from-strings',
      '--max-old-space-size=256', '--no-warnings', `--allow-fs-read=${modulePath}`,
    ]);
    expect(options.env).toEqual({ FLOWLAB_PYODIDE_URL: 'file:///opt/Flowlab/resources/app.asar.unpacked/node_modules/pyodide/pyodide.mjs' });
    child.send({ type: 'init' });
    expect(rec.children[0]!.posted).toEqual([{ type: 'init' }]);
    const exits: Array<[number | null, string | null]> = [];
    child.onExit((c, s) => exits.push([c, s]));
    child.kill();
    expect(rec.children[0]!.killed).toBe(1);
    rec.children[0]!.emit('exit', 9);
    expect(exits).toEqual([[9, null]]);
    child.kill(); // after exit: not killed again
    expect(rec.children[0]!.killed).toBe(1);
  });

  it('writes the program once per text (same file for the same source, a new one when it changes)', () => {
    const a = writeWorkerScript(scriptDir, 'export const x = 1;\n');
    const mtime = fs.statSync(a).mtimeMs;
    expect(writeWorkerScript(scriptDir, 'export const x = 1;\n')).toBe(a);
    expect(fs.statSync(a).mtimeMs).toBe(mtime);
    expect(writeWorkerScript(scriptDir, 'export const x = 2;\n')).not.toBe(a);
  });

  it('refuses a script folder inside an asar; moves every archive segment of the working directory', async () => {
    expect(() => utilityLauncher(recordingFork().fork, '/opt/Flowlab/resources/app.asar/tmp')).toThrow(/inside an asar archive/);
    const rec = recordingFork();
    const launch = utilityLauncher(rec.fork, scriptDir);
    expect(() => launch({ source: 'x', execArgv: [], env: {}, cwd: '/a/b.asar/c.asar/d' })).not.toThrow(); // both segments moved
    expect(rec.calls[0]!.options.cwd).toBe('/a/b.asar.unpacked/c.asar.unpacked/d');
  });
});

describe('the pool through the utility branch, with Node standing in for Electron', () => {
  let sandbox: PyodideSandbox | undefined;
  afterAll(async () => {
    await sandbox?.close();
  });

  it('starts Pyodide from the program file with the permission model and answers a run', async () => {
    sandbox = new PyodideSandbox({ size: 1, launcher: utilityLauncher(nodeUtilityFork, tempDir('sandbox-utility')), snapshotDir: false });
    const r = await sandbox.run({ code: 'import math\nprint(math.comb(10, 3))', timeoutMs: 10_000 });
    expect(r.status).toBe('ok');
    expect(r.stdout).toBe('120\n');
    // The permission model still holds: the program file is readable, nothing else outside pyodide.
    const escape = await sandbox.run({ code: "import os\nos.system('true')", timeoutMs: 10_000 });
    expect(escape.status).not.toBe('ok');
    expect(pyodidePackageDir()).not.toMatch(/\.asar([\\/]|$)/);
  }, 180_000);
});
