/**
 * The window's security policy as plain data and pure functions (no Electron import), so it can
 * be tested and shared with the build config: the Content-Security-Policy and the check that an
 * IPC call comes from Flowlab's own page.
 */

/** CSP directives of the packaged app: own files only, no remote origins, no inline scripts. */
const PRODUCTION_DIRECTIVES: readonly string[] = [
  "default-src 'self'",
  "script-src 'self'",
  // React sets `style` attributes; inline styles are acceptable for now.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
];

/**
 * The Content-Security-Policy of the packaged app. `renderer/index.html` carries the same string
 * in its `<meta http-equiv="Content-Security-Policy">` (a test checks they match); main also
 * sends it as a response header.
 */
export const PRODUCTION_CSP = PRODUCTION_DIRECTIVES.join('; ');

/**
 * The policy under `electron-vite dev` only: the dev server's React Refresh preamble is an
 * inline module script and HMR talks over a localhost websocket. Never used in a build.
 */
export const DEV_CSP = PRODUCTION_DIRECTIVES.map((d) => {
  if (d.startsWith('script-src')) return "script-src 'self' 'unsafe-inline'";
  if (d.startsWith('connect-src')) return "connect-src 'self' ws://localhost:* http://localhost:*";
  return d;
}).join('; ');

/** Where the renderer page comes from: the built `index.html` file, or the dev server's URL. */
export interface RendererOrigin {
  /** `file://` URL of the built renderer's `index.html`. */
  indexFileUrl: string;
  /** The dev server URL (`ELECTRON_RENDERER_URL`), only under `electron-vite dev`. */
  devServerUrl?: string;
}

/**
 * Whether `url` is Flowlab's own page: exactly the built `index.html` (any query or hash), or a
 * page of the dev server's origin in development. Everything else (remote pages, other local
 * files, `about:blank`, malformed URLs) is untrusted.
 */
export function isOwnPage(url: string, origin: RendererOrigin): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (origin.devServerUrl) {
    try {
      if (u.origin === new URL(origin.devServerUrl).origin) return true;
    } catch {
      // a malformed dev URL trusts nothing extra
    }
  }
  const own = new URL(origin.indexFileUrl);
  return u.protocol === 'file:' && own.protocol === 'file:' && u.pathname === own.pathname;
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
