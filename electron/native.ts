/**
 * Native modules under Electron, as pure functions (no Electron import) shared by the main
 * process and `scripts/electron-native.ts` (run by `npm start` / `npm run dev`).
 *
 * `npm ci` builds better-sqlite3 for the Node that runs the CLI (Node 20: ABI 115); Electron 41
 * loads only addons built for its own ABI (145). So the launch scripts put an Electron build of
 * the addon in an Electron-only place, `node_modules/.flowlab-electron/better-sqlite3/<electron
 * version>-<platform>-<arch>/better_sqlite3.node`, and main and the lab's worker open the store
 * through it (better-sqlite3's `nativeBinding` option): the CLI's Node build is never touched.
 * A packaged app needs none of this (Forge rebuilds the addon in place, forge.config.ts).
 * node-llama-cpp ships Node-API prebuilds (ABI-stable), loaded by Electron as they are; only its
 * platform package must be installed.
 */
import path from 'node:path';
import { llamaCpuPackage } from '../models/llama/platform.ts';
import { errorMessage } from '../core/errors.ts';

/** The runtime an addon is built for. */
export interface NativeTarget {
  /** Electron's version, e.g. `41.7.1`. */
  electron: string;
  /** `process.platform`, e.g. `linux`. */
  platform: string;
  /** `process.arch`, e.g. `x64`. */
  arch: string;
}

/** The folder under the project's node_modules that holds Electron-only native builds. */
export const ELECTRON_NATIVE_DIR = path.join('node_modules', '.flowlab-electron');

/** Where the Electron build of better-sqlite3's addon lives for `target`, under the project `root`. */
export function electronSqliteBinding(root: string, target: NativeTarget): string {
  return path.join(root, ELECTRON_NATIVE_DIR, 'better-sqlite3', `${target.electron}-${target.platform}-${target.arch}`, 'better_sqlite3.node');
}

/**
 * The package of node-llama-cpp's prebuilt llama.cpp binary that a CPU-only model loads on this
 * machine (models/llama/platform.ts, read from node-llama-cpp's own resolution code):
 * `@node-llama-cpp/mac-arm64-metal` on Apple Silicon (there is no `mac-arm64` package; checking
 * for one warned falsely on every start there), `@node-llama-cpp/win-x64` on 64-bit Windows, and
 * so on; undefined where node-llama-cpp publishes none.
 */
export function llamaPlatformPackage(platform: string, arch: string): string | undefined {
  return llamaCpuPackage(platform, arch);
}

/**
 * node-gyp as bundled with npm beside a Node binary, for a compile when no prebuilt addon can be
 * downloaded: `<prefix>/lib/node_modules/npm/...` on macOS and Linux (Node in `<prefix>/bin`), but
 * `<node folder>\node_modules\npm\...` on Windows (node.exe and npm side by side in
 * `C:\Program Files\nodejs`). `npm_config_node_gyp` (set by npm for scripts) wins when present.
 */
export function npmNodeGypPath(execPath: string, platform: string, env: Record<string, string | undefined> = {}): string {
  if (env['npm_config_node_gyp']) return env['npm_config_node_gyp'];
  const p = platform === 'win32' ? path.win32 : path.posix;
  const dir = p.dirname(execPath);
  const npm = platform === 'win32' ? p.join(dir, 'node_modules', 'npm') : p.join(dir, '..', 'lib', 'node_modules', 'npm');
  return p.join(npm, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
}

/** The command that puts the Electron build in place (package.json `rebuild:electron`). */
export const REBUILD_COMMAND = 'npm run rebuild:electron';

/**
 * A message for a native addon that failed to load because it was built for another ABI: names
 * the addon file, the ABI it was built for and the ABI this runtime needs (Node's
 * "NODE_MODULE_VERSION <built>. This version of Node.js requires NODE_MODULE_VERSION <needed>"),
 * and the command that fixes it. Undefined for any other error (the caller shows it as it is).
 */
export function explainAbiMismatch(err: unknown, runtime: { electron?: string; modules: string }): string | undefined {
  const text = errorMessage(err);
  const m = /NODE_MODULE_VERSION (\d+)[\s\S]*?requires\s+NODE_MODULE_VERSION (\d+)/.exec(text);
  if (!m) return undefined;
  const file = /The module '([^']+)'/.exec(text)?.[1] ?? 'a native addon';
  const needs = runtime.electron ? `Electron ${runtime.electron} needs ABI ${m[2]}` : `this runtime needs ABI ${m[2]}`;
  return (
    `${file} was built for ABI ${m[1]} (NODE_MODULE_VERSION ${m[1]}, ${m[1] === '115' ? 'Node 20' : 'another runtime'}), but ${needs}. ` +
    `Run \`${REBUILD_COMMAND}\` in the project folder (it downloads or builds Electron's better-sqlite3 once into ${ELECTRON_NATIVE_DIR}; needs the internet), then start Flowlab again.`
  );
}
