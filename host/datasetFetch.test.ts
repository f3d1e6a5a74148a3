/**
 * Dataset fetches against a loopback HTTP server: files checked by sha256 and size, a gzip
 * checked before and after unpacking, a tampered file refused and removed, the next URL tried,
 * progress up to the set's total, and files already in place kept. Also: a fresh user data
 * folder lists every dataset, the procedural ones ready and the others with how to get them.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASET_SOURCES, datasetBytes, getDataset, resolveDataDir, type DatasetSource } from '../core/tasks/index.ts';
import { lonelyDir, tempDir } from '../test/fixtures.ts';
import { fetchDataset } from './datasetFetch.ts';
import { listDatasets } from './datasets.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const QUESTIONS = Buffer.from('{"question": "What is 2 + 3?", "answer": "2 + 3 = <<2+3=5>>5\\n#### 5"}\n', 'utf8');
const CODE = Buffer.from('{"task_id": "T/0"}\n'.repeat(200), 'utf8');
const CODE_GZ = gzipSync(CODE);

let server: http.Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits.push(req.url!);
    const body = req.url === '/good.jsonl' ? QUESTIONS : req.url === '/tampered.jsonl' ? Buffer.concat([QUESTIONS.subarray(0, -2), Buffer.from('6\n')]) : req.url === '/code.jsonl.gz' ? CODE_GZ : undefined;
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const source = (urls: string[]): DatasetSource => ({
  files: [
    { path: 'gsm8k/test.jsonl', urls, bytes: QUESTIONS.length, sha256: sha(QUESTIONS) },
    { path: 'humaneval/HumanEval.jsonl', urls: [`${base}/code.jsonl.gz`], bytes: CODE.length, sha256: sha(CODE), gunzip: { bytes: CODE_GZ.length, sha256: sha(CODE_GZ) } },
  ],
  licence: 'test',
  source: 'loopback',
});

describe('fetchDataset (loopback server)', () => {
  it('fetches, checks sha256 and size, unpacks a gzip, reports progress up to the total', async () => {
    const dataDir = tempDir('fetch-ok');
    const seen: number[] = [];
    const src = source([`${base}/good.jsonl`]);
    const files = await fetchDataset('gsm8k', { dataDir, source: src, onProgress: (done, total) => { seen.push(done); expect(total).toBe(QUESTIONS.length + CODE.length); } });
    expect(files.map((f) => [f.path, f.action, f.sha256])).toEqual([
      ['gsm8k/test.jsonl', 'fetched', sha(QUESTIONS)],
      ['humaneval/HumanEval.jsonl', 'fetched', sha(CODE)],
    ]);
    expect(readFileSync(path.join(dataDir, 'gsm8k/test.jsonl'))).toEqual(QUESTIONS);
    expect(readFileSync(path.join(dataDir, 'humaneval/HumanEval.jsonl'))).toEqual(CODE);
    expect(readdirSync(path.join(dataDir, 'humaneval'))).toEqual(['HumanEval.jsonl']); // no .gz, .part or temp left
    expect(seen.at(-1)).toBe(datasetBytes(src));
    expect(seen.every((v, i) => i === 0 || v >= seen[i - 1]!)).toBe(true);
    // The fetched file is read by the real loader.
    expect(getDataset('gsm8k', { dataDir }).load({ split: 'test' })).toHaveLength(1);
    // Again: both kept, nothing requested.
    const before = hits.length;
    const again = await fetchDataset('gsm8k', { dataDir, source: src });
    expect(again.map((f) => f.action)).toEqual(['kept', 'kept']);
    expect(hits.length).toBe(before);
  });

  it('refuses a file whose sha256 differs (removed, not left under its name), then takes the next URL', async () => {
    const dataDir = tempDir('fetch-bad');
    await expect(fetchDataset('gsm8k', { dataDir, source: source([`${base}/tampered.jsonl`]) })).rejects.toMatchObject({ code: 'SHA256_MISMATCH' });
    expect(existsSync(path.join(dataDir, 'gsm8k/test.jsonl'))).toBe(false);
    expect(readdirSync(path.join(dataDir, 'gsm8k'))).toEqual([]);
    const files = await fetchDataset('gsm8k', { dataDir, source: source([`${base}/tampered.jsonl`, `${base}/missing.jsonl`, `${base}/good.jsonl`]) });
    expect(files[0]).toMatchObject({ action: 'fetched', url: `${base}/good.jsonl` });
  });

  it('names every URL tried when all fail', async () => {
    const err = await fetchDataset('gsm8k', { dataDir: tempDir('fetch-404'), source: source([`${base}/a`, `${base}/b`]) }).catch((e: unknown) => e as Error);
    expect((err as Error).message).toContain(`${base}/a: ${base}/a answered HTTP 404`);
    expect((err as Error).message).toContain(`${base}/b`);
  });

  it('a procedural dataset has nothing to fetch (the message lists the fetchable ones)', async () => {
    await expect(fetchDataset('learn-word', { dataDir: tempDir('fetch-none') })).rejects.toThrow(/built in\); fetchable: .*gsm8k.*humaneval/);
  });

  it('the real catalogue: pinned sha256 digests are 64 hex digits, sizes positive, URLs https', () => {
    for (const [name, s] of Object.entries(DATASET_SOURCES)) {
      for (const f of s.files) {
        expect(f.sha256, name).toMatch(/^[0-9a-f]{64}$/);
        expect(f.bytes, name).toBeGreaterThan(0);
        for (const u of f.urls) expect(u, name).toMatch(/^https:\/\//);
      }
      expect(s.licence.length, name).toBeGreaterThan(0);
    }
  });
});

describe('a new user: a fresh data folder, no shared folder', () => {
  it('lists every dataset: procedural ones ready, the others with the command, size, licence and folder', () => {
    const userData = tempDir('user-data');
    const saved = { cwd: process.cwd(), shared: process.env['FLOWLAB_SHARED'] };
    delete process.env['FLOWLAB_SHARED'];
    process.chdir(lonelyDir('no-shared-beside')); // its ../shared does not exist
    try {
      const location = { userDataDir: userData };
      const folder = path.join(userData, 'datasets');
      expect(resolveDataDir(location)).toBe(folder);
      const list = listDatasets(location);
      const byName = new Map(list.map((d) => [d.name, d]));
      for (const n of ['learn', 'learn-word', 'learn-json', 'learn-tool', 'learn-design']) expect(byName.get(n)?.available, n).toBe(true);
      const gsm = byName.get('gsm8k')!;
      expect(gsm.available).toBe(false);
      expect(gsm.get).toEqual({
        command: 'flowlab datasets fetch gsm8k',
        folder,
        bytes: 749738 + 4166206 + 972978,
        licence: 'MIT (OpenAI)',
        source: 'github.com/openai/grade-school-math @ 3101c7d',
      });
      expect(byName.get('bamboogle')!.get!.licence).toMatch(/not verified/);
      expect(byName.get('learn-word')!.get).toBeUndefined();
      // A procedural family loads tasks out of the box.
      expect(getDataset('learn-word', location).load({ split: 'train', limit: 3 })).toHaveLength(3);
    } finally {
      process.chdir(saved.cwd);
      if (saved.shared !== undefined) process.env['FLOWLAB_SHARED'] = saved.shared;
    }
  });
});
