/**
 * The Content-Security-Policy of Flowlab's page, as plain data shared by both hosts: the Electron
 * main process (electron/main.ts) and the browser host (host/server.ts) send it as a response
 * header, and the build config (electron.vite.config.ts) checks `renderer/index.html` carries it.
 * It lives here, below both composition roots, so host/ need not import electron/.
 */

/** CSP directives of the packaged app: own files only, no remote origins, no inline scripts or styles. */
const PRODUCTION_DIRECTIVES: readonly string[] = [
  "default-src 'self'",
  "script-src 'self'",
  // No inline styles either: React's `style` prop, cytoscape and Chart.js set styles through the
  // CSSOM, which `style-src` does not govern; `<style>` elements and `style="..."` in markup are
  // refused (e2e/csp.test.ts opens every view and asserts no violation).
  "style-src 'self'",
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
 * inline module script, its CSS arrives as inline <style> elements and HMR talks over a
 * localhost websocket. Never used in a build.
 */
export const DEV_CSP = PRODUCTION_DIRECTIVES.map((d) => {
  if (d.startsWith('script-src')) return "script-src 'self' 'unsafe-inline'";
  if (d.startsWith('connect-src')) return "connect-src 'self' ws://localhost:* http://localhost:*";
  // Vite's dev server injects each CSS module as a <style> element (and swaps it on HMR).
  if (d.startsWith('style-src')) return "style-src 'self' 'unsafe-inline'";
  return d;
}).join('; ');
