/**
 * The window's security policy as plain data and pure functions (no Electron import), so it can
 * be tested: the check that an IPC call comes from Flowlab's own page and the window's
 * webPreferences. The Content-Security-Policy both hosts send lives in host/security.ts.
 */

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
