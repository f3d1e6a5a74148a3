/**
 * `flowlab models list [folders...]`: the GGUF files of folders with their header metadata
 * (architecture, parameters, quantisation, context length, chat template present), read without
 * loading a model. `flowlab models download <hf:owner/repo/file.gguf | URL>`: into the models
 * folder with a progress bar, resumed after an interruption, checked by size and sha256
 * (models/download.ts).
 */
import Table from 'cli-table3';
import { Presets, SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { resolveSharedDir } from '../../core/tasks/index.ts';
import { downloadModel } from '../../models/download.ts';
import { act, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';
import { errorMessage } from '../../core/errors.ts';

/** The default models folder: `$FLOWLAB_MODELS`, else `$FLOWLAB_SHARED/models` (as `flowlab serve`). */
const defaultDir = () => process.env.FLOWLAB_MODELS || path.join(resolveSharedDir(), 'models');

/** `flowlab models`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd.description('the model catalogue: list GGUF files with their metadata, download into the models folder');
  cmd
    .command('list')
    .argument('[folders...]', 'folders to scan (recursively; default: $FLOWLAB_MODELS, else $FLOWLAB_SHARED/models)')
    .option('--json', 'print one JSON array')
    .action(act(ctx, (folders: string[], o: { json?: boolean }) => list(folders.length ? folders : [defaultDir()], o, ctx.io)));
  cmd
    .command('download')
    .argument('<ref>', 'hf:<owner>/<repo>/<file.gguf> (optionally hf:<owner>/<repo>@<revision>/<file>) or an http(s) URL')
    .option('--dir <folder>', 'models folder (default: $FLOWLAB_MODELS, else $FLOWLAB_SHARED/models)')
    .option('--name <file.gguf>', 'file name in the folder (default: the URL\'s last segment)')
    .option('--sha256 <hex>', 'expected sha256: a file that differs is removed')
    .option('--overwrite', 'replace a file of the same name')
    .action(act(ctx, (ref: string, o: { dir?: string; name?: string; sha256?: string; overwrite?: boolean }) => download(ref, o, ctx.io)));
}

function ggufFiles(dir: string, depth = 0): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.sort().flatMap((n) => {
    const p = path.join(dir, n);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st?.isDirectory() && depth < 4 && !n.startsWith('.')) return ggufFiles(p, depth + 1);
    return st?.isFile() && /\.gguf$/i.test(n) ? [p] : [];
  });
}

async function list(folders: string[], o: { json?: boolean }, io: Io): Promise<number> {
  const { readGgufInfo } = await import('../../models/llama/ggufInfo.ts');
  const rows = [];
  for (const file of folders.flatMap((f) => ggufFiles(path.resolve(f)))) {
    try {
      const i = await readGgufInfo(file);
      rows.push({ file, architecture: i.architecture, parameters: i.parameters, quantisation: i.fileType, contextLength: i.contextLength, chatTemplate: i.hasChatTemplate, sizeBytes: i.sizeBytes });
    } catch (err) {
      rows.push({ file, error: errorMessage(err) });
    }
  }
  if (o.json) {
    io.stdout(JSON.stringify(rows) + '\n');
    return 0;
  }
  // Plain text, as every other table of the CLI (no colour codes in a pipe, a file or under NO_COLOR).
  const table = new Table({ head: ['file', 'architecture', 'parameters', 'quantisation', 'context', 'chat template', 'size'], style: { head: [], border: [] } });
  for (const r of rows) {
    if ('error' in r) table.push([r.file, { colSpan: 6, content: `unreadable: ${r.error}` }]);
    else table.push([r.file, r.architecture, r.parameters?.toLocaleString('en') ?? '-', r.quantisation, r.contextLength?.toLocaleString('en') ?? '-', r.chatTemplate ? 'yes' : 'no', `${(r.sizeBytes / 2 ** 20).toFixed(1)} MiB`]);
  }
  io.stdout(`${rows.length ? table.toString() : `no GGUF files in ${folders.join(', ')}`}\n`);
  return 0;
}

async function download(ref: string, o: { dir?: string; name?: string; sha256?: string; overwrite?: boolean }, io: Io): Promise<number> {
  const bar = new SingleBar({ stream: process.stderr, format: 'download {bar} {percentage}% | {value}/{total} bytes', noTTYOutput: !io.isTTY, notTTYSchedule: 5000 }, Presets.shades_classic);
  let started = false;
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.once('SIGINT', onSigint);
  try {
    const out = await downloadModel(ref, {
      dir: o.dir ?? defaultDir(),
      ...(o.name ? { fileName: o.name } : {}),
      ...(o.sha256 ? { sha256: o.sha256 } : {}),
      ...(o.overwrite ? { overwrite: true } : {}),
      signal: controller.signal,
      onProgress: (bytes, total) => {
        if (!started) bar.start(total ?? 0, bytes);
        started = true;
        bar.update(bytes);
      },
    });
    if (started) bar.stop();
    io.stdout(`${out.file}: ${out.bytes} bytes, sha256 ${out.sha256}${out.resumedFrom ? ` (resumed from ${out.resumedFrom} bytes)` : ''}\n`);
    return 0;
  } finally {
    if (started) bar.stop();
    process.off('SIGINT', onSigint);
  }
}
