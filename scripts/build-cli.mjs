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
 * The pure-JS CommonJS libraries (VENDOR: yaml and ajv, which every workflow command runs, and
 * the terminal ones, cli-table3, cli-progress, commander) are
 * bundled apart, as CommonJS, into out/cli/vendor.cjs: the chunks import them through small shim
 * modules that read the library from a loader bin/flowlab.js installs, which runs vendor.cjs
 * through a V8 code cache (node:vm Script `cachedData`; Node 20 has no compile cache for ES
 * modules), so a command no longer pays to compile their code on every start. Without the bin's
 * loader (the bundle imported directly) the shims `require` vendor.cjs plainly. One copy of each
 * library either way. (zod stays in the ES chunks: tree-shaken there it is a fifth of its
 * CommonJS build, whose module-level set-up alone outweighs what the cache saves.)
 *
 * Output: out/cli/main.js (the entry), out/cli/validateWorker.js (the lab host's validation worker,
 * host/workflowValidator.ts) plus chunk-*.js files, out/cli/vendor.cjs, out/cli/meta.json (esbuild's
 * metafile, for checking what the start-up path loads) and out/cli/sources.txt (the repo files
 * bundled, which bin/flowlab.js checks for edits newer than the bundle). Paths that code resolves from
 * `import.meta.url` (cli/commands/serve.ts: the repo root, two folders up) resolve the same
 * from out/cli/. Run by `npm run build:cli`, `npm run build`, `npm test` and npm's `prepare`.
 * Exits non-zero with esbuild's messages when the build fails.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
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

/** Pure-JS CommonJS libraries (and their subpaths) bundled into out/cli/vendor.cjs, loaded with a code cache. */
export const VENDOR = ['yaml', 'ajv', 'cli-table3', 'cli-progress', 'commander'];

/** The global the shims call for vendor.cjs's exports (bin/flowlab.js installs it). */
export const VENDOR_LOADER = 'flowlab.vendor';

const requireFromRoot = createRequire(path.join(root, 'package.json'));

/** JavaScript string literal of `s`. */
const lit = (s) => JSON.stringify(s);

/**
 * esbuild plugin: every import of a VENDOR package (or subpath) resolves to a shim that exports
 * that package's CommonJS exports, each name read once (as Node's import of a CommonJS module
 * gives them), `default` being the whole `module.exports`. Records the specifiers it shimmed.
 */
function vendorShims(specifiers) {
  const filter = new RegExp(`^(${VENDOR.map((v) => v.replace(/[/.]/g, '\\$&')).join('|')})(/.*)?$`);
  return {
    name: 'flowlab-vendor-shims',
    setup(b) {
      b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'flowlab-vendor' }));
      b.onResolve({ filter: /^\.\/vendor\.cjs$/ }, (args) => ({ path: args.path, external: true }));
      b.onLoad({ filter: /.*/, namespace: 'flowlab-vendor' }, (args) => {
        specifiers.add(args.path);
        const names = Object.keys(requireFromRoot(args.path)).filter((n) => n !== 'default' && n !== '__esModule');
        const lines = [
          `const load = globalThis[Symbol.for(${lit(VENDOR_LOADER)})] ?? (() => require('./vendor.cjs'));`,
          `const m = load()[${lit(args.path)}];`,
          ...names.map((n, i) => `const v${i} = m[${lit(n)}];`),
          `export { ${names.map((n, i) => `v${i} as ${lit(n)}`).join(', ')} };`,
          'export default m;',
        ];
        return { contents: lines.join('\n') + '\n', loader: 'js' };
      });
    },
  };
}

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
const vendored = new Set();
const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'cli/main.ts', validateWorker: 'host/validateWorker.ts' },
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
  plugins: [vendorShims(vendored)],
});
// vendor.cjs: each shimmed specifier as a getter, so a library's code runs only when first used.
await build({
  absWorkingDir: root,
  stdin: {
    contents: [...vendored].sort().map((s) => `Object.defineProperty(exports, ${lit(s)}, { enumerable: true, get: () => require(${lit(s)}) });`).join('\n'),
    resolveDir: root,
    sourcefile: 'vendor.cjs',
    loader: 'js',
  },
  outfile: path.join(outdir, 'vendor.cjs'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  legalComments: 'none',
  minify: true,
});
writeFileSync(path.join(outdir, 'meta.json'), JSON.stringify(result.metafile));
writeFileSync(path.join(outdir, 'package.json'), '{ "type": "module" }\n');
// The repo's own source files in the bundle, one per line: bin/flowlab.js runs the sources
// instead of the bundle when any of them is newer than the bundle (an edit since the build).
// (Inputs in a plugin's namespace, `flowlab-vendor:zod`, are no files.)
const sources = Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/') && !/^[a-z-]+:/.test(f));
writeFileSync(path.join(outdir, 'sources.txt'), sources.join('\n') + '\n');
