/**
 * Electron Forge configuration (Forge 8, a devDependency; it runs under Node >= 22.13):
 *
 *   npm run package    # electron-vite build, then the app for this OS in release/<name>-<os>-<arch>/
 *   npm run make       # plus installers: zip (all), .deb (Linux), .dmg (macOS), Squirrel (Windows)
 *
 * Layout: electron-vite builds main, preload and renderer into out/ (package.json `main` is
 * out/main/index.js; the CLI bundle is out/cli/). Forge writes into release/ instead of its
 * default out/, because @electron/packager leaves Forge's own output folder out of the app
 * (`ignoredOutDirs`) and refuses an app whose main entry lies in it.
 *
 * In the app (app.asar): out/main, out/preload, out/renderer, examples/ (the example list),
 * package.json and the production node_modules. Unpacked beside it (app.asar.unpacked), because
 * a child process or a native loader needs real files: every `.node` addon, node-llama-cpp and
 * its binary packages, better-sqlite3, pyodide (the sandbox's interpreter processes read it from
 * disk and use it as their working directory) and tfjs's wasm backend (its `.wasm` files).
 * Only this OS's llama.cpp binary packages go in (models/llama/platform.ts): CPU and Vulkan, and
 * CUDA (500+ MB) only with FLOWLAB_PACKAGE_CUDA=1.
 *
 * Signing, only when its environment variables are set (skipped otherwise, and the app is then
 * unsigned: macOS Gatekeeper blocks a downloaded unsigned app, Windows SmartScreen warns):
 *   macOS:   APPLE_SIGN_IDENTITY (a "Developer ID Application" identity in the keychain), and for
 *            notarisation APPLE_ID, APPLE_APP_SPECIFIC_PASSWORD, APPLE_TEAM_ID.
 *   Windows: WINDOWS_CERTIFICATE_FILE (.pfx) and WINDOWS_CERTIFICATE_PASSWORD (Squirrel signs).
 * Offline or test packaging: FLOWLAB_ELECTRON_ZIP_DIR names a folder holding
 * electron-v<version>-<os>-<arch>.zip (packager's `electronZipDir`); FLOWLAB_SKIP_BUNDLE_BUILD=1
 * uses the out/ bundles as built; FLOWLAB_SKIP_NATIVE_REBUILD=1 skips rebuilding better-sqlite3
 * for Electron's ABI (needs Electron's headers from the internet; the packaging test sets it).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ForgeConfig } from '@electron-forge/shared-types';
import { FusesPlugin } from '@electron-forge/plugin-fuses';
import { FuseV1Options, FuseVersion } from '@electron/fuses';
import { llamaPackagesFor } from './models/llama/platform.ts';

const root = path.dirname(fileURLToPath(import.meta.url));
const env = process.env;

/** Forge's output folder (not out/, where electron-vite builds the app). */
export const FORGE_OUT_DIR = 'release';

/**
 * The fuses flipped in the packaged binary (Electron's "Fuses" tutorial): cookies encrypted, no
 * `NODE_OPTIONS` and no `--inspect` flags, the asar's integrity checked (macOS and Windows) and
 * the app loaded only from it, no extra privileges for `file://` (the page is served on
 * `app://flowlab/`, electron/main.ts).
 *
 * RunAsNode stays ON, on purpose. node-llama-cpp tests its llama.cpp binary in a child process
 * before loading it (`testBindingBinary`, every time on Linux, for GPU builds on Windows). It forks
 * through `utilityProcess` only in Electron's main process; the lab's models load in a utility
 * process (electron/worker.ts), where `utilityProcess` does not exist, so it falls back to
 * `child_process.fork` of the app's own binary with `ELECTRON_RUN_AS_NODE`. With the fuse off that
 * child starts a second Flowlab instead, which quits on the single-instance lock: the binary
 * "fails" its test and no local model loads (electron/llamaFork.test.ts reads this from
 * node-llama-cpp's installed code). Flowlab's own child processes (the code sandbox) start through
 * `utilityProcess` and do not need the fuse (models/sandbox/launcher.ts).
 */
export const FUSES = {
  version: FuseVersion.V1,
  [FuseV1Options.RunAsNode]: true,
  [FuseV1Options.EnableCookieEncryption]: true,
  [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
  [FuseV1Options.EnableNodeCliInspectArguments]: false,
  [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
  [FuseV1Options.OnlyLoadAppFromAsar]: true,
  [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
} as const;

/** Files kept outside the asar (a minimatch glob, matched against each file's path). */
export const UNPACK = `{${[
  '**/*.node',
  '**/node_modules/node-llama-cpp/**',
  '**/node_modules/@node-llama-cpp/**',
  '**/node_modules/better-sqlite3/**',
  '**/node_modules/pyodide/**',
  '**/node_modules/@tensorflow/tfjs-backend-wasm/**',
].join(',')}}`;

/** Top-level paths that go into the app (relative to the project, starting with `/`). */
const KEEP = [/^\/out(\/(main|preload|renderer)(\/|$)|$)/, /^\/examples(\/|$)/, /^\/node_modules(\/|$)/, /^\/package\.json$/];
/** Never in the app: caches and Electron-only dev builds under node_modules. */
const DROP = [/^\/node_modules\/\.(cache|flowlab-electron|bin)(\/|$)/];

/** The OS/arch pairs being packaged (set by the prePackage hook before packager copies files). */
const targets: Array<{ platform: string; arch: string }> = [];

/** True for llama.cpp binary packages not needed by any target (another OS's, or CUDA unless asked for). */
function foreignLlamaPackage(p: string): boolean {
  const m = /^\/node_modules\/(@node-llama-cpp\/[^/]+)/.exec(p);
  if (!m || targets.length === 0) return false;
  const wanted = new Set(targets.flatMap((t) => llamaPackagesFor('auto', t.platform, t.arch)));
  if (env['FLOWLAB_PACKAGE_CUDA'] !== '1') for (const w of [...wanted]) if (w.includes('-cuda')) wanted.delete(w);
  return !wanted.has(m[1]!);
}

/** packager's `ignore`: true leaves the path out of the app. */
export function ignorePath(p: string): boolean {
  if (p === '') return false;
  if (!KEEP.some((re) => re.test(p))) return true;
  return DROP.some((re) => re.test(p)) || foreignLlamaPackage(p);
}

/** Sets the targets the ignore filter keeps llama.cpp packages for (Forge passes `arch` as e.g. `x64,arm64`). */
export function setPackagingTargets(platform: string, arch: string): void {
  targets.length = 0;
  for (const a of arch.split(',')) targets.push({ platform, arch: a.trim() });
}

const require = createRequire(import.meta.url);

/** Builds main, preload and renderer into out/ with electron-vite (the same as `npm run build`). */
function buildBundles(): void {
  if (env['FLOWLAB_SKIP_BUNDLE_BUILD'] === '1') {
    if (!existsSync(path.join(root, 'out/main/index.js'))) throw new Error('FLOWLAB_SKIP_BUNDLE_BUILD=1 but out/main/index.js is missing: run `npx electron-vite build` first');
    return;
  }
  const cli = require.resolve('electron-vite/bin/electron-vite.js');
  execFileSync(process.execPath, [cli, 'build'], { stdio: 'inherit', cwd: root });
}

/** macOS signing and notarisation from the environment; absent variables: unsigned. */
function macSigning(): Pick<NonNullable<ForgeConfig['packagerConfig']>, 'osxSign' | 'osxNotarize'> {
  const identity = env['APPLE_SIGN_IDENTITY'];
  if (!identity) return {};
  const { APPLE_ID: appleId, APPLE_APP_SPECIFIC_PASSWORD: appleIdPassword, APPLE_TEAM_ID: teamId } = env;
  return {
    osxSign: { identity, optionsForFile: () => ({ hardenedRuntime: true, entitlements: path.join(root, 'build/entitlements.mac.plist') }) },
    ...(appleId && appleIdPassword && teamId ? { osxNotarize: { appleId, appleIdPassword, teamId } } : {}),
  };
}

/** Squirrel's code signing from the environment; absent: unsigned. */
function windowsSigning(): Record<string, string> {
  const file = env['WINDOWS_CERTIFICATE_FILE'];
  return file ? { certificateFile: file, certificatePassword: env['WINDOWS_CERTIFICATE_PASSWORD'] ?? '' } : {};
}

const config: ForgeConfig = {
  outDir: env['FLOWLAB_FORGE_OUT_DIR'] ?? FORGE_OUT_DIR,
  packagerConfig: {
    name: 'Flowlab',
    executableName: 'flowlab',
    appBundleId: 'org.flowlab.desktop',
    appCategoryType: 'public.app-category.developer-tools',
    icon: path.join(root, 'build/icons/icon'),
    appCopyright: 'Copyright © Flowlab contributors',
    win32metadata: { CompanyName: 'Flowlab contributors', ProductName: 'Flowlab', FileDescription: 'Flowlab' },
    asar: { unpack: UNPACK },
    ignore: ignorePath,
    prune: true,
    ...(env['FLOWLAB_ELECTRON_ZIP_DIR'] ? { electronZipDir: path.resolve(env['FLOWLAB_ELECTRON_ZIP_DIR']) } : {}),
    ...macSigning(),
  },
  // better-sqlite3 is a node-gyp addon: rebuilt for Electron's ABI. node-llama-cpp ships
  // Node-API prebuilds that Electron loads as they are.
  rebuildConfig: env['FLOWLAB_SKIP_NATIVE_REBUILD'] === '1' ? { onlyModules: [] } : { onlyModules: ['better-sqlite3'], force: true },
  makers: [
    { name: '@electron-forge/maker-zip', platforms: ['darwin', 'linux', 'win32'], config: {} },
    {
      name: '@electron-forge/maker-deb',
      platforms: ['linux'],
      config: {
        options: {
          name: 'flowlab',
          productName: 'Flowlab',
          bin: 'flowlab',
          categories: ['Development', 'Science'],
          icon: path.join(root, 'build/icons/icon.png'),
          // The AppArmor profile Electron documents for Ubuntu 24.04+ (docs/desktop.md).
          scripts: { postinst: path.join(root, 'build/linux/postinst'), postrm: path.join(root, 'build/linux/postrm') },
        },
      },
    },
    { name: '@electron-forge/maker-dmg', platforms: ['darwin'], config: { format: 'ULFO', icon: path.join(root, 'build/icons/icon.icns') } },
    {
      name: '@electron-forge/maker-squirrel',
      platforms: ['win32'],
      config: { name: 'flowlab', setupIcon: path.join(root, 'build/icons/icon.ico'), ...windowsSigning() },
    },
  ],
  plugins: [new FusesPlugin(FUSES)],
  hooks: {
    prePackage: async (_config, platform, arch) => {
      setPackagingTargets(platform, arch);
      buildBundles();
    },
  },
};

export default config;
