import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../test/fixtures.ts';
import { checkForUpdate, compareVersions, setUpdateCheck, settingsFile, updateCheckDisabled } from './updateCheck.ts';

let server: http.Server;
let base: string;
let requests = 0;
const docs: Record<string, string> = {
  '/newer': JSON.stringify({ version: '0.2.0', url: 'https://example.org/flowlab/0.2.0' }),
  '/same': JSON.stringify({ version: '0.1.0', url: 'https://example.org/flowlab/0.1.0' }),
  '/http-url': JSON.stringify({ version: '1.0.0', url: 'http://example.org/x' }),
  '/broken': '{"version": ',
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests++;
    const body = docs[req.url!];
    if (body === undefined) res.writeHead(404).end();
    else res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('compareVersions', () => {
  it('orders major.minor.patch numerically and a pre-release before its release', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBe(1);
    expect(compareVersions('1.0.0', '1.0.0')).toBe(0);
    expect(compareVersions('1.0.0-beta.1', '1.0.0')).toBe(-1);
    expect(compareVersions('v2.0.0', '1.99.99')).toBe(1);
    expect(() => compareVersions('latest', '1.0.0')).toThrow('not a version: "latest"');
  });
});

describe('checkForUpdate (loopback feed)', () => {
  const env = {};
  it('offers a newer version, says current otherwise', async () => {
    const userDataDir = tempDir('upd');
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/newer`, userDataDir, env })).toEqual({ kind: 'newer', offer: { version: '0.2.0', url: 'https://example.org/flowlab/0.2.0' } });
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/same`, userDataDir, env })).toEqual({ kind: 'current', latest: '0.1.0' });
  });

  it('reports a bad feed as a failure naming the URL (never throws)', async () => {
    const userDataDir = tempDir('upd');
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/missing`, userDataDir, env })).toEqual({ kind: 'failed', message: `${base}/missing answered HTTP 404` });
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/http-url`, userDataDir, env })).toEqual({ kind: 'failed', message: `${base}/http-url: "url" must be an https URL` });
    const broken = await checkForUpdate({ current: '0.1.0', feed: `${base}/broken`, userDataDir, env });
    expect(broken.kind).toBe('failed');
    expect((broken as { message: string }).message.startsWith(`${base}/broken: `)).toBe(true);
  });

  it('makes no request when turned off (settings file or FLOWLAB_UPDATE_CHECK=0) or with no feed', async () => {
    const userDataDir = tempDir('upd');
    writeFileSync(settingsFile(userDataDir), JSON.stringify({ theme: 'dark' }));
    setUpdateCheck(userDataDir, false);
    expect(JSON.parse(readFileSync(settingsFile(userDataDir), 'utf8'))).toEqual({ theme: 'dark', updateCheck: false });
    expect(updateCheckDisabled(userDataDir)).toBe(true);
    const before = requests;
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/newer`, userDataDir, env })).toEqual({ kind: 'off', why: `turned off in ${path.join(userDataDir, 'settings.json')}` });
    setUpdateCheck(userDataDir, true);
    expect(await checkForUpdate({ current: '0.1.0', feed: `${base}/newer`, userDataDir, env: { FLOWLAB_UPDATE_CHECK: '0' } })).toEqual({ kind: 'off', why: 'FLOWLAB_UPDATE_CHECK=0' });
    expect(await checkForUpdate({ current: '0.1.0', feed: undefined, userDataDir, env })).toEqual({ kind: 'off', why: 'no update feed configured' });
    expect(requests).toBe(before);
  });
});
