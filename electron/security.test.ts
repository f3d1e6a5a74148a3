import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEV_CSP, PRODUCTION_CSP } from '../host/security.ts';
import { isOwnPage, secureWebPreferences } from './security.ts';

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
  const built = { indexFileUrl: 'file:///opt/Flowlab/resources/app.asar/out/renderer/index.html' };

  it('trusts the built index.html, with or without a hash', () => {
    expect(isOwnPage(built.indexFileUrl, built)).toBe(true);
    expect(isOwnPage(`${built.indexFileUrl}#/runs`, built)).toBe(true);
  });

  it('distrusts other files, remote pages and junk', () => {
    expect(isOwnPage('file:///etc/passwd', built)).toBe(false);
    expect(isOwnPage('file:///opt/Flowlab/resources/app.asar/out/renderer/other.html', built)).toBe(false);
    expect(isOwnPage('https://example.com/', built)).toBe(false);
    expect(isOwnPage('about:blank', built)).toBe(false);
    expect(isOwnPage('not a url', built)).toBe(false);
    expect(isOwnPage('http://localhost:5173/', built)).toBe(false);
  });

  it('trusts the dev server origin only when one is given', () => {
    const dev = { ...built, devServerUrl: 'http://localhost:5173' };
    expect(isOwnPage('http://localhost:5173/index.html', dev)).toBe(true);
    expect(isOwnPage('http://localhost:5174/', dev)).toBe(false);
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
