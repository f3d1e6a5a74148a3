/**
 * Downloading a model from the Models view, end to end: `flowlab serve --allow-private-downloads`
 * over an empty database, a loopback HTTP server in this process serving the tiny real GGUF model
 * (stories260K), driven from Debian Chromium. The form downloads it under another name with its
 * sha256 checked, the progress ends, and the file appears in the model list with its GGUF header
 * read; a wrong sha256 shows the refusal in the user's words and lists nothing. Skips, saying
 * why, without Chromium or the model.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserMissing, openLab, REQUIRED, screenshot, sharedMissing, TINY_MODEL, type OpenLab, type ServeProcess } from './harness.ts';

const missing = browserMissing() ?? sharedMissing();
if (missing && REQUIRED) throw new Error(`e2e: ${missing} (FLOWLAB_E2E_REQUIRED=1: the browser tests must run here)`);
if (missing) process.stdout.write(`[e2e downloads] SKIPPED: ${missing}\n`);

const tid = (id: string) => `[data-testid="${id}"]`;

let lab: OpenLab<void>;
let serve: ServeProcess;
let page: Page;
let pageErrors: string[] = [];
let files: Server;
let base = '';

describe.skipIf(!!missing)('downloading a model from the Models view (flowlab serve, loopback source)', () => {
  beforeAll(async () => {
    const body = readFileSync(TINY_MODEL);
    files = createServer((req, res) => {
      if (req.url !== '/files/tiny-copy.gguf' && req.url !== '/files/corrupt.gguf') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-length': body.length }).end(body);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    lab = await openLab(() => {}, { serveArgs: ['--allow-private-downloads'] });
    ({ serve, page, pageErrors } = lab);
  }, 300_000);

  afterAll(async () => {
    await lab?.close();
    files?.closeAllConnections();
    await new Promise<void>((resolve) => (files ? files.close(() => resolve()) : resolve()));
  }, 60_000);

  it('downloads a file with its sha256 checked and sees it listed', async () => {
    const sha = createHash('sha256').update(readFileSync(TINY_MODEL)).digest('hex');
    await page.goto(serve.url);
    await page.click(tid('nav-models'));
    await page.locator(tid('models-table')).waitFor({ timeout: 30_000 });
    await page.locator(tid('download-source')).fill(`${base}/files/tiny-copy.gguf`);
    await page.locator(tid('download-sha256')).fill(sha);
    await page.click(tid('download-start'));
    await page.locator(`${tid('download-status')}[data-status="completed"]`).waitFor({ timeout: 60_000 });
    const size = readFileSync(TINY_MODEL).length;
    await expect(page.locator(tid('download-bytes')).textContent()).resolves.toBe('1.1 MiB of 1.1 MiB');
    expect(size).toBe(1_185_376);
    const row = page.locator(`${tid('models-table')} tr`, { hasText: 'tiny-copy.gguf' });
    await row.waitFor({ timeout: 30_000 });
    await expect(row.textContent()).resolves.toMatch(/tiny-copy\.gguf.*model folder.*llama/);
    expect(existsSync(path.join(lab.ws.models, 'tiny-copy.gguf'))).toBe(true);
    expect(pageErrors).toEqual([]);
    await screenshot(page, 'models-download');
  });

  it('refuses a download whose sha256 differs, in words, and lists nothing', async () => {
    await page.locator(tid('download-source')).fill(`${base}/files/corrupt.gguf`);
    await page.locator(tid('download-sha256')).fill('ab'.repeat(32));
    await page.click(tid('download-start'));
    await page.locator(`${tid('download-status')}[data-status="failed"]`).waitFor({ timeout: 60_000 });
    await expect(page.locator(tid('download-message')).textContent()).resolves.toMatch(/^✗ The downloaded file does not match the sha256 you gave, so it was removed\./);
    expect(existsSync(path.join(lab.ws.models, 'corrupt.gguf'))).toBe(false);
    expect(existsSync(path.join(lab.ws.models, 'corrupt.gguf.part'))).toBe(false);
    await expect(page.locator(`${tid('models-table')} tr`, { hasText: 'corrupt.gguf' }).count()).resolves.toBe(0);
  });

  it('names a bad source in words before anything starts', async () => {
    await page.locator(tid('download-source')).fill('file:///etc/passwd');
    await page.locator(tid('download-sha256')).fill('');
    await page.click(tid('download-start'));
    await expect(page.locator(tid('download-error')).textContent()).resolves.toBe('✗ The source must be an hf:<owner>/<repo>/<file.gguf> reference or an http(s) URL');
  });
});
