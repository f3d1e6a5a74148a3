/**
 * The window's security policy as plain data and pure functions (no Electron import), so it can
 * be tested: where the page is served from (the privileged `app://flowlab/` scheme, confined to
 * the built renderer folder), the check that an IPC call or a navigation comes from Flowlab's own
 * page, and the window's webPreferences. The Content-Security-Policy both hosts send lives in
 * host/security.ts.
 */
import path from 'node:path';

/** The custom scheme the built page is served from (main.ts registers it as standard and secure). */
export const APP_SCHEME = 'app';
/** The one host of that scheme: every page URL is `app://flowlab/<file>`. */
export const APP_HOST = 'flowlab';
/** The page the window loads. */
export const APP_INDEX_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/** Where the renderer page comes from: `app://flowlab/index.html`, or the dev server's URL. */
export interface RendererOrigin {
  /** The built page's URL, `APP_INDEX_URL`. */
  appIndexUrl: string;
  /** The dev server URL (`ELECTRON_RENDERER_URL`), only under `electron-vite dev`. */
  devServerUrl?: string;
}

/**
 * Whether `url` is Flowlab's own page: exactly the built page's scheme, host (no user, password
 * or port) and path (any query or hash), or a page of the dev server's exact origin in
 * development. Everything else (other hosts of the scheme, `file:` URLs, remote pages,
 * `about:blank`, malformed URLs) is untrusted.
 */
export function isOwnPage(url: string, origin: RendererOrigin): boolean {
  const u = parse(url);
  if (!u) return false;
  if (origin.devServerUrl) {
    const dev = parse(origin.devServerUrl);
    if (dev && u.origin !== 'null' && u.origin === dev.origin) return true;
  }
  const own = parse(origin.appIndexUrl);
  if (!own) return false;
  return u.protocol === own.protocol && u.host === own.host && u.username === '' && u.password === '' && u.port === '' && u.pathname === own.pathname;
}

/**
 * The file an `app://flowlab/...` request maps to inside `rootDir` (the built renderer folder),
 * or undefined when it must be refused: another scheme or host, a user/password/port, a path
 * that does not decode, holds a NUL, a backslash or an encoded `..` segment
 * (`/assets/..%2f..%2fmain/index.js`), or leaves `rootDir` once normalised. `/` is `/index.html`. The caller still answers
 * 404 for a file that does not exist.
 */
export function resolveAppFile(url: string, rootDir: string): string | undefined {
  const u = parse(url);
  if (!u || u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST || u.username || u.password || u.port) return undefined;
  let decoded: string;
  try {
    decoded = decodeURIComponent(u.pathname);
  } catch {
    return undefined;
  }
  // The URL parser already resolved literal dot segments; one that survives was encoded (%2e, %2f).
  if (decoded.includes('\0') || decoded.includes('\\') || decoded.split('/').includes('..')) return undefined;
  const normal = path.posix.normalize(decoded === '/' || decoded === '' ? '/index.html' : decoded);
  if (!normal.startsWith('/') || normal.split('/').includes('..')) return undefined;
  const root = path.resolve(rootDir);
  const file = path.resolve(root, `.${normal}`);
  const rel = path.relative(root, file);
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return file;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
};

/** The Content-Type of a built renderer file, by extension (`application/octet-stream` when unknown). */
export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/**
 * The main window's webPreferences (Electron's field names): context isolation on, Node
 * integration off, the renderer sandboxed, web security on, no <webview>. `main.ts` builds its
 * BrowserWindow from this; a test asserts every field.
 */
export function secureWebPreferences(preload: string) {
  return {
    preload,
    contextIsolation: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    sandbox: true,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    spellcheck: false,
  } as const;
}
