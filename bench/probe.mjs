// Preload for the whole-process benchmarks (bench/startup.ts), given with `node --import`:
// - FLOWLAB_BENCH_RSS=<file>: on exit, writes the process's peak resident set size in KiB
//   (process.resourceUsage().maxRSS) to <file>, or keeps the larger value already there (a
//   command that runs in a child process, as bin/flowlab.js does for train-loop, is measured
//   by the child, which exits first);
// - FLOWLAB_BENCH_LOADED=<file>: appends the URL of every module resolved from node-llama-cpp or
//   @tensorflow/* to <file> (a module-resolution hook, node:module register), so the bench can
//   show which commands load the heavy runtimes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';

if (process.env.FLOWLAB_BENCH_RSS) {
  const file = process.env.FLOWLAB_BENCH_RSS;
  process.on('exit', () => {
    const before = existsSync(file) ? Number(readFileSync(file, 'utf8')) || 0 : 0;
    writeFileSync(file, String(Math.max(before, process.resourceUsage().maxRSS)));
  });
}
if (process.env.FLOWLAB_BENCH_LOADED) {
  register('./probe-hooks.mjs', import.meta.url);
}
