import { mkdirSync, writeFileSync } from 'node:fs';
import { request, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createHandlers, type LabEvent, type LabHost } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { PRODUCTION_CSP } from './security.ts';
import { createEventHub, startLabServer, type EventHub, type LabServer } from './index.ts';
import { tempDir } from '../test/fixtures.ts';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json?: unknown;
}

/** One HTTP request to the test server; resolves with the whole answer. */
function call(server: LabServer, opts: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method: opts.method ?? 'GET', path: opts.path, headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

let store: Store;
let hub: EventHub;
let server: LabServer;
let rendererDir: string;
const started: string[] = [];

const lab: LabHost = {
  listExamples: () => [],
  listDatasets: () => [],
  listModels: () => [],
  addModel: ({ path: p }) => ({ path: p, fileName: 'x.gguf', sizeBytes: 1, source: 'added' }),
  testModel: () => ({ text: 't', promptTokens: 1, completionTokens: 1, ms: 1 }),
  startRun: (req) => {
    started.push(req.dataset);
    return { experimentId: 'exp-http' };
  },
  cancelRun: () => ({ cancelled: false }),
  activeRuns: () => [],
};

beforeEach(async () => {
  store = openStore(':memory:');
  hub = createEventHub();
  rendererDir = tempDir('renderer');
  mkdirSync(path.join(rendererDir, 'assets'));
  writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>Flowlab</title>');
  writeFileSync(path.join(rendererDir, 'assets/app.js'), 'console.log(1)');
  server = await startLabServer({ api: createHandlers({ store, version: '2.0.0', lab }), subscribe: hub.subscribe, rendererDir, token: 'secret-token' });
});
afterEach(async () => {
  await server.close();
  store.close();
});

const auth = { 'x-flowlab-token': 'secret-token' };
const post = (method: string, body?: string, headers: Record<string, string> = auth) =>
  call(server, { method: 'POST', path: `/api/${method}`, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body } : {}) });

describe('flowlab serve: the HTTP host', () => {
  it('binds to loopback on a free port and prints a URL with the token', () => {
    expect(server.host).toBe('127.0.0.1');
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=secret-token`);
    expect(server.networkUrls).toEqual([]);
  });

  it('makes a 64-hex-character random token when none is given', async () => {
    const other = await startLabServer({ api: createHandlers({ store, version: '1' }), subscribe: hub.subscribe, rendererDir });
    try {
      expect(other.token).toMatch(/^[0-9a-f]{64}$/);
      expect(other.token).not.toBe(server.token);
    } finally {
      await other.close();
    }
  });

  it('requires the token on every API request (401 without or with a wrong one)', async () => {
    for (const reply of [await post('appInfo', undefined, {}), await post('appInfo', undefined, { 'x-flowlab-token': 'secret-tokeN' }), await call(server, { path: '/api/events' })]) {
      expect(reply.status).toBe(401);
      expect(reply.json).toEqual({ ok: false, error: { code: 'FORBIDDEN', message: 'missing or wrong session token: open the URL that `flowlab serve` printed' } });
    }
    expect((await call(server, { method: 'POST', path: '/api/appInfo?token=secret-token' })).status).toBe(200);
  });

  it('requires the token for the page and sends it with a strict CSP', async () => {
    const denied = await call(server, { path: '/' });
    expect(denied.status).toBe(401);
    expect(denied.text).toContain('session token');
    const page = await call(server, { path: '/?token=secret-token' });
    expect(page.status).toBe(200);
    expect(page.text).toContain('<title>Flowlab</title>');
    expect(page.headers['content-security-policy']).toBe(PRODUCTION_CSP);
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['cache-control']).toBe('no-store');
  });

  it('serves built assets without the token, and nothing outside the renderer folder', async () => {
    const js = await call(server, { path: '/assets/app.js' });
    expect([js.status, js.headers['content-type'], js.text]).toEqual([200, 'text/javascript; charset=utf-8', 'console.log(1)']);
    expect((await call(server, { path: '/assets/../../etc/passwd' })).status).toBe(404);
    expect((await call(server, { path: '/%2e%2e/%2e%2e/etc/passwd' })).status).toBe(404);
    expect((await call(server, { path: '/nope.js' })).status).toBe(404);
    expect((await call(server, { path: '/favicon.ico' })).status).toBe(204);
    expect((await call(server, { method: 'DELETE', path: '/assets/app.js' })).status).toBe(405);
  });

  it('says how to build the renderer when it is missing', async () => {
    const bare = await startLabServer({ api: createHandlers({ store, version: '1' }), subscribe: hub.subscribe, rendererDir: path.join(rendererDir, 'none'), token: 't' });
    try {
      const reply = await call(bare, { path: '/?token=t' });
      expect(reply.status).toBe(503);
      expect(reply.text).toContain('npm run build');
    } finally {
      await bare.close();
    }
  });

  it('refuses requests from another origin (403), accepts its own', async () => {
    const evil = await post('appInfo', undefined, { ...auth, origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(evil.json).toMatchObject({ ok: false, error: { code: 'FORBIDDEN', message: expect.stringContaining('origin https://evil.example') } });
    expect((await post('appInfo', undefined, { ...auth, origin: 'null' })).status).toBe(403);
    expect((await call(server, { path: '/?token=secret-token', headers: { origin: 'http://localhost:1' } })).status).toBe(403);
    expect((await post('appInfo', undefined, { ...auth, origin: `http://127.0.0.1:${server.port}` })).status).toBe(200);
  });

  it('refuses a Host header that is not loopback (DNS rebinding)', async () => {
    const reply = await post('appInfo', undefined, { ...auth, host: `evil.example:${server.port}` });
    expect(reply.status).toBe(403);
    expect((await post('appInfo', undefined, { ...auth, host: `localhost:${server.port}` })).status).toBe(200);
  });

  it('answers an API call: {ok: true, result}', async () => {
    const reply = await post('appInfo');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.json).toEqual({ ok: true, result: { version: '2.0.0', dbFile: ':memory:' } });
    expect((await post('listExperiments', '{}')).json).toEqual({ ok: true, result: [] });
    const run = await post('startRun', JSON.stringify({ workflowText: 'name: x\n', dataset: 'gsm8k', split: 'test', limit: 1, seed: 0, models: { default: '/m.gguf' } }));
    expect(run.json).toEqual({ ok: true, result: { experimentId: 'exp-http' } });
    expect(started).toContain('gsm8k');
  });

  it('answers API errors with their code, method and field, and a matching status', async () => {
    const bad = await post('listRuns', JSON.stringify({ experimentId: 42 }));
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({ ok: false, error: { code: 'BAD_REQUEST', message: 'listRuns: payload field "experimentId": expected string, received number', method: 'listRuns', field: 'experimentId' } });
    const missing = await post('getExperiment', JSON.stringify({ id: 'nope' }));
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ ok: false, error: { code: 'NOT_FOUND', method: 'getExperiment' } });
    const lab = await post('addModel', JSON.stringify({ path: 'relative.gguf' }));
    expect([lab.status, (lab.json as { error: { field: string } }).error.field]).toEqual([400, 'path']);
  });

  it('malformed JSON body: 400 saying so', async () => {
    const reply = await post('getExperiment', '{"id": ');
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', method: 'getExperiment', message: expect.stringMatching(/^getExperiment: the request body is not valid JSON \(/) } });
  });

  it('unknown method: 404; wrong HTTP method: 405; oversized body: 413', async () => {
    const unknown = await post('dropTables', '{}');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ ok: false, error: { code: 'NOT_FOUND', message: 'unknown API method "dropTables"', method: 'dropTables' } });
    expect((await post('__proto__')).status).toBe(404);
    expect((await post('toString')).status).toBe(404);
    const get = await call(server, { path: '/api/appInfo', headers: auth });
    expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
    const big = await post('validateWorkflow', JSON.stringify({ text: 'x'.repeat(9 * 1024 * 1024) }));
    expect(big.status).toBe(413);
  });

  it('streams LabEvents as Server-Sent Events, and ends the stream on close', async () => {
    const event: LabEvent = { type: 'experiment', experimentId: 'exp-sse', status: 'running', done: 0, total: 3 };
    const received = await new Promise<{ headers: IncomingHttpHeaders; data: unknown; ended: Promise<void> }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, path: '/api/events?token=secret-token' }, (res) => {
        let buf = '';
        let ended!: () => void;
        const endedP = new Promise<void>((r) => (ended = r));
        res.on('end', () => ended());
        res.on('data', (c: Buffer) => {
          buf += c.toString('utf8');
          if (buf.includes(': connected') && hub.size === 1 && !buf.includes('data:')) hub.emit(event);
          const m = /^data: (.*)$/m.exec(buf);
          if (m) resolve({ headers: res.headers, data: JSON.parse(m[1]!), ended: endedP });
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(received.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(received.data).toEqual(event);
    await server.close();
    await received.ended;
    expect(hub.size).toBe(0);
  });
});
