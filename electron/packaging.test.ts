/**
 * The desktop app's start and packaging: the fuses flipped in the Electron binary
 * (forge.config.ts; values from Electron's "Fuses" tutorial and @electron/fuses' wire indices),
 * and the native-module step `npm start` / `npm run dev` run before launching Electron
 * (electron/native.ts, scripts/electron-native.ts). The Electron build itself needs the internet
 * (prebuild-install or node-gyp with Electron's headers), so it is not run here: the tests check
 * that the step is wired in, what it plans, that it leaves the CLI's Node build alone, that the
 * store opens through an explicit addon file, and the message a wrong-ABI addon gives.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FuseV1Options, FuseVersion } from '@electron/fuses';
import config, { FUSES } from '../forge.config.ts';
import { openStore } from '../core/store/index.ts';
import { electronSqliteBinding, explainAbiMismatch, npmNodeGypPath, REBUILD_COMMAND } from './native.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

describe('Electron fuses in the Forge config', () => {
  it('are handed to the fuses plugin', () => {
    expect(config.plugins).toHaveLength(1);
    const plugin = config.plugins![0] as unknown as { name: string; fusesConfig: unknown };
    expect(plugin.name).toBe('fuses');
    expect(plugin.fusesConfig).toBe(FUSES);
  });

  it('turn NODE_OPTIONS, --inspect and file:// privileges off; cookie encryption, asar integrity and asar-only on; RunAsNode on (see below)', () => {
    expect(FUSES.version).toBe(FuseVersion.V1);
    expect(FUSES[FuseV1Options.RunAsNode]).toBe(true);
    expect(FUSES[FuseV1Options.EnableNodeOptionsEnvironmentVariable]).toBe(false);
    expect(FUSES[FuseV1Options.EnableNodeCliInspectArguments]).toBe(false);
    expect(FUSES[FuseV1Options.GrantFileProtocolExtraPrivileges]).toBe(false);
    expect(FUSES[FuseV1Options.EnableCookieEncryption]).toBe(true);
    expect(FUSES[FuseV1Options.EnableEmbeddedAsarIntegrityValidation]).toBe(true);
    expect(FUSES[FuseV1Options.OnlyLoadAppFromAsar]).toBe(true);
  });

  it("RunAsNode stays on because node-llama-cpp's binary test forks through utilityProcess only where it exists (main), else child_process.fork", () => {
    // node-llama-cpp's installed test of its binary (run before loading it: always on Linux).
    const dir = path.dirname(require.resolve('node-llama-cpp'));
    const source = readFileSync(path.join(dir, 'bindings/utils/testBindingBinary.js'), 'utf8');
    expect(source).toContain('const { utilityProcess } = await import("electron");');
    expect(source).toContain('fork: utilityProcess.fork.bind(utilityProcess)');
    // The fallback when utilityProcess is missing (a utility process has none: Electron's
    // utilityProcess is "Process: Main"): node's fork of process.execPath, the app's own binary.
    expect(source).toMatch(/return \{\s*type: "node",\s*fork\s*\};/);
    const getLlama = readFileSync(path.join(dir, 'bindings/getLlama.js'), 'utf8');
    expect(getLlama).toMatch(/if \(platform === "linux"\) \{\s*if \(isPrebuiltBinary\)\s*return true;/);
    // Models load in the lab's utility process, not in main.
    const worker = readFileSync(path.join(ROOT, 'electron/worker.ts'), 'utf8');
    expect(worker).toContain('process.parentPort');
    expect(readFileSync(path.join(ROOT, 'forge.config.ts'), 'utf8')).toContain('RunAsNode stays ON, on purpose.');
  });
});

describe('native modules for Electron', () => {
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const nodeBuild = path.join(path.dirname(require.resolve('better-sqlite3/package.json')), 'build/Release/better_sqlite3.node');

  it('npm start and npm run dev put the Electron build in place before Electron launches', () => {
    for (const script of ['start', 'dev']) {
      const steps = pkg.scripts[script]!.split(' && ');
      expect(steps.indexOf('tsx scripts/electron-native.ts'), script).toBeGreaterThan(steps.indexOf('node scripts/ensure-electron.js'));
      expect(steps.findIndex((s) => s.startsWith('electron-vite')), script).toBe(steps.length - 1);
    }
    expect(pkg.scripts['rebuild:electron']).toBe('tsx scripts/electron-native.ts --force');
    expect(REBUILD_COMMAND).toBe('npm run rebuild:electron');
  });

  it('plans an Electron-only addon for Electron 41 (ABI 145) and leaves the Node build (ABI 115) alone', () => {
    const before = statSync(nodeBuild).mtimeMs;
    const out = execFileSync(path.join(ROOT, 'node_modules/.bin/tsx'), ['scripts/electron-native.ts', '--check'], { cwd: ROOT, encoding: 'utf8' });
    const plan = JSON.parse(out) as Record<string, unknown>;
    const electron = (JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')) as { version: string }).version;
    expect(plan['electron']).toBe(electron);
    expect(plan['electronAbi']).toBe('145');
    expect(plan['nodeAbi']).toBe(process.versions.modules);
    expect(plan['binding']).toBe(electronSqliteBinding(ROOT, { electron, platform: process.platform, arch: process.arch }));
    expect(plan['binding']).toBe(path.join(ROOT, 'node_modules/.flowlab-electron/better-sqlite3', `${electron}-${process.platform}-${process.arch}`, 'better_sqlite3.node'));
    expect(plan['nodeBuild']).toBe(nodeBuild);
    expect(plan['llamaPackage']).toBe(`@node-llama-cpp/${process.platform === 'darwin' ? 'mac' : process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`);
    expect(statSync(nodeBuild).mtimeMs).toBe(before);
  });

  it('the store opens through an explicit addon file, and a missing one is an error naming it', () => {
    const store = openStore(':memory:', { nativeBinding: nodeBuild });
    expect(store.listExperiments()).toEqual([]);
    store.close();
    expect(() => openStore(':memory:', { nativeBinding: '/nowhere/better_sqlite3.node' })).toThrow(/\/nowhere\/better_sqlite3\.node/);
  });

  it('a wrong-ABI addon names the file, both ABIs and the command that fixes it', () => {
    // Node's own message for an addon of another ABI (src/node_binding.cc), as Electron 41 prints it for the Node 20 build.
    const err = new Error(
      "The module '/home/u/flowlab/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
        'was compiled against a different Node.js version using\nNODE_MODULE_VERSION 115. This version of Node.js requires\n' +
        'NODE_MODULE_VERSION 145. Please try re-compiling or re-installing\nthe module (for instance, using `npm rebuild` or `npm install`).',
    );
    const text = explainAbiMismatch(err, { electron: '41.7.1', modules: '145' });
    expect(text).toBe(
      '/home/u/flowlab/node_modules/better-sqlite3/build/Release/better_sqlite3.node was built for ABI 115 (NODE_MODULE_VERSION 115, Node 20), ' +
        'but Electron 41.7.1 needs ABI 145. Run `npm run rebuild:electron` in the project folder (it downloads or builds ' +
        "Electron's better-sqlite3 once into node_modules/.flowlab-electron; needs the internet), then start Flowlab again.",
    );
    expect(explainAbiMismatch(new Error('SQLITE_CANTOPEN: unable to open database file'), { electron: '41.7.1', modules: '145' })).toBeUndefined();
  });

  it("finds npm's node-gyp beside Node on Windows (node.exe and npm side by side) and under lib/ elsewhere", () => {
    expect(npmNodeGypPath('C:\\Program Files\\nodejs\\node.exe', 'win32')).toBe('C:\\Program Files\\nodejs\\node_modules\\npm\\node_modules\\node-gyp\\bin\\node-gyp.js');
    expect(npmNodeGypPath('/usr/local/bin/node', 'darwin')).toBe('/usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
    expect(npmNodeGypPath('/usr/bin/node', 'linux', { npm_config_node_gyp: '/x/node-gyp.js' })).toBe('/x/node-gyp.js');
  });

  it('main opens the store through that addon and shows the explained mismatch', () => {
    const main = readFileSync(path.join(ROOT, 'electron/main.ts'), 'utf8');
    expect(main).toContain('openStore(file, binding ? { nativeBinding: binding } : {})');
    expect(main).toContain('explainAbiMismatch(err, { electron: process.versions.electron, modules: process.versions.modules })');
    expect(readFileSync(path.join(ROOT, 'electron/worker.ts'), 'utf8')).toContain('nativeBinding: config.sqliteBinding');
  });
});

describe('signing in the Forge config comes from the environment, and is skipped without it', () => {
  const KEYS = ['APPLE_SIGN_IDENTITY', 'APPLE_ID', 'APPLE_APP_SPECIFIC_PASSWORD', 'APPLE_TEAM_ID', 'WINDOWS_CERTIFICATE_FILE', 'WINDOWS_CERTIFICATE_PASSWORD'];
  const saved = Object.fromEntries(KEYS.map((k) => [k, process.env[k]]));
  const load = async () => {
    vi.resetModules();
    return (await import('../forge.config.ts')).default;
  };
  afterEach(() => {
    for (const k of KEYS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  });

  it('unsigned without the variables', async () => {
    for (const k of KEYS) delete process.env[k];
    const c = await load();
    expect(c.packagerConfig?.osxSign).toBeUndefined();
    expect(c.packagerConfig?.osxNotarize).toBeUndefined();
    const squirrel = c.makers!.find((m) => (m as { name?: string }).name === '@electron-forge/maker-squirrel') as { config: Record<string, unknown> };
    expect(squirrel.config['certificateFile']).toBeUndefined();
  });

  it('signs and notarises on macOS and signs Squirrel on Windows when they are set', async () => {
    Object.assign(process.env, { APPLE_SIGN_IDENTITY: 'Developer ID Application: X (TEAM1)', APPLE_ID: 'a@b.c', APPLE_APP_SPECIFIC_PASSWORD: 'pw', APPLE_TEAM_ID: 'TEAM1', WINDOWS_CERTIFICATE_FILE: '/k/cert.pfx', WINDOWS_CERTIFICATE_PASSWORD: 'secret' });
    const c = await load();
    expect((c.packagerConfig?.osxSign as { identity: string }).identity).toBe('Developer ID Application: X (TEAM1)');
    expect(c.packagerConfig?.osxNotarize).toEqual({ appleId: 'a@b.c', appleIdPassword: 'pw', teamId: 'TEAM1' });
    const squirrel = c.makers!.find((m) => (m as { name?: string }).name === '@electron-forge/maker-squirrel') as { config: Record<string, unknown> };
    expect(squirrel.config).toMatchObject({ certificateFile: '/k/cert.pfx', certificatePassword: 'secret' });
  });
});

describe('the .deb carries the AppArmor profile Electron documents for Ubuntu 24.04+', () => {
  it('postinst and postrm are wired in, parse as sh, and grant userns to the installed binary', () => {
    const deb = config.makers!.find((m) => (m as { name?: string }).name === '@electron-forge/maker-deb') as { config: { options: { name: string; bin: string; scripts: Record<string, string> } } };
    const { scripts, name, bin } = deb.config.options;
    expect(Object.keys(scripts).sort()).toEqual(['postinst', 'postrm']);
    for (const f of Object.values(scripts)) execFileSync('sh', ['-n', f]);
    const postinst = readFileSync(scripts['postinst']!, 'utf8');
    // electron-installer-debian installs the app in /usr/lib/<name>/ with the binary <bin>.
    expect(postinst).toContain(`profile flowlab /usr/lib/${name}/${bin} flags=(unconfined) {`);
    expect(postinst).toContain('  userns,');
    expect(postinst).toContain('abi <abi/4.0>,');
    expect(readFileSync(scripts['postrm']!, 'utf8')).toContain('apparmor_parser --remove');
  });
});
