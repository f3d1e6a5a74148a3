/**
 * `flowlab datasets list`: every dataset with whether its files are in the data folder, and for
 * those that are not, how to get them (size, licence, source). `flowlab datasets fetch <name>`:
 * downloads a public set's files into the data folder with a progress bar, each checked against
 * its pinned sha256 and size (host/datasetFetch.ts, core/tasks/downloads.ts).
 *
 * The data folder: `--data-dir`, else `$FLOWLAB_SHARED/data` or `../shared/data` when there, else
 * `datasets/` beside the `--db` file (as `flowlab serve` reads it).
 */
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import path from 'node:path';
import { resolveDataDir, type DatasetLocation } from '../../core/tasks/index.ts';
import { fetchDataset } from '../../host/datasetFetch.ts';
import { listDatasets } from '../../host/datasets.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';
import { besideDatabase } from '../../host/dataFolder.ts';

interface Flags {
  dataDir?: string;
  db: string;
  json?: boolean;
}

/** The data folder the flags name (see the module comment). */
function location(o: Flags): DatasetLocation {
  return o.dataDir !== undefined ? { dataDir: o.dataDir } : { userDataDir: besideDatabase(o.db) };
}

/** `flowlab datasets`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd.description('the datasets: which are ready, and fetching the public ones (sha256-checked) into the data folder');
  const common = (c: Command) =>
    c.option('--data-dir <dir>', 'data folder (default: $FLOWLAB_SHARED/data or ../shared/data; without either, datasets/ beside --db)').addOption(dbOption('the database whose folder holds datasets/ when no shared folder is found'));
  common(cmd.command('list'))
    .option('--json', 'print one JSON array')
    .action(act(ctx, (o: Flags) => list(o, ctx.io)));
  common(cmd.command('fetch'))
    .argument('<name>', 'a dataset name (flowlab datasets list shows the fetchable ones)')
    .action(act(ctx, (name: string, o: Flags) => fetch(name, o, ctx.io)));
}

async function list(o: Flags, io: Io): Promise<number> {
  const loc = location(o);
  const rows = listDatasets(loc);
  if (o.json) {
    io.stdout(JSON.stringify(rows) + '\n');
    return 0;
  }
  io.stdout(`data folder: ${resolveDataDir(loc)}\n`);
  for (const d of rows) {
    const state = d.available ? 'ready' : d.get ? `get it: ${d.get.command}  (${sizeText(d.get.bytes)}, ${d.get.licence}; ${d.get.source})` : `missing: ${d.message ?? ''}`;
    io.stdout(`  ${d.name.padEnd(18)} ${state}\n`);
  }
  return 0;
}

/** `n` bytes as kB or MB (decimal units). */
export function sizeText(n: number): string {
  return n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1e3))} kB`;
}

async function fetch(name: string, o: Flags, io: Io): Promise<number> {
  const dataDir = resolveDataDir(location(o));
  const bar = new SingleBar({ stream: process.stderr, format: `${name} {bar} {percentage}% | {value}/{total} bytes`, noTTYOutput: !io.isTTY, notTTYSchedule: 5000 }, Presets.shades_classic);
  let started = false;
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const files = await fetchDataset(name, {
      dataDir,
      signal: controller.signal,
      onProgress: (done, total) => {
        if (!started) bar.start(total, done);
        started = true;
        bar.update(done);
      },
    });
    if (started) bar.stop();
    started = false;
    for (const f of files) io.stdout(`${path.join(dataDir, f.path)}: ${f.bytes} bytes, sha256 ${f.sha256} (${f.action})\n`);
    return 0;
  } finally {
    if (started) bar.stop();
    process.off('SIGINT', onSigint);
  }
}
