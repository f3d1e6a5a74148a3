import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { createHandlers, validatePayload, type WorkshopHost } from '../../core/api/index.ts';
import { openStore, type Store } from '../../core/store/index.ts';
import { resolveSharedDir } from '../../core/tasks/index.ts';
import { createEventHub, createLabHost, createWorkflowValidator, RawJson, isLoopback, rendererMissingMessage, startLabServer, STORE_WATCH_MS, type LabHostHandle, type LabServer, type LabServerOptions, type ModelPathRoots } from '../../host/index.ts';
import { act, dbOption, harden, intOption, parseWith, UsageError, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import { processIo, type Io } from '../io.ts';
import { repoRoot } from '../root.ts';
import { besideDatabase } from '../../host/dataFolder.ts';

const ROOT = repoRoot(import.meta.url);
/** Default port of `flowlab serve`. */
export const DEFAULT_PORT = 5177;

/** The options of `flowlab serve`, on `cmd`. */
function serveOptions(cmd: Command): Command {
  return cmd
    .usage('[--port P] [--host H] [--db file] [--models dir]')
    .description([
      "Serves the lab in a browser: the built renderer and the lab's API (HTTP + Server-Sent Events),",
      "with a random session token. Prints the page's URL (with its token) on stdout. Stop with Ctrl-C:",
      'running experiments are cancelled and can be resumed with `flowlab resume`.',
      'Set FLOWLAB_TOKEN (32 to 128 hex digits) to keep one token across restarts, so an open page reconnects.',
    ].join('\n'))
    .addOption(intOption('--port <n>', 'TCP port; 0 picks a free one', { max: 65535, default: DEFAULT_PORT }))
    .option('--host <addr>', 'interface: 127.0.0.1, localhost or ::1; 0.0.0.0 (or ::) shares the lab with your network (anyone with the URL and token)', '127.0.0.1')
    .addOption(dbOption())
    .option('--models <dir>', 'model folder (*.gguf) (default: $FLOWLAB_MODELS, else $FLOWLAB_SHARED/models or ../shared/models)')
    .option('--allow-model <path>', 'another model file or folder requests may use (repeatable); every other path outside --models is refused', (v: string, prev: string[] = []) => [...prev, v])
    .option('--allow-private-downloads', 'let model downloads from the page reach hosts on this machine or a private network (refused by default, so the page cannot use the lab as a proxy into your network)')
    .option('--data-dir <dir>', 'dataset folder (default: $FLOWLAB_SHARED/data or ../shared/data; without either, datasets/ beside the --db file, where `flowlab datasets fetch` puts them)')
    .option('--renderer <dir>', 'built renderer (default: out/renderer, written by `npm run build`)');
}

interface ServeFlags {
  port: number;
  host: string;
  db: string;
  models?: string;
  allowModel?: string[];
  allowPrivateDownloads?: boolean;
  dataDir?: string;
  renderer?: string;
}

/** `flowlab serve`. */
export function define(cmd: Command, ctx: CommandContext): void {
  serveOptions(cmd).action(act(ctx, (o: ServeFlags) => serveCommand(serveOptionsOf(o), ctx.io)));
}

/** Options of {@link startServe}: the parsed flags. */
export interface ServeOptions {
  port: number;
  host: string;
  db: string;
  models: string;
  /** Model files or folders requests may use besides `models` (absolute). */
  allowModels?: string[];
  /** Model downloads may reach hosts on this machine or a private network (host/downloads.ts). */
  allowPrivateDownloads?: boolean;
  dataDir?: string;
  renderer: string;
  examples?: string;
  /** The session token (default: `$FLOWLAB_TOKEN` when set, else random). */
  token?: string;
  /** Makes, over the opened store, a workshop session the API answers for (`flowlab workshop`) and tokens of narrower reach (its attendees'). */
  workshop?: (store: Store) => { host: WorkshopHost; guests: NonNullable<LabServerOptions['guests']> };
}

/** A running browser host: the server, and a stop that cancels runs and closes the store. */
export interface RunningServe {
  server: LabServer;
  lab: LabHostHandle;
  store: Store;
  /** Stops serving, cancels running experiments (resumable), closes the store. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Opens the store, builds the lab host and the API, and starts the HTTP server.
 * @throws StoreError (database), or the listen error (`EADDRINUSE`...).
 */
export async function startServe(opts: ServeOptions): Promise<RunningServe> {
  const token = opts.token ?? tokenFromEnv();
  const store = openStore(opts.db);
  const hub = createEventHub();
  const lab = createLabHost({
    store,
    dbFile: opts.db,
    modelDir: opts.models,
    modelRoots: allowedModelRoots(opts.allowModels ?? []),
    examplesDir: opts.examples ?? path.join(ROOT, 'examples'),
    ...(opts.dataDir !== undefined ? { dataDir: opts.dataDir } : { userDataDir: besideDatabase(opts.db) }),
    emit: hub.emit,
    // Writes by anyone (the CLI on the same database included) reach the page as `stored` events.
    watchStoreMs: STORE_WATCH_MS,
    ...(opts.allowPrivateDownloads && { downloads: { allowPrivateHosts: true } }),
  });
  const workshop = opts.workshop?.(store);
  const api = createHandlers({ store, version: appVersion(), modelDir: opts.models, lab, ...(workshop && { workshop: workshop.host }) });
  // Large documents are parsed in a worker thread, so other requests and event streams are answered meanwhile.
  const validator = createWorkflowValidator();
  const textOf = (p: { text: string; file?: string | undefined }): [string, string | undefined] => [p.text, p.file];
  let server: LabServer;
  try {
    server = await startLabServer({
      api, subscribe: hub.subscribe, rendererDir: opts.renderer, host: opts.host, port: opts.port, ...(token ? { token } : {}), ...(workshop && { guests: workshop.guests }),
      offload: { validateWorkflow: async (p) => new RawJson(await validator.validateJson(...textOf(validatePayload('validateWorkflow', p)))) },
    });
  } catch (err) {
    await validator.close();
    store.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new CommandError('PORT_IN_USE', `port ${opts.port} on ${opts.host} is in use: pass --port <n>, or --port 0 for a free one`, {}, { cause: err });
    }
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    server,
    lab,
    store,
    stop() {
      stopping ??= (async () => {
        await lab.dispose();
        await validator.close();
        await server.close();
        store.close();
      })();
      return stopping;
    },
  };
}

/**
 * `$FLOWLAB_TOKEN` as the session token, so a restarted server on the same port lets an open page
 * reconnect (renderer/connection.ts). Unset or empty: none (a random token).
 * @throws UsageError when it is set but not 32 to 128 hex digits (a short token is guessable).
 */
function tokenFromEnv(): string | undefined {
  const t = process.env.FLOWLAB_TOKEN;
  if (!t) return undefined;
  if (!/^[0-9a-f]{32,128}$/.test(t)) throw new UsageError('FLOWLAB_TOKEN must be 32 to 128 lowercase hex digits (e.g. `openssl rand -hex 32`)');
  return t;
}

/**
 * The browser host's model roots: `--models` is always one; each `--allow-model` is a folder
 * when it is one, else a single file (host/modelPaths.ts).
 */
function allowedModelRoots(allowed: readonly string[]): ModelPathRoots {
  const folders: string[] = [];
  const files: string[] = [];
  for (const p of allowed) (isDirectory(p) ? folders : files).push(p);
  return { folders, files };
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Parses `flowlab serve` flags (UsageError on bad ones; argv without the command name). */
export function parseServeArgs(argv: string[]): ServeOptions {
  const cmd = serveOptions(harden(new Command('serve'), processIo));
  return serveOptionsOf(parseWith(cmd, argv).opts<ServeFlags>());
}

/** The renderer bundle `flowlab serve` and `flowlab workshop` serve unless `--renderer` names another. */
export const DEFAULT_RENDERER = path.join(ROOT, 'out/renderer');

/**
 * Builds the default renderer once when it is missing (a fresh clone after `npm ci` has the CLI
 * bundle only): runs `electron-vite build` from this checkout (a few seconds), telling `io` what
 * it does. A renderer named by `--renderer` is never built. Errors: none; when the build is not
 * possible or fails the page answers with `rendererMissingMessage` as before.
 */
export function ensureRenderer(rendererDir: string, io: Io, command: string): void {
  if (path.resolve(rendererDir) !== DEFAULT_RENDERER || existsSync(path.join(rendererDir, 'index.html'))) return;
  const bin = path.join(ROOT, 'node_modules', '.bin', process.platform === 'win32' ? 'electron-vite.cmd' : 'electron-vite');
  if (!existsSync(bin)) return;
  io.stderr(`flowlab ${command}: the renderer is not built yet; building it once (electron-vite build)...\n`);
  const built = spawnSync(bin, ['build', '--logLevel', 'error'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', shell: process.platform === 'win32' });
  if (built.status !== 0) io.stderr(`flowlab ${command}: the renderer build failed (${(built.stderr || built.error?.message || '').trim().slice(-400)}); run \`npm run build\`.\n`);
}

/** The checked serve options from the parsed flags. Errors: UsageError (a host that is neither loopback nor all interfaces). */
function serveOptionsOf(values: ServeFlags): ServeOptions {
  const port = values.port;
  const host = values.host;
  if (!isLoopback(host) && host !== '0.0.0.0' && host !== '::') {
    throw new UsageError(`--host ${host}: serve on loopback (127.0.0.1, localhost, ::1), or pass --host 0.0.0.0 to share the lab with your network`);
  }
  const models = values.models ?? (process.env.FLOWLAB_MODELS || path.join(resolveSharedDir(), 'models'));
  return {
    port,
    host,
    db: values.db,
    models: path.resolve(models),
    ...(values.allowModel?.length ? { allowModels: values.allowModel.map((p) => path.resolve(p)) } : {}),
    ...(values.allowPrivateDownloads ? { allowPrivateDownloads: true } : {}),
    ...(values.dataDir !== undefined ? { dataDir: values.dataDir } : {}),
    renderer: path.resolve(values.renderer ?? DEFAULT_RENDERER),
  };
}

/**
 * `flowlab serve`: prints the page URL (with its token) on stdout, notes on stderr, and serves
 * until SIGINT or SIGTERM; then running experiments are cancelled (resumable) and the store is
 * closed. Exit code 0 after a clean stop.
 */
async function serveCommand(opts: ServeOptions, io: Io): Promise<number> {
  ensureRenderer(opts.renderer, io, 'serve');
  const running = await startServe(opts);
  const { server } = running;
  if (!existsSync(path.join(opts.renderer, 'index.html'))) io.stderr(`flowlab serve: ${rendererMissingMessage(opts.renderer)}\n`);
  if (!isLoopback(opts.host)) {
    io.stderr(
      `flowlab serve: WARNING: listening on ${opts.host}:${server.port}, reachable from your network. Anyone with the URL ` +
        `(it carries the session token) can run models and read every experiment in ${opts.db}. Share it only with your room.\n`,
    );
  }
  io.stderr(`flowlab serve: database ${path.resolve(opts.db)}, models ${opts.models}. Ctrl-C stops.\n`);
  io.stdout(`${server.url}\n`);
  for (const url of server.networkUrls) io.stdout(`${url}\n`);

  await new Promise<void>((resolve) => {
    let signals = 0;
    const onSignal = (signal: NodeJS.Signals) => {
      signals++;
      if (signals > 1) {
        io.stderr(`flowlab serve: second ${signal}: exiting now\n`);
        process.exit(130);
      }
      const active = running.lab.runner.list().length;
      io.stderr(`\nflowlab serve: stopping${active ? ` (cancelling ${active} running experiment(s); \`flowlab resume\` finishes them)` : ''}\n`);
      void running.stop().then(() => {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        resolve();
      });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
  return 0;
}

/** The `version` of the app's package.json (`0.0.0` when it cannot be read). */
function appVersion(): string {
  try {
    const v = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version?: unknown }).version;
    return typeof v === 'string' ? v : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
