import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiError, createHandlers, type DownloadEvent, type FlowlabApi, type LabEvent } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { rejectionOf, tempDir } from '../test/fixtures.ts';
import { isPrivateAddress, ModelDownloads } from './downloads.ts';
import { createLabHost, type LabHostHandle } from './labHost.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
/** 600 KB of fixed bytes, served by a loopback HTTP server with Range support (RFC 9110 section 14). */
const BODY = Buffer.from(Array.from({ length: 600 * 1024 }, (_, i) => (i * 7919) % 251));
const SHA = createHash('sha256').update(BODY).digest('hex');

let server: Server;
let base: string;
/** While set, responses stop after this many bytes and hang (an interrupted download). */
let stallAt: number | undefined;
const hanging: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/redirect.gguf') return void res.writeHead(302, { location: '/m.gguf' }).end();
    if (req.url !== '/m.gguf' && req.url !== '/other.gguf') return void res.writeHead(404).end();
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = range ? Number(range[1]) : 0;
    const part = BODY.subarray(from);
    res.writeHead(range ? 206 : 200, { 'content-length': part.length, ...(range && { 'content-range': `bytes ${from}-${BODY.length - 1}/${BODY.length}` }) });
    if (stallAt === undefined) return void res.end(part);
    res.write(part.subarray(0, stallAt));
    hanging.push(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => {
  for (const r of hanging) r.destroy();
  server.closeAllConnections();
  server.close(() => resolve());
}));

let dir: string;
let store: Store;
let events: LabEvent[];
let lab: LabHostHandle;
let api: FlowlabApi;
const modelDir = () => path.join(dir, 'models');
const mine = (id: string) => events.filter((e): e is DownloadEvent => (e.type === 'download' || e.type === 'downloadProgress') && e.downloadId === id);
const closing = (id: string) => mine(id).filter((e) => e.type === 'download' && e.status !== 'running').at(-1) as Extract<DownloadEvent, { type: 'download' }> | undefined;

function open(allowPrivateHosts: boolean) {
  store = openStore(':memory:');
  events = [];
  lab = createLabHost({
    store, dbFile: ':memory:', modelDir: modelDir(), examplesDir: path.join(ROOT, 'examples'), emit: (e) => events.push(e),
    readHeader: async () => { throw new Error('not a GGUF header'); },
    ...(allowPrivateHosts && { downloads: { allowPrivateHosts: true } }),
  });
  api = createHandlers({ store, version: '1', lab });
}

beforeEach(() => {
  dir = tempDir('downloads');
  mkdirSync(path.join(dir, 'models'));
  stallAt = undefined;
});
afterEach(async () => {
  await lab?.dispose();
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('isPrivateAddress', () => {
  it('marks loopback, private, link-local, CGNAT, unspecified, multicast and mapped forms', () => {
    for (const ip of ['127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255',
      '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', 'localhost', 'not-an-ip']) {
      expect([ip, isPrivateAddress(ip)]).toEqual([ip, true]);
    }
  });
  it('lets public addresses through', () => {
    for (const ip of ['8.8.8.8', '172.32.0.1', '100.128.0.1', '93.184.216.34', '2606:4700::1111', '::ffff:8.8.8.8']) expect([ip, isPrivateAddress(ip)]).toEqual([ip, false]);
  });
});

describe('startDownload refuses what it must (default host)', () => {
  beforeEach(() => open(false));

  it('refuses a loopback URL with FORBIDDEN naming the source, writing nothing', async () => {
    const err = await rejectionOf(ApiError, api.startDownload({ source: `${base}/m.gguf` }));
    expect([err.code, err.field]).toEqual(['FORBIDDEN', 'source']);
    expect(err.message).toBe('startDownload: 127.0.0.1 is on this machine or a private network; the lab downloads only from public hosts (start it with `flowlab serve --allow-private-downloads` to allow them)');
    expect(existsSync(path.join(modelDir(), 'm.gguf.part'))).toBe(false);
    expect(events).toEqual([]);
  });

  it('refuses a name taken from the URL that is not a .gguf, and an existing file', async () => {
    const err = await rejectionOf(ApiError, api.startDownload({ source: 'https://example.org/weights.bin' }));
    expect([err.code, err.field, err.message]).toEqual(['BAD_REQUEST', 'fileName', 'startDownload: the file name "weights.bin" taken from the source must be a .gguf file name; give a file name']);
    writeFileSync(path.join(modelDir(), 'have.gguf'), 'x');
    const exists = await rejectionOf(ApiError, api.startDownload({ source: 'https://example.org/have.gguf' }));
    expect([exists.code, exists.field, exists.message]).toEqual(['BAD_REQUEST', 'fileName', 'startDownload: have.gguf is in the models folder already; remove it or give another file name']);
  });

  it('checks every redirect: a public host that redirects to a private one fails, nothing kept', async () => {
    const seen: string[] = [];
    const d = new ModelDownloads({
      modelDir: modelDir(), emit: (e) => events.push(e),
      resolve: async (h) => (h === 'public.example' ? ['93.184.216.34'] : ['10.0.0.7']),
      fetch: (async (url: string) => {
        seen.push(url);
        return new Response(null, { status: 302, headers: { location: 'http://internal.example/secret.gguf' } });
      }) as typeof fetch,
    });
    const { downloadId } = await d.start({ source: 'https://public.example/m.gguf' });
    await d.settled(downloadId);
    expect(seen).toEqual(['https://public.example/m.gguf']);
    expect(closing(downloadId)).toMatchObject({ status: 'failed', code: 'FORBIDDEN', bytes: 0 });
    expect(closing(downloadId)!.message).toMatch(/^The source redirected to a host on this machine or a private network.*internal\.example \(10\.0\.0\.7\)/);
  });
});

describe('startDownload from a loopback server (allowed by the option)', () => {
  beforeEach(() => open(true));

  it('downloads into the models folder with the sha256 checked, pushes progress, and the file is listed', async () => {
    const { downloadId } = await api.startDownload({ source: `${base}/redirect.gguf`, sha256: SHA.toUpperCase(), fileName: 'fetched.gguf' });
    await lab.downloads.settled(downloadId);
    const file = path.join(modelDir(), 'fetched.gguf');
    expect(closing(downloadId)).toEqual({ type: 'download', downloadId, fileName: 'fetched.gguf', status: 'completed', bytes: BODY.length, total: BODY.length, path: file, sha256: SHA });
    expect(createHash('sha256').update(readFileSync(file)).digest('hex')).toBe(SHA);
    expect(existsSync(`${file}.part`)).toBe(false);
    const progress = mine(downloadId).filter((e) => e.type === 'downloadProgress');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)).toEqual({ type: 'downloadProgress', downloadId, bytes: BODY.length, total: BODY.length });
    expect(mine(downloadId)[0]).toEqual({ type: 'download', downloadId, fileName: 'fetched.gguf', status: 'running', bytes: 0 });
    const listed = (await api.listModels()).find((m) => m.fileName === 'fetched.gguf');
    expect(listed).toMatchObject({ path: file, sizeBytes: BODY.length, source: 'folder' });
  });

  it('refuses a corrupted download (wrong sha256) and removes it', async () => {
    const wrong = 'ab'.repeat(32);
    const { downloadId } = await api.startDownload({ source: `${base}/m.gguf`, sha256: wrong });
    await lab.downloads.settled(downloadId);
    expect(closing(downloadId)).toMatchObject({ status: 'failed', code: 'SHA256_MISMATCH', bytes: BODY.length });
    expect(closing(downloadId)!.message).toMatch(/^The downloaded file does not match the sha256 you gave, so it was removed\./);
    expect(existsSync(path.join(modelDir(), 'm.gguf'))).toBe(false);
    expect(existsSync(path.join(modelDir(), 'm.gguf.part'))).toBe(false);
  });

  it('cancels halfway (the part kept) and resumes to the right sha256', async () => {
    stallAt = 200 * 1024;
    const first = await api.startDownload({ source: `${base}/other.gguf`, sha256: SHA });
    const part = path.join(modelDir(), 'other.gguf.part');
    const deadline = Date.now() + 10_000;
    while (!(existsSync(part) && statSync(part).size >= stallAt) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await expect(api.cancelDownload({ downloadId: first.downloadId })).resolves.toEqual({ cancelled: true });
    expect(closing(first.downloadId)).toMatchObject({ status: 'cancelled', bytes: stallAt, total: BODY.length });
    expect(statSync(part).size).toBe(stallAt);
    await expect(api.cancelDownload({ downloadId: first.downloadId })).resolves.toEqual({ cancelled: false });
    stallAt = undefined;
    const again = await api.startDownload({ source: `${base}/other.gguf`, sha256: SHA });
    await lab.downloads.settled(again.downloadId);
    expect(closing(again.downloadId)).toMatchObject({ status: 'completed', bytes: BODY.length, sha256: SHA });
    expect(readFileSync(path.join(modelDir(), 'other.gguf')).equals(BODY)).toBe(true);
  });

  it('answers BUSY for a second download of the same file', async () => {
    stallAt = 1024;
    const first = await api.startDownload({ source: `${base}/m.gguf` });
    const err = await rejectionOf(ApiError, api.startDownload({ source: `${base}/m.gguf` }));
    expect([err.code, err.field, err.message]).toEqual(['BUSY', 'fileName', 'startDownload: m.gguf is downloading already']);
    await api.cancelDownload({ downloadId: first.downloadId });
  });
});

