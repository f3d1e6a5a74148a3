/**
 * The browser host's page and asset routing and its Host check, probed over real HTTP. Each row
 * of `PATH_PROBES` is a raw request path and the status it must get without the token;
 * `HOST_PROBES` are Host headers against a server bound to all interfaces.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { tempDir } from '../test/fixtures.ts';
import { allowedHostHeaders, machineAddresses } from './hostHeader.ts';
import { createEventHub, startLabServer, type LabServer } from './index.ts';
import { normaliseRequestPath } from './staticFiles.ts';

/** One raw GET (the path is sent exactly as written); status and body. */
function get(port: number, rawPath: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'GET', path: rawPath, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

const PAGE = '<!doctype html><title>Flowlab page</title>';

/** (raw path, status without the token). 401: the page's token wall; 404: no such file. */
const PATH_PROBES: ReadonlyArray<[string, number]> = [
  ['/', 401],
  ['/index.html', 401],
  ['/%69ndex.html', 401],
  ['/index.html/', 401],
  ['/index%2ehtml', 401],
  ['/index%2Ehtml', 401],
  ['/assets/..%2findex.html', 401],
  ['/assets/%2e%2e/index.html', 401],
  ['//index.html', 401],
  ['/./index.html', 401],
  ['/INDEX.HTML', 404],
  ['/index.html%00', 404],
  ['/..%2f..%2fetc%2fpasswd', 404],
  ['/assets%5capp.js', 404],
  ['/%E0%A4%A', 404],
  ['/assets/app.js', 200],
  ['/assets//app.js', 200],
  ['/assets/%61pp.js', 200],
  ['/assets/APP.JS', 404],
  ['/secret.txt', 404],
];

let store: Store;
let server: LabServer;
let any: LabServer;
beforeAll(async () => {
  store = openStore(':memory:');
  const root = tempDir('static');
  const rendererDir = path.join(root, 'renderer');
  mkdirSync(path.join(rendererDir, 'assets'), { recursive: true });
  writeFileSync(path.join(rendererDir, 'index.html'), PAGE);
  writeFileSync(path.join(rendererDir, 'assets/app.js'), 'console.log(1)');
  writeFileSync(path.join(root, 'secret.txt'), 'secret');
  const options = { api: createHandlers({ store, version: '1' }), subscribe: createEventHub().subscribe, rendererDir, token: 'tok' };
  server = await startLabServer(options);
  any = await startLabServer({ ...options, host: '0.0.0.0' });
});
afterAll(async () => {
  await server.close();
  await any.close();
  store.close();
});

describe('page and asset paths', () => {
  for (const [raw, status] of PATH_PROBES) {
    it(`GET ${raw} without the token: ${status}`, async () => {
      const reply = await get(server.port, raw);
      expect(reply.status).toBe(status);
      if (status !== 200) expect(reply.text).not.toContain('Flowlab page');
    });
  }

  it('every spelling of the page is served with the token', async () => {
    for (const raw of ['/%69ndex.html?token=tok', '/index.html/?token=tok', '/assets/..%2findex.html?token=tok']) {
      expect(await get(server.port, raw)).toEqual({ status: 200, text: PAGE });
    }
  });

  it('normaliseRequestPath', () => {
    expect(['/', '/a//b/', '/a/./b', '/a/../b', '/%2e%2e/x', '/a\\b', '/x%00', '/%zz'].map(normaliseRequestPath)).toEqual(['', 'a/b', 'a/b', 'b', 'x', undefined, undefined, undefined]);
  });
});

describe('the Host check bound to 0.0.0.0', () => {
  const own = machineAddresses().find((a) => !a.includes(':') && a !== '127.0.0.1');

  it('allows loopback names and the machine\'s own addresses with the port, nothing else', async () => {
    const port = any.port;
    const ok = [`127.0.0.1:${port}`, `localhost:${port}`, ...(own ? [`${own}:${port}`] : [])];
    for (const host of ok) expect((await get(port, '/assets/app.js', { host })).status, host).toBe(200);
    for (const host of [`evil.example:${port}`, `127.0.0.1:${port + 1}`, `rebind.attacker.test:${port}`, `10.255.255.254:${port}`, `127.0.0.1.evil.example:${port}`]) {
      const reply = await get(port, '/assets/app.js', { host });
      expect(reply.status, host).toBe(403);
      expect(reply.text).toContain(`one of this machine's addresses with port ${port}`);
    }
  });

  it('an Origin of another site is refused on 0.0.0.0 too', async () => {
    const reply = await get(any.port, '/assets/app.js', { host: `127.0.0.1:${any.port}`, origin: 'http://evil.example' });
    expect(reply.status).toBe(403);
  });

  it('allowedHostHeaders lists IPv6 addresses in brackets and adds a specific bind address', () => {
    expect(allowedHostHeaders('0.0.0.0', 80, () => ['192.168.1.7', 'fe80::1'])).toEqual(['127.0.0.1:80', 'localhost:80', '[::1]:80', '192.168.1.7:80', '[fe80::1]:80']);
    expect(allowedHostHeaders('127.0.0.1', 80, () => ['192.168.1.7'])).toEqual(['127.0.0.1:80', 'localhost:80', '[::1]:80']);
  });
});
