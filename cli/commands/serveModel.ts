import { closeSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { MAX_SEQUENCES } from '../../core/limits.ts';
import { isLoopback, startModelServer, type ModelServer } from '../../host/index.ts';
import { clampThreads } from '../../models/resolve.ts';
import { act, intOption, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';

/** Flags of `flowlab serve-model`. */
interface ServeModelFlags {
  port: number;
  host: string;
  threads?: number;
  contextSize?: number;
  sequences?: number;
  grammar: boolean;
  keyEnv?: string;
  name?: string[];
}

/** `flowlab serve-model <file.gguf...>`: local GGUF files over the OpenAI-compatible API (host/modelServer.ts). */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<file.gguf...> [--port P] [--host 127.0.0.1] [--threads N] [--no-grammar]')
    .description([
      'Serves local GGUF files over the OpenAI-compatible API: GET /v1/models, POST /v1/chat/completions',
      '(json_schema enforced by grammar, seed, usage, stream: true as Server-Sent Events token by token;',
      'multi-turn messages rendered through the file\'s chat template; a client that disconnects cancels',
      'its generation). Prints the API base URL on stdout; Ctrl-C stops.',
      'Model ids are the file names without .gguf (or --name). Use it from Flowlab as',
      '--model openai:<url>#<id> (docs/models.md).',
    ].join('\n'))
    .argument('<file.gguf...>', 'the model files')
    .addOption(intOption('--port <n>', 'TCP port; 0 picks a free one', { max: 65535, default: 8080 }))
    .option('--host <addr>', 'interface: loopback (127.0.0.1, localhost, ::1); 0.0.0.0 (or ::) serves your network (then pass --key-env)', '127.0.0.1')
    .addOption(intOption('--threads <n>', 'CPU threads per model (default: 1 for files < 64 MB, else half the cores)', { min: 1 }))
    .addOption(intOption('--context-size <n>', 'context tokens per model (default: 1024)', { min: 256 }))
    .addOption(intOption('--sequences <n>', 'generations at once per model (default 4)', { min: 1, max: MAX_SEQUENCES }))
    .option('--no-grammar', 'accept JSON schemas with status 200 and ignore them (as llama-server does for some schema forms): for `flowlab probe` and fallback tests')
    .option('--key-env <VAR>', 'require Authorization: Bearer <the value of $VAR>')
    .option('--name <id>', 'the model id of the file at the same position (repeatable)', (v: string, prev: string[] = []) => [...prev, v]);
  cmd.action(act(ctx, (files: string[], o: ServeModelFlags) => serveModelCommand(files, o, ctx.io)));
}

/** The served id -> file map: `--name` by position, else the file name without `.gguf`. Errors: UsageError (a duplicate id, more names than files). */
export function servedModels(files: readonly string[], names: readonly string[] = []): Record<string, string> {
  if (names.length > files.length) throw new UsageError(`--name given ${names.length} times for ${files.length} file(s)`);
  const out: Record<string, string> = {};
  files.forEach((file, i) => {
    const id = names[i] ?? path.basename(file).replace(/\.gguf$/i, '');
    if (Object.hasOwn(out, id)) throw new UsageError(`two files are served as model "${id}": give one of them --name <id>`);
    out[id] = path.resolve(file);
  });
  return out;
}

/** Refuses, before anything listens, a served path that is not a readable GGUF file. Errors: UsageError naming the file and what is wrong. */
function checkGguf(file: string): void {
  let fd: number | undefined;
  try {
    if (!statSync(file).isFile()) throw new UsageError(`${file}: not a file (serve-model serves GGUF files)`);
    fd = openSync(file, 'r');
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    if (magic.toString('latin1') !== 'GGUF') throw new UsageError(`${file}: not a GGUF file (its first bytes are not "GGUF")`);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); give the path of a .gguf file`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

async function serveModelCommand(files: string[], o: ServeModelFlags, io: Io): Promise<number> {
  if (!isLoopback(o.host) && o.host !== '0.0.0.0' && o.host !== '::') throw new UsageError(`--host ${o.host}: serve on loopback (127.0.0.1, localhost, ::1), or 0.0.0.0 / :: for your network`);
  const models = servedModels(files, o.name);
  for (const file of Object.values(models)) checkGguf(file);
  let threads = o.threads;
  if (threads !== undefined) {
    const c = clampThreads(threads);
    if (c.note) io.stderr(`Note: --${c.note}.\n`);
    threads = c.threads;
  }
  let server: ModelServer;
  try {
    server = await startModelServer({ models, host: o.host, port: o.port, grammar: o.grammar, ...(threads !== undefined && { threads }), ...(o.contextSize !== undefined && { contextSize: o.contextSize }), ...(o.sequences !== undefined && { sequences: o.sequences }), ...(o.keyEnv !== undefined && { keyEnv: o.keyEnv }) });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new CommandError('PORT_IN_USE', `port ${o.port} on ${o.host} is in use: pass --port <n>, or --port 0 for a free one`, {}, { cause: err });
    throw err;
  }
  if (!isLoopback(o.host) && o.keyEnv === undefined) io.stderr(`flowlab serve-model: WARNING: listening on ${o.host}:${server.port} without a key: anyone on your network can use these models (pass --key-env VAR)\n`);
  io.stderr(`flowlab serve-model: ${Object.entries(models).map(([id, f]) => `${id} (${f})`).join(', ')}; schemas ${o.grammar ? 'enforced by grammar' : 'accepted and IGNORED (--no-grammar)'}. Ctrl-C stops.\n`);
  io.stdout(`${server.baseUrl}\n`);
  await new Promise<void>((resolve) => {
    const onSignal = () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      io.stderr(`\nflowlab serve-model: stopping (${server.stats.completed} completed, ${server.stats.cancelled} cancelled, ${server.stats.failed} failed)\n`);
      void server.close().then(resolve);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  return 0;
}
