// Module-resolution hook registered by bench/probe.mjs: records heavy runtimes as they resolve.
import { appendFileSync } from 'node:fs';

const HEAVY = /node_modules\/(node-llama-cpp|@node-llama-cpp|@tensorflow)\//;

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (HEAVY.test(result.url) && process.env.FLOWLAB_BENCH_LOADED) appendFileSync(process.env.FLOWLAB_BENCH_LOADED, `${result.url}\n`);
  return result;
}
