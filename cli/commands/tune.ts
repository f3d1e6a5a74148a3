/**
 * `flowlab tune --model <file>`: measures tokens/s of one GGUF file over thread counts (1 up to
 * this machine's cores, never above) and batch sizes, prints every setting beside the default
 * one, and stores the best for the file on this machine (models/tuned.ts), which every later
 * command then uses unless `--threads` / `--batch` say otherwise (a call's recorded settings
 * name the source: tuned, flag or default).
 */
import Table from 'cli-table3';
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { act, UsageError, type CommandContext } from '../args.ts';
import { defaultThreads, maxThreads } from '../../models/resolve.ts';
import { saveTunedSettings, tuneFilePath } from '../../models/tuned.ts';
import type { Io } from '../io.ts';

/** node-llama-cpp's batch size for one sequence of a 1,024-token context (`min(contextSize * sequences, 512)`). */
export const DEFAULT_BATCH = 512;

/** `flowlab tune`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('--model <file.gguf> [--threads-list 1,2] [--batches 64,512] [--json]')
    .description([
      'Measures tokens per second (prompt + completion, median of --repeats greedy calls of a fixed',
      '~200-token prompt) over thread counts and batch sizes, and stores the best per model file and',
      `machine in ${tuneFilePath()} ($FLOWLAB_TUNE_FILE). Every command then uses it unless --threads`,
      'or --batch are given.',
    ].join('\n'))
    .requiredOption('--model <file.gguf>', 'the model file to tune')
    .option('--threads-list <n,n>', 'thread counts to try (default: 1 to the machine\'s cores)')
    .option('--batches <n,n>', 'batch sizes (tokens per decode) to try', '64,512')
    .option('--repeats <n>', 'timed calls per setting', '3')
    .option('--json', 'print one JSON object')
    .action(act(ctx, (o: { model: string; threadsList?: string; batches: string; repeats: string; json?: boolean }) => tune(o, ctx.io)));
}

function intList(text: string, flag: string, max: number): number[] {
  const values = text.split(',').map((s) => s.trim());
  if (!values.every((v) => /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= max)) throw new UsageError(`${flag} takes comma-separated integers from 1 to ${max}, got "${text}"`);
  return [...new Set(values.map(Number))];
}

async function tune(o: { model: string; threadsList?: string; batches: string; repeats: string; json?: boolean }, io: Io): Promise<number> {
  if (!existsSync(o.model)) throw new UsageError(`--model: no such file: ${o.model}`);
  const cores = maxThreads();
  const threads = o.threadsList ? intList(o.threadsList, '--threads-list', cores) : Array.from({ length: cores }, (_, i) => i + 1);
  const batches = intList(o.batches, '--batches', 4096);
  const [repeats] = intList(o.repeats, '--repeats', 100);
  const defaults = { threads: defaultThreads(o.model), batchSize: DEFAULT_BATCH };
  const { measureSettings } = await import('../../models/llama/tune.ts');
  // The default setting is measured too, so the best stands beside it in the same run.
  if (!threads.includes(defaults.threads)) threads.push(defaults.threads);
  if (!batches.includes(defaults.batchSize)) batches.push(defaults.batchSize);
  const { points, best } = await measureSettings(o.model, {
    threads, batchSizes: batches, repeats: repeats!,
    onPoint: (p, done, total) => { if (!o.json) io.stderr(`tune ${done}/${total}: ${p.threads} thread(s), batch ${p.batchSize}: ${p.tokensPerSecond.toFixed(0)} tokens/s\n`); },
  });
  const dflt = points.find((p) => p.threads === defaults.threads && p.batchSize === defaults.batchSize)!;
  const saved = saveTunedSettings(o.model, { threads: best.threads, batchSize: best.batchSize, tokensPerSecond: best.tokensPerSecond });
  if (o.json) {
    io.stdout(JSON.stringify({ model: o.model, cores, points, best, default: dflt, speedup: best.tokensPerSecond / dflt.tokensPerSecond, stored: tuneFilePath() }) + '\n');
    return 0;
  }
  const table = new Table({ head: ['threads', 'batch', 'tokens/s', 'median ms', ''] });
  for (const p of points) table.push([p.threads, p.batchSize, p.tokensPerSecond.toFixed(0), p.medianMs.toFixed(1), [p === best ? 'best' : '', p === dflt ? 'default' : ''].filter(Boolean).join(', ')]);
  io.stdout(`${table.toString()}\n`);
  io.stdout(`best: ${best.threads} thread(s), batch ${best.batchSize}: ${best.tokensPerSecond.toFixed(0)} tokens/s, ${(best.tokensPerSecond / dflt.tokensPerSecond).toFixed(2)}x the default (${dflt.threads} thread(s), batch ${dflt.batchSize}: ${dflt.tokensPerSecond.toFixed(0)} tokens/s)\n`);
  io.stdout(`stored for ${saved.file} on this machine in ${tuneFilePath()}; commands use it unless --threads or --batch are given\n`);
  return 0;
}
