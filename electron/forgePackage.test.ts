/**
 * Forge's real `package` step on this repository (forge.config.ts), against a stand-in Electron
 * archive (electron/standInElectron.fixture.ts: a real zip, a fake binary carrying a fuse wire).
 * @electron/packager copies the app, prunes devDependencies, packs the asar, unpacks what the
 * config says and renames the binary; the fuses plugin flips the wire. Then the result is read
 * back with @electron/asar and @electron/fuses.
 *
 * Forge 8 needs Node >= 22.13: under an older Node, scripts/forge.mjs installs Node 22 once from
 * the npm registry into node_modules/.cache/flowlab-node22 (reused afterwards). Where that
 * cannot be done (no registry) the test is skipped with the reason printed, except under CI=true,
 * where it fails. It needs out/main, out/preload, out/renderer (npm test builds them first; built
 * here when missing). better-sqlite3's rebuild for Electron's ABI is skipped (it downloads
 * Electron's headers). Takes about 30-60 s, mostly copying the production node_modules.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { listPackage } from '@electron/asar';
import { FuseState, FuseV1Options, getCurrentFuseWire } from '@electron/fuses';
import { beforeAll, describe, expect, it } from 'vitest';
import { FUSES } from '../forge.config.ts';
import { tempDir } from '../test/fixtures.ts';
import { writeStandInElectronZip } from './standInElectron.fixture.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const electronVersion = (JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')) as { version: string }).version;

/** The fuses forge.config.ts sets, by wire index. */
const configured = Object.entries(FUSES).filter(([k]) => k !== 'version').map(([k, v]) => [Number(k), v as boolean] as const);
/** The stand-in's wire: each configured fuse the opposite of the config (so every flip shows), the others '0'. */
const WIRE = Array.from({ length: 9 }, (_, i) => {
  const c = configured.find(([k]) => k === i);
  return c ? (c[1] ? '0' : '1') : '0';
}).join('');

/** The Node binary Forge runs under, or the reason there is none. */
function forgeNode(): { node?: string; why?: string } {
  try {
    return { node: execFileSync(process.execPath, [path.join(ROOT, 'scripts/forge.mjs'), '--print-node'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 }).trim() };
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    return { why: (e.stderr || e.message).trim().split('\n').pop() };
  }
}

const found = forgeNode();
if (!found.node) {
  if (process.env['CI'] === 'true') throw new Error(`the Forge packaging test cannot run under CI: ${found.why}`);
  console.log(`[forgePackage.test] skipping Forge's package step: no Node >= 22.13 (${found.why})`);
}

describe.skipIf(!found.node)("Forge's package step makes an app that contains the app", () => {
  let appDir: string;
  let asar: string;
  let files: Set<string>;

  beforeAll(() => {
    if (!['out/main/index.js', 'out/main/worker.js', 'out/preload/index.cjs', 'out/renderer/index.html'].every((f) => existsSync(path.join(ROOT, f)))) {
      execFileSync(process.execPath, [path.join(path.dirname(require.resolve('electron-vite/package.json')), 'bin', 'electron-vite.js'), 'build', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
    }
    const zipDir = tempDir('electron-zip');
    writeStandInElectronZip(zipDir, electronVersion, WIRE);
    const outDir = tempDir('forge-out');
    execFileSync(found.node!, [path.join(ROOT, 'node_modules/@electron-forge/cli/dist/electron-forge.js'), 'package', '--platform', 'linux', '--arch', 'x64'], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      timeout: 280_000,
      env: { ...process.env, FLOWLAB_ELECTRON_ZIP_DIR: zipDir, FLOWLAB_FORGE_OUT_DIR: outDir, FLOWLAB_SKIP_BUNDLE_BUILD: '1', FLOWLAB_SKIP_NATIVE_REBUILD: '1', CI: 'true' },
    });
    appDir = path.join(outDir, 'Flowlab-linux-x64');
    asar = path.join(appDir, 'resources/app.asar');
    files = new Set(listPackage(asar, { isPack: false }).map((f) => f.split(path.sep).join('/')));
  }, 300_000);

  it('Forge wrote into its own folder, not electron-vite\'s out/, and renamed the binary', () => {
    expect(existsSync(path.join(appDir, 'flowlab'))).toBe(true);
    expect(existsSync(path.join(appDir, 'electron'))).toBe(false);
    expect(readFileSync(path.join(appDir, 'version'), 'utf8')).toBe(electronVersion);
  });

  it('the asar holds main, the worker, preload, the page, examples and package.json; not the CLI bundle', () => {
    for (const f of ['/out/main/index.js', '/out/main/worker.js', '/out/preload/index.cjs', '/out/renderer/index.html', '/package.json', '/examples/gsm8k-single.yaml']) expect(files, f).toContain(f);
    const examples = readdirSync(path.join(ROOT, 'examples')).filter((f) => f.endsWith('.yaml'));
    for (const f of examples) expect(files, f).toContain(`/examples/${f}`);
    expect([...files].some((f) => f.startsWith('/out/cli'))).toBe(false);
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { main: string };
    expect(files).toContain(`/${pkg.main}`);
  });

  it('devDependencies are pruned; only this target\'s llama.cpp packages (CPU, Vulkan; no CUDA) are in', () => {
    expect(files).not.toContain('/node_modules/vitest/package.json');
    expect(files).not.toContain('/node_modules/electron/package.json');
    expect(files).toContain('/node_modules/node-llama-cpp/package.json');
    // Squirrel.Windows start-up events are handled by this runtime dependency (electron/main.ts).
    expect(files).toContain('/node_modules/electron-squirrel-startup/package.json');
    // (Packager leaves the folders of ignored packages behind, empty: a package is its package.json.)
    const llama = [...files].filter((f) => /^\/node_modules\/@node-llama-cpp\/[^/]+\/package\.json$/.test(f)).sort();
    expect(llama).toEqual(['/node_modules/@node-llama-cpp/linux-x64-vulkan/package.json', '/node_modules/@node-llama-cpp/linux-x64/package.json']);
  });

  it('every .node addon and the sandbox and tfjs runtime files are unpacked (real files beside the asar)', () => {
    const unpacked = path.join(appDir, 'resources/app.asar.unpacked');
    const addons = [...files].filter((f) => f.endsWith('.node'));
    expect(addons.length).toBeGreaterThanOrEqual(3); // better-sqlite3, llama.cpp CPU and Vulkan bindings
    expect(addons.some((f) => f.includes('better-sqlite3'))).toBe(true);
    for (const f of addons) expect(existsSync(path.join(unpacked, f)), f).toBe(true);
    for (const f of ['pyodide/pyodide.mjs', 'pyodide/pyodide.asm.wasm', 'pyodide/python_stdlib.zip', 'pyodide/package.json']) {
      expect(existsSync(path.join(unpacked, 'node_modules', f)), f).toBe(true);
    }
    const wasm = [...files].filter((f) => f.startsWith('/node_modules/@tensorflow/tfjs-backend-wasm/') && f.endsWith('.wasm'));
    expect(wasm.length).toBeGreaterThan(0);
    for (const f of wasm) expect(existsSync(path.join(unpacked, f)), f).toBe(true);
  });

  it('the fuses read back as configured', async () => {
    const wire = await getCurrentFuseWire(path.join(appDir, 'flowlab'));
    for (const [index, on] of configured) expect(wire[index as FuseV1Options], FuseV1Options[index]).toBe(on ? FuseState.ENABLE : FuseState.DISABLE);
    // Not configured: left as the stand-in had them.
    expect(wire[FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]).toBe(FuseState.DISABLE);
    expect(wire[FuseV1Options.RunAsNode]).toBe(FuseState.ENABLE);
    expect(wire[FuseV1Options.OnlyLoadAppFromAsar]).toBe(FuseState.ENABLE);
    expect(wire[FuseV1Options.EnableNodeOptionsEnvironmentVariable]).toBe(FuseState.DISABLE);
  });
});
