#!/usr/bin/env node
// The flowlab CLI. Runs the prebuilt bundle out/cli/main.js (scripts/build-cli.mjs; made by
// `npm run build`, `npm test` and npm's `prepare` step). Development path: the TypeScript
// sources through tsx's loader, taken with FLOWLAB_DEV=1, when the bundle is missing, or when a
// bundled source file (out/cli/sources.txt) was edited after the bundle was built.
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';

const root = new URL('../', import.meta.url);
const bundle = new URL('out/cli/main.js', root);

/** True when the bundle exists and no source file it was built from is newer (a few ms of stats). */
function bundleFresh() {
  if (process.env.FLOWLAB_DEV === '1') return false;
  try {
    const built = statSync(bundle).mtimeMs;
    for (const file of readFileSync(new URL('out/cli/sources.txt', root), 'utf8').split('\n')) {
      if (file && statSync(new URL(file, root), { throwIfNoEntry: false })?.mtimeMs > built) return false;
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
function rerunWithMmapThreshold() {
  if (process.platform !== 'linux' || process.argv[2] !== 'train-loop' || process.env.MALLOC_MMAP_THRESHOLD_) return false;
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, MALLOC_MMAP_THRESHOLD_: String(128 << 10) },
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

let main;
if (rerunWithMmapThreshold()) {
  main = undefined;
} else if (bundleFresh()) {
  ({ main } = await import(bundle.href));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/main.ts'));
}
if (main) process.exitCode = await main(process.argv.slice(2));
