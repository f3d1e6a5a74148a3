/** What a run ran on, for reproducibility fingerprints (core/repro): code and native library versions. */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The code and native library versions (core/repro fingerprints): Flowlab's package version and
 * git commit (with `dirty` when the working tree has changes; both read once per process), Node,
 * node-llama-cpp and the llama.cpp release its binaries were built from, better-sqlite3 and
 * TensorFlow.js. A version that cannot be read is `unknown`.
 */
export function reproEnvironment(): { code: Record<string, string>; native: Record<string, string> } {
  return (environmentCache ??= readEnvironment());
}
let environmentCache: { code: Record<string, string>; native: Record<string, string> } | undefined;

function readEnvironment(): { code: Record<string, string>; native: Record<string, string> } {
  const require = createRequire(import.meta.url);
  const pkgVersion = (dir: string): string => {
    try {
      return (JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
    } catch {
      return 'unknown';
    }
  };
  const moduleDir = (name: string): string | undefined => {
    try {
      let dir = path.dirname(require.resolve(name));
      while (!existsSync(path.join(dir, 'package.json')) || path.basename(dir) === 'dist') dir = path.dirname(dir);
      return dir;
    } catch {
      return undefined;
    }
  };
  const llamaDir = moduleDir('node-llama-cpp');
  let llamaCpp = 'unknown';
  try {
    if (llamaDir) llamaCpp = (JSON.parse(readFileSync(path.join(llamaDir, 'llama', 'binariesGithubRelease.json'), 'utf8')) as { release?: string }).release ?? 'unknown';
  } catch {
    // left unknown
  }
  const version = (name: string) => {
    const dir = moduleDir(name);
    return dir ? pkgVersion(dir) : 'unknown';
  };
  const root = findUp(path.dirname(fileURLToPath(import.meta.url)), 'package.json');
  const code: Record<string, string> = { flowlab: root ? pkgVersion(root) : 'unknown', commit: 'unknown' };
  if (root) {
    try {
      code.commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).toString().trim() || 'unknown';
      const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).toString().trim();
      code.dirty = dirty ? 'yes' : 'no';
    } catch {
      // not a git checkout: the package version alone
    }
  }
  return {
    code,
    native: {
      node: process.versions.node,
      'node-llama-cpp': llamaDir ? pkgVersion(llamaDir) : 'unknown',
      'llama.cpp': llamaCpp,
      'better-sqlite3': version('better-sqlite3'),
      'tfjs-core': version('@tensorflow/tfjs-core'),
      platform: `${process.platform}-${process.arch}`,
    },
  };
}

/** The nearest folder at or above `dir` holding `file` whose package.json names flowlab. */
function findUp(dir: string, file: string): string | undefined {
  for (let d = dir; ; d = path.dirname(d)) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(d, file), 'utf8')) as { name?: string };
      if (pkg.name === 'flowlab') return d;
    } catch {
      // keep looking
    }
    if (path.dirname(d) === d) return undefined;
  }
}

