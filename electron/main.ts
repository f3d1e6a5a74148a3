/**
 * Electron main process: the desktop app's composition root. Opens the store, builds the API
 * handlers over core, exposes them on the allowlisted IPC channels and opens one locked-down
 * window. Everything Flowlab knows lives in core/; this file only wires and guards.
 *
 * Engine and model work run off the UI thread: a utility process
 * (electron/worker.ts, `utilityProcess.fork`) owns its own store connection and the lab host
 * (runs, models, examples, datasets). Main answers the quick store reads itself, relays the lab
 * methods to the worker (relay.ts) and forwards its LabEvents to the window on `flowlab:event`.
 *
 * Locations: the database is `<userData>/flowlab.db` (`$FLOWLAB_DB` overrides), the model folder
 * `<userData>/models` (`$FLOWLAB_MODELS` overrides), datasets `<shared>/data` where the shared
 * folder is `$FLOWLAB_SHARED` (or `../shared` exists), else `<userData>/datasets`.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, MessageChannelMain, protocol, session, shell, utilityProcess } from 'electron';
import squirrelStartup from 'electron-squirrel-startup';
import { createHandlers, EVENT_CHANNEL, type LabEvent } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { registerIpc } from './ipc.ts';
import { checkForUpdate, setUpdateCheck } from './updateCheck.ts';
import { serveSandboxForks, type PortLike } from './sandboxForks.ts';
import type { UtilityFork } from '../models/sandbox/index.ts';
import { registerWorkflowPicker, WORKFLOW_FILTERS } from './pickWorkflow.ts';
import { createLabRelay, type LabRelay, type WorkerConfig, type WorkerLink } from './relay.ts';
import { DEV_CSP, PRODUCTION_CSP } from '../host/security.ts';
import { electronSqliteBinding, explainAbiMismatch } from './native.ts';
import { APP_INDEX_URL, APP_SCHEME, contentTypeOf, isOwnPage, resolveAppFile, secureWebPreferences, type RendererOrigin } from './security.ts';
import { errorMessage } from '../core/errors.ts';

const here = path.dirname(fileURLToPath(import.meta.url)); // out/main once built
const PRELOAD_FILE = path.join(here, '../preload/index.cjs');
/** The built page's folder, served as `app://flowlab/` (never as file URLs). */
const RENDERER_DIR = path.join(here, '../renderer');
/** The lab's utility process, built beside main (electron.vite.config.ts: main input `worker`). */
const WORKER_FILE = path.join(here, 'worker.js');
/** Set by `electron-vite dev` only; a packaged app always loads its own files. */
const DEV_SERVER_URL = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;
const ORIGIN: RendererOrigin = {
  appIndexUrl: APP_INDEX_URL,
  ...(DEV_SERVER_URL ? { devServerUrl: DEV_SERVER_URL } : {}),
};

// Before the app is ready: `app:` is a standard, secure scheme (same-origin rules, fetch, a
// secure context), so the page never needs file URLs and their extra privileges.
protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } }]);

let mainWindow: BrowserWindow | null = null;
let store: Store | null = null;
let relay: LabRelay | null = null;
let disposeIpc: (() => void) | null = null;
let disposePicker: (() => void) | null = null;

/** The database file: `$FLOWLAB_DB` if set, else `<userData>/flowlab.db`. */
function databaseFile(): string {
  const fromEnv = process.env['FLOWLAB_DB'];
  return fromEnv ? path.resolve(fromEnv) : path.join(app.getPath('userData'), 'flowlab.db');
}

/** The model folder: `$FLOWLAB_MODELS` if set, else `<userData>/models` (created if missing). */
function modelFolder(): string {
  const fromEnv = process.env['FLOWLAB_MODELS'];
  const dir = fromEnv ? path.resolve(fromEnv) : path.join(app.getPath('userData'), 'models');
  try {
    mkdirSync(dir, { recursive: true });
  } catch {
    // listed as empty; the models view says where it looked
  }
  return dir;
}

/**
 * The Electron build of better-sqlite3's addon that `npm start` / `npm run dev` put in place
 * (electron/native.ts), when running from the project folder and it exists; a packaged app's
 * addon is rebuilt in place by Forge (undefined).
 */
function sqliteBinding(): string | undefined {
  if (app.isPackaged) return undefined;
  const file = electronSqliteBinding(app.getAppPath(), { electron: process.versions.electron, platform: process.platform, arch: process.arch });
  return existsSync(file) ? file : undefined;
}

/** Where the worker finds examples, models and datasets. */
function workerConfig(dbFile: string, binding: string | undefined): WorkerConfig {
  const shared = process.env['FLOWLAB_SHARED'] ? path.resolve(process.env['FLOWLAB_SHARED']) : undefined;
  return {
    dbFile,
    modelDir: modelFolder(),
    examplesDir: path.join(app.getAppPath(), 'examples'),
    ...(shared ? { sharedDir: shared } : {}),
    // Datasets: <userData>/datasets (`flowlab datasets fetch`), unless a shared folder is named or found.
    userDataDir: app.getPath('userData'),
    ...(binding ? { sqliteBinding: binding } : {}),
  };
}

/**
 * Forks the lab's utility process and adapts it to the relay's `WorkerLink`. Right after the
 * fork it gets a message port on which main starts the code sandbox's processes for it
 * (electron/sandboxForks.ts: `utilityProcess.fork` exists only in main), with the folder for the
 * sandbox's program file (a real folder under the user data folder, never inside app.asar).
 */
function spawnWorker(): WorkerLink {
  const child = utilityProcess.fork(WORKER_FILE, [], { serviceName: 'Flowlab lab', stdio: 'inherit' });
  const { port1, port2 } = new MessageChannelMain();
  const fork: UtilityFork = (modulePath, args, options) => utilityProcess.fork(modulePath, args, options) as unknown as ReturnType<UtilityFork>;
  const forks = serveSandboxForks(port1 as unknown as PortLike, fork);
  child.postMessage({ kind: 'sandbox-forks', scriptDir: path.join(app.getPath('userData'), 'sandbox') }, [port2]);
  child.on('exit', () => forks.dispose());
  return {
    postMessage: (message) => child.postMessage(message),
    onMessage: (listener) => child.on('message', listener),
    onExit: (listener) => child.on('exit', listener),
    kill: () => child.kill(),
  };
}

/** Sends a LabEvent to the window (dropped when there is none). */
function forwardEvent(event: LabEvent): void {
  const win = mainWindow;
  if (win && !win.isDestroyed() && !win.webContents.isDestroyed()) win.webContents.send(EVENT_CHANNEL, event);
}

/**
 * Serves the built page on `app://flowlab/`: only files inside out/renderer (decoded, normalised
 * and confined by `resolveAppFile`), each with the CSP header; anything else is a 404.
 */
function serveApp(): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppFile(request.url, RENDERER_DIR);
    if (!file) return new Response('Not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, { status: 200, headers: { 'content-type': contentTypeOf(file), 'content-security-policy': PRODUCTION_CSP, 'x-content-type-options': 'nosniff' } });
    } catch {
      return new Response('Not found', { status: 404 });
    }
  });
}

/** Applies the session-wide guards: CSP header, no permissions, no navigation, no new windows. */
function hardenSession(): void {
  const csp = DEV_SERVER_URL ? DEV_CSP : PRODUCTION_CSP;
  // Covers http(s) responses (the dev server); app:// responses carry it from serveApp.
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);

  app.on('web-contents-created', (_event, contents) => {
    // The page is one document: no navigation of the window or of any frame in it.
    contents.on('will-navigate', (event) => event.preventDefault());
    contents.on('will-frame-navigate', (event) => event.preventDefault());
    contents.on('will-redirect', (event) => event.preventDefault());
    contents.on('will-attach-webview', (event) => event.preventDefault());
    contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  });
}

/** Opens the one app window (or focuses it if it exists). */
function createWindow(): void {
  if (mainWindow) {
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
    return;
  }
  const win = new BrowserWindow({
    width: 1200,
    height: 800,
    minWidth: 720,
    minHeight: 480,
    show: false,
    title: 'Flowlab',
    autoHideMenuBar: true,
    webPreferences: secureWebPreferences(PRELOAD_FILE),
  });
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  mainWindow = win;
  if (DEV_SERVER_URL) void win.loadURL(DEV_SERVER_URL);
  else void win.loadURL(APP_INDEX_URL);
}

/** Opens the store and serves the API; on failure tells the user which file and why, then exits. */
function startLab(): boolean {
  const file = databaseFile();
  const binding = sqliteBinding();
  try {
    store = openStore(file, binding ? { nativeBinding: binding } : {});
  } catch (err) {
    // A wrong-ABI addon names both ABIs and the fix; anything else is shown as it is.
    const why = explainAbiMismatch(err, { electron: process.versions.electron, modules: process.versions.modules }) ?? (errorMessage(err));
    dialog.showErrorBox('Flowlab cannot open its database', `${file}\n\n${why}`);
    return false;
  }
  const opened = store;
  relay = createLabRelay({
    spawn: spawnWorker,
    config: workerConfig(file, binding),
    onEvent: forwardEvent,
    // Experiments of a crashed worker are `running` under a dead pid: show them as interrupted.
    onUnexpectedExit: () => {
      if (!opened.closed) opened.markInterrupted();
    },
    log: (line) => console.error(`[flowlab] ${line}`),
  });
  relay.start();
  const handlers = createHandlers({ store, version: app.getVersion(), modelDir: modelFolder(), lab: relay });
  disposeIpc = registerIpc(ipcMain, handlers, {
    isTrustedSender: (event) => !!event.senderFrame && isOwnPage(event.senderFrame.url, ORIGIN),
    onError: (error, channel) => {
      if (error.code === 'INTERNAL') console.error(`[flowlab] ${channel}:`, error.cause ?? error);
    },
  });
  disposePicker = registerWorkflowPicker(ipcMain, {
    isTrustedSender: (event) => !!event.senderFrame && isOwnPage(event.senderFrame.url, ORIGIN),
    showOpenDialog: () => {
      const options = { title: 'Open a workflow', properties: ['openFile' as const], filters: WORKFLOW_FILTERS };
      return mainWindow ? dialog.showOpenDialog(mainWindow, options) : dialog.showOpenDialog(options);
    },
  });
  return true;
}

/**
 * Releases what `startLab` took: IPC listeners, the worker (its running experiments are cancelled
 * and stay resumable), then the database (checkpointing its WAL).
 */
async function stopLab(): Promise<void> {
  disposeIpc?.();
  disposeIpc = null;
  disposePicker?.();
  disposePicker = null;
  await relay?.stop().catch(() => {});
  relay = null;
  store?.close();
  store = null;
}

/**
 * The update check (electron/updateCheck.ts): a newer version in the feed is offered in a
 * dialog with "Open download page", "Later" and "Don't check again" (which writes
 * `updateCheck: false` to `<userData>/settings.json`). Nothing is downloaded or installed.
 */
async function offerUpdate(): Promise<void> {
  const userDataDir = app.getPath('userData');
  const pkg = JSON.parse(await readFile(path.join(app.getAppPath(), 'package.json'), 'utf8')) as { flowlab?: { updateFeed?: string } };
  const result = await checkForUpdate({ current: app.getVersion(), feed: pkg.flowlab?.updateFeed, userDataDir });
  if (result.kind === 'failed') console.error(`[flowlab] update check: ${result.message}`);
  if (result.kind !== 'newer' || !mainWindow) return;
  const { response } = await dialog.showMessageBox(mainWindow, {
    type: 'info',
    message: `Flowlab ${result.offer.version} is available (this is ${app.getVersion()}).`,
    buttons: ['Open download page', 'Later', "Don't check again"],
    defaultId: 0,
    cancelId: 1,
  });
  if (response === 0) await shell.openExternal(result.offer.url);
  if (response === 2) setUpdateCheck(userDataDir, false);
}

if (squirrelStartup) {
  // A Squirrel.Windows install, update or uninstall event: electron-squirrel-startup creates or
  // removes the shortcuts and quits the app; nothing else starts.
} else if (!app.requestSingleInstanceLock()) {
  // Another Flowlab already runs: it gets focus (see 'second-instance'), this one leaves.
  app.quit();
} else {
  app.on('second-instance', () => createWindow());
  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
  app.on('activate', () => {
    if (app.isReady() && store && BrowserWindow.getAllWindows().length === 0) createWindow();
  });
  let stopped = false;
  app.on('will-quit', (event) => {
    if (stopped) return;
    // Let the worker cancel its runs and close its store before the app exits.
    event.preventDefault();
    void stopLab().finally(() => {
      stopped = true;
      app.quit();
    });
  });

  void app.whenReady().then(() => {
    hardenSession();
    serveApp();
    if (!startLab()) {
      app.exit(1);
      return;
    }
    createWindow();
    if (app.isPackaged) void offerUpdate().catch((err: unknown) => console.error('[flowlab] update check:', err));
  });
}
