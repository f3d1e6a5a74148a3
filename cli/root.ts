/**
 * The repository root (the folder holding `bin/flowlab.js`, `examples/`, `out/`), found from a
 * module's own URL by walking up: the same answer from the TypeScript sources (cli/, cli/commands/)
 * and from the bundle (out/cli/chunk-*.js, scripts/build-cli.mjs), whatever depth the caller sits at.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest folder at or above `moduleUrl`'s folder that holds `bin/flowlab.js`.
 * Errors: none; falls back to two folders up (the layout of cli/commands and out/cli) when no such folder exists.
 */
export function repoRoot(moduleUrl: string): string {
  const start = path.dirname(fileURLToPath(moduleUrl));
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'bin', 'flowlab.js'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start, '../..');
  }
}
