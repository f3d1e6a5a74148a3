/**
 * Electron Forge configuration: packages out/ (built by electron-vite) with the production
 * node_modules into an asar, unpacking the native modules, and makes zip, deb, dmg and Squirrel
 * installers.
 *
 * Why local types instead of `import type { ForgeConfig } from '@electron-forge/shared-types'`:
 * Forge is not installed in this repository. Forge 8 installs on Node 20 but refuses to run
 * (it needs Node >= 22.13), and Forge 7.11 cannot be installed here (a dependency is a GitHub
 * tarball). So packaging runs on a user's machine with Node 22.13+:
 *
 *   npm i -D @electron-forge/cli@8 @electron-forge/maker-zip@8 @electron-forge/maker-deb@8 \
 *            @electron-forge/maker-dmg@8 @electron-forge/maker-squirrel@8 @electron-forge/plugin-fuses@8 @electron/fuses
 *   npx electron-forge make
 *
 * Forge (7.8.1 and later) loads this .ts file itself (through jiti); the interfaces below
 * mirror the parts of Forge's `ForgeConfig` used here, so `tsc` checks the file without Forge.
 * Once Forge is a devDependency, replace them with the real type.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

/** A maker named by package, as Forge resolves it (`IForgeResolvableMaker`). */
interface ForgeMakerRef {
  name: string;
  /** Platforms this maker runs for; default: all it supports. */
  platforms?: NodeJS.Platform[];
  config?: Record<string, unknown>;
}

/** The subset of @electron/packager options used here (`packagerConfig`). */
interface PackagerConfig {
  name?: string;
  executableName?: string;
  appBundleId?: string;
  appCategoryType?: string;
  /** Pack the app into an asar; `unpack` is a minimatch glob of files kept outside it. */
  asar: boolean | { unpack?: string; unpackDir?: string };
  /** Return true to leave a path (relative to the project root, starting with `/`) out of the app. */
  ignore?: (path: string) => boolean;
  /** Drop devDependencies from the packaged node_modules. Default true. */
  prune?: boolean;
}

/** The subset of @electron/rebuild options used here (`rebuildConfig`). */
interface RebuildConfig {
  /** Rebuild only these native modules against Electron's ABI. */
  onlyModules?: string[];
  force?: boolean;
}

/** A plugin named by package, as Forge resolves it (`IForgeResolvablePlugin`). */
interface ForgePluginRef {
  name: string;
  config: Record<string, unknown>;
}

/**
 * The fuse wire of @electron/fuses (`FuseV1Options`: each fuse's index in the wire; the
 * package's own enum, mirrored because it needs Node 22 to install). `FuseVersion.V1` is '1'.
 */
export const FUSE_V1 = {
  RunAsNode: 0,
  EnableCookieEncryption: 1,
  EnableNodeOptionsEnvironmentVariable: 2,
  EnableNodeCliInspectArguments: 3,
  EnableEmbeddedAsarIntegrityValidation: 4,
  OnlyLoadAppFromAsar: 5,
  LoadBrowserProcessSpecificV8Snapshot: 6,
  GrantFileProtocolExtraPrivileges: 7,
} as const;

/**
 * The fuses flipped in the packaged binary (Electron's "Fuses" tutorial): no `ELECTRON_RUN_AS_NODE`
 * (the lab's worker is a `utilityProcess`, not a forked Node), cookies encrypted, no
 * `NODE_OPTIONS` and no `--inspect` flags, the asar's integrity checked and the app loaded only
 * from it, and no extra privileges for `file://` (the page is served on `app://flowlab/`,
 * electron/main.ts). To check on a packaged Linux build: node-llama-cpp tests its prebuilt
 * binary in a forked process before loading it (`testBindingBinary`), which needs RunAsNode
 * unless Electron's `utilityProcess.fork` is reachable; if loading a model fails there with a
 * binary-test error, that is this fuse.
 */
export const FUSES: Readonly<Record<string, unknown>> = {
  version: '1',
  [FUSE_V1.RunAsNode]: false,
  [FUSE_V1.EnableCookieEncryption]: true,
  [FUSE_V1.EnableNodeOptionsEnvironmentVariable]: false,
  [FUSE_V1.EnableNodeCliInspectArguments]: false,
  [FUSE_V1.EnableEmbeddedAsarIntegrityValidation]: true,
  [FUSE_V1.OnlyLoadAppFromAsar]: true,
  [FUSE_V1.GrantFileProtocolExtraPrivileges]: false,
};

/** Forge's config shape, as far as this file uses it (mirrors `ForgeConfig` of @electron-forge/shared-types). */
interface ForgeConfigLike {
  packagerConfig: PackagerConfig;
  rebuildConfig: RebuildConfig;
  makers: ForgeMakerRef[];
  plugins: ForgePluginRef[];
  hooks: {
    /** Runs before packaging starts. */
    prePackage?: (forgeConfig: unknown, platform: string, arch: string) => Promise<void>;
  };
}

/**
 * Files left outside the asar: node-llama-cpp loads its prebuilt llama.cpp binaries (and Metal /
 * CUDA / Vulkan side files) from disk, and better-sqlite3's `.node` addon cannot be loaded from
 * inside an archive.
 */
const UNPACK = '**/{node_modules/node-llama-cpp,node_modules/@node-llama-cpp,node_modules/better-sqlite3}/**';

/** Top-level paths that go into the app: the built bundles, package.json and the production deps. */
const KEEP = [/^\/out(\/|$)/, /^\/node_modules(\/|$)/, /^\/package\.json$/];

const require = createRequire(import.meta.url);

/** Builds main, preload and renderer into out/ with electron-vite (the same as `npm run build`). */
function buildBundles(): void {
  const cli = require.resolve('electron-vite/bin/electron-vite.js');
  execFileSync(process.execPath, [cli, 'build'], { stdio: 'inherit' });
}

const config = {
  packagerConfig: {
    name: 'Flowlab',
    executableName: 'flowlab',
    appBundleId: 'org.flowlab.desktop',
    appCategoryType: 'public.app-category.developer-tools',
    asar: { unpack: UNPACK },
    ignore: (path) => path !== '' && !KEEP.some((re) => re.test(path)),
    prune: true,
  },
  // better-sqlite3 is a node-gyp addon: rebuild it for Electron's ABI. node-llama-cpp ships
  // Node-API prebuilds that Electron loads as they are.
  rebuildConfig: { onlyModules: ['better-sqlite3'], force: true },
  makers: [
    { name: '@electron-forge/maker-zip', platforms: ['darwin', 'linux', 'win32'] },
    {
      name: '@electron-forge/maker-deb',
      platforms: ['linux'],
      config: { options: { name: 'flowlab', productName: 'Flowlab', bin: 'flowlab', categories: ['Development', 'Science'] } },
    },
    { name: '@electron-forge/maker-dmg', platforms: ['darwin'], config: { format: 'ULFO' } },
    { name: '@electron-forge/maker-squirrel', platforms: ['win32'], config: { name: 'flowlab' } },
  ],
  plugins: [{ name: '@electron-forge/plugin-fuses', config: FUSES }],
  hooks: {
    prePackage: async () => buildBundles(),
  },
} satisfies ForgeConfigLike;

export default config;
