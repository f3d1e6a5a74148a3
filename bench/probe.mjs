// Preload for the whole-process benchmarks (bench/startup.ts), given with `node --import`:
// - FLOWLAB_BENCH_RSS=<file>: on exit, writes the process's peak resident set size in KiB
//   (process.resourceUsage().maxRSS) to <file>;
// - FLOWLAB_BENCH_LOADED=<file>: appends the URL of every module resolved from node-llama-cpp or
//   @tensorflow/* to <file> (a module-resolution hook, node:module register), so the bench can
//   show which commands load the heavy runtimes.
import { writeFileSync } from 'node:fs';
import { register } from 'node:module';

if (process.env.FLOWLAB_BENCH_RSS) {
  const file = process.env.FLOWLAB_BENCH_RSS;
  process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
}
if (process.env.FLOWLAB_BENCH_LOADED) {
  register('./probe-hooks.mjs', import.meta.url);
}
