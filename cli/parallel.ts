/** `--parallel <n>`: tasks (runs, cells, pairs) in flight through the one scheduler (core/schedule, docs/scale.md). */
import type { Command } from 'commander';
import { intOption } from './args.ts';

/** Adds `--parallel <n>` (1..1024) to `cmd`; absent: the default the models give (core/schedule defaultParallel). */
export function addParallelOption(cmd: Command, what = 'tasks'): Command {
  return cmd.addOption(intOption('--parallel <n>', `${what} in flight at once (default: the sum of the endpoints' concurrency for servers, 1 for a local GGUF file); results do not depend on it`, { min: 1 }));
}

/** `{ parallel }` when the flag was given, else nothing (spread it into a spec). */
export const parallelOf = (values: { parallel?: number }): { parallel?: number } => (values.parallel === undefined ? {} : { parallel: values.parallel });
