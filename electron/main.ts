/**
 * Electron main process: the desktop app's composition root. Opens the store, builds the API
 * handlers over core, exposes them on the allowlisted IPC channels and opens one locked-down
 * window. Everything Flowlab knows lives in core/; this file only wires and guards.
 *
 * Heavy work (model inference, experiment runs) will move to a model host started with
 * `utilityProcess.fork`, main only relaying messages (STYLE.md §10). For now the handlers are
 * quick SQLite reads and run here.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { app, BrowserWindow, dialog, ipcMain, session } from 'electron';
import { createHandlers } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { registerIpc } from './ipc.ts';
import { DEV_CSP, isOwnPage, PRODUCTION_CSP, type RendererOrigin } from './security.ts';

const here = path.dirname(fileURLToPath(import.meta.url)); // out/main once built
const PRELOAD_FILE = path.join(here, '../preload/index.cjs');
const RENDERER_INDEX = path.join(here, '../renderer/index.html');
/** Set by `electron-vite dev` only; a packaged app always loads its own files. */
const DEV_SERVER_URL = !app.isPackaged ? process.env['ELECTRON_RENDERER_URL'] : undefined;
const ORIGIN: RendererOrigin = {
  indexFileUrl: pathToFileURL(RENDERER_INDEX).href,
  ...(DEV_SERVER_URL ? { devServerUrl: DEV_SERVER_URL } : {}),
};

let mainWindow: BrowserWindow | null = null;
let store: Store | null = null;
let disposeIpc: (() => void) | null = null;

/** The database file: `$FLOWLAB_DB` if set, else `<userData>/flowlab.db`. */
function databaseFile(): string {
  const fromEnv = process.env['FLOWLAB_DB'];
  return fromEnv ? path.resolve(fromEnv) : path.join(app.getPath('userData'), 'flowlab.db');
}

/** Applies the session-wide guards: CSP header, no permissions, no navigation, no new windows. */
function hardenSession(): void {
  const csp = DEV_SERVER_URL ? DEV_CSP : PRODUCTION_CSP;
  // Covers http(s) responses (the dev server); file:// pages rely on the <meta> in index.html.
  session.defaultSession.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: { ...details.responseHeaders, 'Content-Security-Policy': [csp] } });
  });
  session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.defaultSession.setPermissionCheckHandler(() => false);

  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-navigate', (event) => event.preventDefault());
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
    webPreferences: {
      preload: PRELOAD_FILE,
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
      webSecurity: true,
      webviewTag: false,
      spellcheck: false,
    },
  });
  win.once('ready-to-show', () => win.show());
  win.on('closed', () => {
    if (mainWindow === win) mainWindow = null;
  });
  mainWindow = win;
  if (DEV_SERVER_URL) void win.loadURL(DEV_SERVER_URL);
  else void win.loadFile(RENDERER_INDEX);
}

/** Opens the store and serves the API; on failure tells the user which file and why, then exits. */
function startLab(): boolean {
  const file = databaseFile();
  try {
    store = openStore(file);
  } catch (err) {
    dialog.showErrorBox('Flowlab cannot open its database', `${file}\n\n${err instanceof Error ? err.message : String(err)}`);
    return false;
  }
  const handlers = createHandlers({ store, version: app.getVersion() });
  disposeIpc = registerIpc(ipcMain, handlers, {
    isTrustedSender: (event) => !!event.senderFrame && isOwnPage(event.senderFrame.url, ORIGIN),
    onError: (error, channel) => {
      if (error.code === 'INTERNAL') console.error(`[flowlab] ${channel}:`, error.cause ?? error);
    },
  });
  return true;
}

/** Releases what `startLab` took: IPC listeners, then the database (checkpointing its WAL). */
function stopLab(): void {
  disposeIpc?.();
  disposeIpc = null;
  store?.close();
  store = null;
}

if (!app.requestSingleInstanceLock()) {
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
  app.on('will-quit', stopLab);

  void app.whenReady().then(() => {
    hardenSession();
    if (!startLab()) {
      app.exit(1);
      return;
    }
    createWindow();
  });
}
