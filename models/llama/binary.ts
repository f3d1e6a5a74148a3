/**
 * Where node-llama-cpp's prebuilt llama.cpp binary for this machine should be, whether it is
 * there, and what to say when it is missing or does not load. node-llama-cpp 3.x ships the
 * binaries as optional platform packages (`@node-llama-cpp/<platform>-<arch>[-gpu]`; the table
 * is `getPrebuiltBinariesPackageDirectoryForBuildOptions` in its
 * dist/bindings/utils/compileLLamaCpp.js); an install that skipped optional dependencies (or
 * copied node_modules from another platform) lacks it, and `getLlama` then fails with a bare
 * `NoBinaryFoundError`. No node-llama-cpp import here: the check must work when the binding cannot.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { llamaCpuPackage } from './platform.ts';

/** What {@link llamaBinaryStatus} found. */
export interface LlamaBinaryStatus {
  /** True when the platform package resolves (it may still fail to load; see {@link explainLlamaStartFailure}). */
  ok: boolean;
  /** The CPU binary package for this platform, e.g. `@node-llama-cpp/linux-x64`; undefined on a platform with none. */
  package?: string;
  /** The package's folder when found. */
  found?: string;
  /** The folders searched (Node's module resolution paths from node-llama-cpp's own folder). */
  searched: string[];
  /** The command that installs it. */
  fix: string;
  /** One line for people: what is missing, where it was looked for, and the fix. Undefined when `ok`. */
  message?: string;
}

/** The folder of package `pkg` among `searched` (its candidate folders, in Node's resolution order), or undefined when it is not installed. */
export type PackageResolver = (pkg: string, searched: readonly string[]) => string | undefined;

/**
 * The binary package node-llama-cpp loads on `platform`/`arch` for a CPU-only model (its own
 * table, models/llama/platform.ts: `@node-llama-cpp/mac-arm64-metal` on Apple Silicon, where
 * no other build is published; GPU builds need this one as their fallback elsewhere).
 */
export function llamaBinaryPackage(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string | undefined {
  return llamaCpuPackage(platform, arch);
}

const requireHere = createRequire(import.meta.url);

/** The first of `dirs` holding a `package.json`. */
const firstInstalled: PackageResolver = (_pkg, dirs) => dirs.find((d) => existsSync(path.join(d, 'package.json')));

/** Where `pkg` would be installed, seen from `from` (a file): Node's resolution paths, each joined with the name. */
function candidates(pkg: string, from: NodeJS.Require = requireHere): string[] {
  return (from.resolve.paths(pkg) ?? []).map((p) => path.join(p, pkg));
}

/** node-llama-cpp's own folder (where npm puts its optional platform packages beside it) and its version. */
function nodeLlama(): { dir?: string; version?: string } {
  const dir = firstInstalled('node-llama-cpp', candidates('node-llama-cpp'));
  if (!dir) return {};
  try {
    return { dir, version: (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version };
  } catch {
    return { dir };
  }
}

/**
 * Checks that this platform's llama.cpp binary package is installed. `resolve` is injectable
 * (tests simulate a missing package); `searched` defaults to Node's resolution paths for it.
 */
export function llamaBinaryStatus(options: { resolve?: PackageResolver; searched?: string[]; platform?: NodeJS.Platform; arch?: string } = {}): LlamaBinaryStatus {
  const pkg = llamaBinaryPackage(options.platform, options.arch);
  const { dir, version } = nodeLlama();
  // Resolution as node-llama-cpp's own `import()` of the package: from its folder upwards.
  const searched = options.searched ?? (pkg ? candidates(pkg, dir ? createRequire(path.join(dir, 'package.json')) : requireHere) : []);
  if (!pkg) {
    const fix = 'npx --no node-llama-cpp source download   (builds llama.cpp for this machine; needs cmake and a compiler)';
    return { ok: false, searched, fix, message: `node-llama-cpp has no prebuilt llama.cpp binary for ${options.platform ?? process.platform}-${options.arch ?? process.arch}; build one with: ${fix}` };
  }
  const fix = `npm install --no-save ${pkg}${version ? `@${version}` : ''}`;
  const found = (options.resolve ?? firstInstalled)(pkg, searched);
  if (found) return { ok: true, package: pkg, found, searched, fix };
  return {
    ok: false,
    package: pkg,
    searched,
    fix,
    message: `The llama.cpp binary package ${pkg} (node-llama-cpp's prebuilt binary for this machine) is not installed; searched ${searched.slice(0, 3).join(', ')}${searched.length > 3 ? `, and ${searched.length - 3} more` : ''}. Install it with \`${fix}\` (an install that skipped optional dependencies leaves it out), then start again.`,
  };
}

/**
 * The message for a runtime that failed to start (`getLlama` threw `err`): the missing package
 * with the folders searched and the fix when it is not installed; when it is installed but does
 * not load (another platform's or C library's build, a damaged file), its folder, the loader's
 * own words and the reinstall command.
 */
export function explainLlamaStartFailure(err: unknown, status: LlamaBinaryStatus = llamaBinaryStatus()): string {
  const text = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  if (!status.ok) return `${status.message} (node-llama-cpp said: ${text})`;
  return `The llama.cpp binary in ${status.found} (${status.package}) did not load: ${text}. It may be built for another platform, C library or CPU; reinstall it with \`${status.fix.replace('--no-save', '--no-save --force')}\`.`;
}
