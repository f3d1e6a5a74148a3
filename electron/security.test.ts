import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEV_CSP, PRODUCTION_CSP } from '../host/security.ts';
import { APP_INDEX_URL, contentTypeOf, isOwnPage, resolveAppFile, secureWebPreferences } from './security.ts';

describe('Content-Security-Policy', () => {
  it('is the same string in renderer/index.html as in the header main sends', () => {
    const html = readFileSync(new URL('../renderer/index.html', import.meta.url), 'utf8');
    const meta = /<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/.exec(html);
    expect(meta?.[1]).toBe(PRODUCTION_CSP);
  });

  it('allows no remote origin, inline script, inline style or eval in production', () => {
    expect(PRODUCTION_CSP).toContain("default-src 'self'");
    expect(PRODUCTION_CSP).toContain("script-src 'self';");
    expect(PRODUCTION_CSP).not.toMatch(/https?:|ws:|\*|unsafe-eval/);
    expect(PRODUCTION_CSP).toContain("style-src 'self';");
    expect(PRODUCTION_CSP).not.toContain("'unsafe-inline'");
  });

  it('relaxes only script, style and connect sources for the dev server', () => {
    expect(DEV_CSP).toContain("script-src 'self' 'unsafe-inline'");
    expect(DEV_CSP).toContain("style-src 'self' 'unsafe-inline'");
    expect(DEV_CSP).toContain('ws://localhost:*');
    const others = (csp: string) => csp.replace(/; script-src[^;]*/, '').replace(/; style-src[^;]*/, '').replace(/; connect-src[^;]*/, '');
    expect(others(DEV_CSP)).toBe(others(PRODUCTION_CSP));
  });
});

describe('isOwnPage', () => {
  const built = { appIndexUrl: APP_INDEX_URL };

  it('trusts the built page on app://flowlab, with or without a query or hash', () => {
    expect(APP_INDEX_URL).toBe('app://flowlab/index.html');
    expect(isOwnPage(APP_INDEX_URL, built)).toBe(true);
    expect(isOwnPage(`${APP_INDEX_URL}#/runs`, built)).toBe(true);
    expect(isOwnPage(`${APP_INDEX_URL}?x=1`, built)).toBe(true);
  });

  it('distrusts other hosts, ports, users, files, remote pages and junk', () => {
    expect(isOwnPage('app://evil/index.html', built)).toBe(false);
    expect(isOwnPage('app://flowlab.evil/index.html', built)).toBe(false);
    expect(isOwnPage('app://flowlab:8080/index.html', built)).toBe(false);
    expect(isOwnPage('app://user@flowlab/index.html', built)).toBe(false);
    expect(isOwnPage('app://flowlab/other.html', built)).toBe(false);
    expect(isOwnPage('file:///index.html', built)).toBe(false);
    expect(isOwnPage('file://flowlab/index.html', built)).toBe(false);
    expect(isOwnPage('file:///etc/passwd', built)).toBe(false);
    expect(isOwnPage('https://example.com/', built)).toBe(false);
    expect(isOwnPage('about:blank', built)).toBe(false);
    expect(isOwnPage('not a url', built)).toBe(false);
    expect(isOwnPage('http://localhost:5173/', built)).toBe(false);
  });

  it('trusts the dev server origin only when one is given, and only that exact origin', () => {
    const dev = { ...built, devServerUrl: 'http://localhost:5173' };
    expect(isOwnPage('http://localhost:5173/index.html', dev)).toBe(true);
    expect(isOwnPage('http://localhost:5174/', dev)).toBe(false);
    expect(isOwnPage('http://127.0.0.1:5173/', dev)).toBe(false);
    expect(isOwnPage('https://localhost:5173/', dev)).toBe(false);
  });
});

describe('resolveAppFile: app://flowlab/ serves only the built renderer folder', () => {
  const root = '/opt/Flowlab/resources/app.asar/out/renderer';

  it('maps the page and its assets to files inside the folder', () => {
    expect(resolveAppFile('app://flowlab/index.html', root)).toBe(`${root}/index.html`);
    expect(resolveAppFile('app://flowlab/', root)).toBe(`${root}/index.html`);
    expect(resolveAppFile('app://flowlab/assets/index-abc.js?v=1#x', root)).toBe(`${root}/assets/index-abc.js`);
    expect(resolveAppFile('app://flowlab/assets/a%20b.css', root)).toBe(`${root}/assets/a b.css`);
    expect(resolveAppFile('app://flowlab/assets/../index.html', root)).toBe(`${root}/index.html`);
    // The URL parser resolves %2e%2e as a dot segment against the root: it stays inside (a 404).
    expect(resolveAppFile('app://flowlab/%2e%2e/%2e%2e/etc/passwd', root)).toBe(`${root}/etc/passwd`);
  });

  it('refuses escapes, encoded or not, other hosts and schemes, and junk', () => {
    for (const url of [
      'app://flowlab/..%2f..%2fmain%2findex.js',
      'app://flowlab/assets/..%2f..%2f..%2fpackage.json',
      'app://flowlab/assets%5c..%5c..%5cmain.js',
      'app://flowlab/index.html%00.png',
      'app://flowlab/%E0%A4%A',
      'app://evil/index.html',
      'app://flowlab:1/index.html',
      'file:///opt/Flowlab/resources/app.asar/out/renderer/index.html',
      'not a url',
    ]) {
      expect(resolveAppFile(url, root), url).toBeUndefined();
    }
  });

  it('names content types by extension', () => {
    expect(contentTypeOf('/x/index.html')).toBe('text/html; charset=utf-8');
    expect(contentTypeOf('/x/a.JS')).toBe('text/javascript; charset=utf-8');
    expect(contentTypeOf('/x/a.wasm')).toBe('application/wasm');
    expect(contentTypeOf('/x/a.bin')).toBe('application/octet-stream');
  });
});

describe('main.ts wires the guards', () => {
  const main = readFileSync(new URL('./main.ts', import.meta.url), 'utf8');

  it('loads the page from app://, registers the scheme as privileged and serves it confined', () => {
    expect(main).toContain('win.loadURL(APP_INDEX_URL)');
    expect(main).not.toMatch(/loadFile\(|file:\/\//);
    expect(main).toContain('protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME');
    expect(main).toContain('resolveAppFile(request.url, RENDERER_DIR)');
    expect(main).toContain("'content-security-policy': PRODUCTION_CSP");
  });

  it('stops navigation of the window and of every frame, and new windows', () => {
    expect(main).toContain("contents.on('will-navigate', (event) => event.preventDefault())");
    expect(main).toContain("contents.on('will-frame-navigate', (event) => event.preventDefault())");
    expect(main).toContain("setWindowOpenHandler(() => ({ action: 'deny' }))");
  });
});

describe('the main window', () => {
  it('is context-isolated, sandboxed, without Node integration or webviews, with web security on', () => {
    const main = readFileSync(new URL('./main.ts', import.meta.url), 'utf8');
    expect(main).toContain('webPreferences: secureWebPreferences(PRELOAD_FILE)');
    // Every field, grouped by its value: the preload path, the protections on, the features off.
    const prefs: Record<string, unknown> = secureWebPreferences('/app/preload.cjs');
    const fieldsSetTo = (value: unknown) => Object.keys(prefs).filter((k) => prefs[k] === value).sort();
    expect(fieldsSetTo('/app/preload.cjs')).toEqual(['preload']);
    expect(fieldsSetTo(true)).toEqual(['contextIsolation', 'sandbox', 'webSecurity']);
    expect(fieldsSetTo(false)).toEqual(['allowRunningInsecureContent', 'nodeIntegration', 'nodeIntegrationInSubFrames', 'nodeIntegrationInWorker', 'spellcheck', 'webviewTag']);
    expect(Object.keys(prefs)).toHaveLength(10);
  });
});
