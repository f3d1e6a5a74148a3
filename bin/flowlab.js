#!/usr/bin/env node
// The flowlab CLI. Runs the prebuilt bundle out/cli/main.js (scripts/build-cli.mjs; made by
// `npm run build`, `npm test` and npm's `prepare` step). Development path: the TypeScript
// sources through tsx's loader, taken with FLOWLAB_DEV=1, when the bundle is missing, or when a
// bundled source file (out/cli/sources.txt) was edited after the bundle was built. The bundle's
// vendored libraries (out/cli/vendor.cjs) load on first use through a V8 code cache (loadVendor).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const root = new URL('../', import.meta.url);
const bundle = new URL('out/cli/main.js', root);
const rootDir = fileURLToPath(root);
const vendorFile = path.join(rootDir, 'out/cli/vendor.cjs');

/** True when the bundle exists and no source file it was built from is newer (a few ms of stats). */
function bundleFresh() {
  if (process.env.FLOWLAB_DEV === '1') return false;
  try {
    const built = statSync(bundle).mtimeMs;
    statSync(vendorFile); // built with main.js; throws when missing
    // Plain paths, not URLs: ~180 files, and a URL per file cost more than its stat.
    for (const file of readFileSync(path.join(rootDir, 'out/cli/sources.txt'), 'utf8').split('\n')) {
      if (file && statSync(path.join(rootDir, file), { throwIfNoEntry: false })?.mtimeMs > built) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * `train-loop` reloads llama.cpp on new GGUF files every iteration. glibc's malloc raises its
 * mmap threshold each time it frees a large mmap'ed block (mallopt(3), M_MMAP_THRESHOLD), so the
 * contexts of later iterations come from the heap, whose freed space fragments and is not given
 * back: resident memory grew ~10 MB per iteration. A fixed threshold (the documented
 * MALLOC_MMAP_THRESHOLD_ variable, read when the process starts; 128 KiB, the default start value) keeps larger blocks
 * in mmap, returned to the system on free. So on Linux the command runs in a child process with
 * it set. SIGTERM and SIGHUP are passed on; Ctrl-C reaches the child from the terminal itself.
 */
async function rerunWithMmapThreshold() {
  if (process.platform !== 'linux' || process.argv[2] !== 'train-loop' || process.env.MALLOC_MMAP_THRESHOLD_) return false;
  // Imported here, not at the top: node:child_process costs every other command ~1-2 ms to load.
  const { spawn } = await import('node:child_process');
  // fd 3: a pipe the child watches (watchParentPipe), so it ends when this process dies, SIGKILL included.
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['inherit', 'inherit', 'inherit', 'pipe'],
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: String(128 << 10), [PARENT_PIPE_ENV]: '3' },
  });
  process.on('SIGINT', () => {}); // the terminal sends it to the child too; wait for it
  for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    }
    else process.exitCode = code ?? 1;
  });
  return true;
}

/**
 * Runs out/cli/vendor.cjs (the bundled yaml, ajv, cli-table3, cli-progress; scripts/build-cli.mjs) as CommonJS
 * through node:vm with a V8 code cache, and returns its exports. The cache holds the bytecode of
 * every function the command compiled (`Script#createCachedData` after the command ran), so the
 * next run of the same command deserializes instead of compiling. It is looked up by a SHA-1 of
 * vendor.cjs's text, the Node version and the CPU architecture (V8's own check is only the
 * source length, so an edited bundle must never find an old cache), per command; V8 rejects a
 * cache from another V8 build or other flags (`cachedDataRejected`), which is then rewritten.
 * Caches live in out/cli/cache/ (cleared by every build); written when the command returns
 * (saveVendorCache), atomically (temp file, rename), skipped quietly where the folder is not writable.
 */
function loadVendor(command) {
  const source = readFileSync(vendorFile, 'utf8');
  const key = createHash('sha1').update(source).digest('hex').slice(0, 20);
  const name = /^[a-z][a-z-]{0,40}$/.test(command ?? '') ? command : 'other';
  const cacheFile = path.join(path.dirname(vendorFile), 'cache', `vendor-${name}-${key}-${process.version}-${process.arch}.bin`);
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: vendorFile,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, createRequire(vendorFile), module, vendorFile, path.dirname(vendorFile));
  if (!cachedData || script.cachedDataRejected) {
    saveVendorCache = () => {
      try {
        mkdirSync(path.dirname(cacheFile), { recursive: true });
        if (readdirSync(path.dirname(cacheFile)).length >= MAX_CACHE_FILES) return; // e.g. many mistyped commands
        const tmp = `${cacheFile}.${process.pid}.tmp`;
        writeFileSync(tmp, script.createCachedData());
        renameSync(tmp, cacheFile);
      } catch {
        // A read-only install runs without the cache.
      }
    };
  }
  return module.exports;
}

/** At most this many files in out/cli/cache/ (a cache per command name; a build empties the folder). */
const MAX_CACHE_FILES = 48;

/** Set by loadVendor when the command should leave a code cache behind; called once it has run. */
let saveVendorCache = () => {};

/** The variable naming the fd of a pipe whose other end the parent holds (set by the parents that spawn this CLI). */
const PARENT_PIPE_ENV = 'FLOWLAB_PARENT_PIPE';

/**
 * A child (the train-loop re-run above, a workshop step: cli/workshopRunner.ts) ends with its
 * parent: the parent holds one end of a pipe, which the kernel closes whatever way the parent
 * dies (SIGKILL included); at its end of file this process sends itself SIGTERM — no handler of
 * the CLI delays it, and what it committed stays committed (train loops and experiments are
 * written iteration by iteration, run by run, in transactions; `flowlab resume` continues them).
 * The variable is removed so the command's own children do not inherit it.
 */
async function watchParentPipe() {
  const fd = Number(process.env[PARENT_PIPE_ENV]);
  delete process.env[PARENT_PIPE_ENV];
  if (!Number.isInteger(fd) || fd < 3) return;
  const { Socket } = await import('node:net');
  let pipe;
  try {
    pipe = new Socket({ fd, readable: true, writable: false });
  } catch {
    return;
  }
  pipe.on('error', () => {});
  pipe.on('close', () => process.kill(process.pid, 'SIGTERM'));
  pipe.resume();
  pipe.unref();
}

if (process.env[PARENT_PIPE_ENV]) await watchParentPipe();

let main;
let installProcessGuards;
if (await rerunWithMmapThreshold()) {
  main = undefined;
} else if (bundleFresh()) {
  let vendor;
  globalThis[Symbol.for('flowlab.vendor')] = () => (vendor ??= loadVendor(process.argv[2]));
  ({ main, installProcessGuards } = await import(bundle.href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main, installProcessGuards } = await import('../cli/main.ts'));
}
if (main) {
  // A rejection nobody awaits records the experiments as interrupted, then ends the process (cli/guard.ts).
  installProcessGuards?.(process.argv[2] ?? 'flowlab', { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s), isTTY: false });
  process.exitCode = await main(process.argv.slice(2));
  saveVendorCache();
}
