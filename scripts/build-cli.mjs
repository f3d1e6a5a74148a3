#!/usr/bin/env node
/**
 * Builds the CLI bundle that `bin/flowlab.js` runs: cli/main.ts and everything it imports,
 * bundled by esbuild into out/cli/ (ES modules, Node 20, code split at every dynamic
 * `import()` so a command's heavy half is its own chunk and loads only when that command runs).
 *
 * Pure-JS dependencies are bundled in (one file to parse instead of hundreds to resolve).
 * Native and heavy packages stay external and load from node_modules at run time: anything
 * shipping a `.node` addon (better-sqlite3, node-llama-cpp and its platform packages), the
 * tfjs packages (wasm binaries beside their JS), electron, and the bench-only peers.
 *
 * Output: out/cli/main.js (the entry) plus chunk-*.js files, out/cli/meta.json (esbuild's
 * metafile, for checking what the start-up path loads) and out/cli/sources.txt (the repo files
 * bundled, which bin/flowlab.js checks for edits newer than the bundle). Paths that code resolves from
 * `import.meta.url` (cli/commands/serve.ts: the repo root, two folders up) resolve the same
 * from out/cli/. Run by `npm run build:cli`, `npm run build`, `npm test` and npm's `prepare`.
 * Exits non-zero with esbuild's messages when the build fails.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'out/cli');

/** Packages never bundled: native addons, wasm-carrying or very large modules, app-only peers. */
export const EXTERNAL = [
  'better-sqlite3',
  'node-llama-cpp',
  '@node-llama-cpp/*',
  '@tensorflow/*',
  'electron',
  '@langchain/*',
];

/** `--if-available` (npm's `prepare`): without esbuild installed (production install), skip quietly. */
let build;
try {
  ({ build } = await import('esbuild'));
} catch (e) {
  if (!process.argv.includes('--if-available')) throw e;
  console.log('build-cli: esbuild is not installed; bin/flowlab.js will run the sources through tsx');
  process.exit(0);
}

rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'cli/main.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  // Bundled CommonJS dependencies may call require(); give the ESM bundle one.
  banner: { js: "import { createRequire as __flowlabCreateRequire } from 'node:module'; const require = __flowlabCreateRequire(import.meta.url);" },
  chunkNames: 'chunk-[hash]',
  sourcemap: 'linked',
  metafile: true,
  logLevel: 'warning',
  legalComments: 'none',
  minify: true,
});
writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
writeFileSync(path.join(outdir, 'package.json'), '{ "type": "module" }\n');
// The repo's own source files in the bundle, one per line: bin/flowlab.js runs the sources
// instead of the bundle when any of them is newer than the bundle (an edit since the build).
const sources = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/'));
writeFileSync(path.join(outdir, 'sources.txt'), sources.join('\n') + '\n');
