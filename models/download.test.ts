import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../test/fixtures.ts';
import { DownloadError, downloadModel, modelUrl } from './download.ts';

const body = randomBytes(300_000);
const sha = createHash('sha256').update(body).digest('hex');
/** Requests seen: their Range header. */
const ranges: (string | undefined)[] = [];
let cutFirst = true;
let server: http.Server;
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    ranges.push(req.headers.range);
    const data = req.url === '/bad.gguf' ? Buffer.concat([body.subarray(0, 1000), Buffer.alloc(1), body.subarray(1001)]) : body;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = m ? Number(m[1]) : 0;
    res.writeHead(m ? 206 : 200, { 'Content-Length': data.length - from, ...(m ? { 'Content-Range': `bytes ${from}-${data.length - 1}/${data.length}` } : {}) });
    if (req.url === '/model.gguf' && cutFirst) {
      cutFirst = false;
      res.write(data.subarray(0, data.length / 2), () => res.destroy()); // the connection drops halfway
      return;
    }
    res.end(data.subarray(from));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function code(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => new Error('expected a rejection'), (e: unknown) => e);
  expect(err).toBeInstanceOf(DownloadError);
  return (err as DownloadError).code;
}

describe('model downloads over loopback HTTP', () => {
  it('interrupted halfway, then resumed with a Range request: the whole file with the right sha256, renamed into place', async () => {
    const dir = tempDir('download');
    const progress: number[] = [];
    expect(await code(downloadModel(`${base}/model.gguf`, { dir, sha256: sha }))).toBe('HTTP_ERROR');
    expect(existsSync(path.join(dir, 'model.gguf'))).toBe(false);
    const kept = statSync(path.join(dir, 'model.gguf.part')).size; // what arrived before the drop (at most half)
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThanOrEqual(150_000);
    const out = await downloadModel(`${base}/model.gguf`, { dir, sha256: sha, onProgress: (b) => progress.push(b) });
    expect(ranges.slice(-1)).toEqual([`bytes=${kept}-`]);
    expect(out).toMatchObject({ bytes: 300_000, sha256: sha, resumedFrom: kept });
    expect(createHash('sha256').update(readFileSync(out.file)).digest('hex')).toBe(sha);
    expect(existsSync(`${out.file}.part`)).toBe(false);
    expect(progress.at(-1)).toBe(300_000);
    expect(await code(downloadModel(`${base}/model.gguf`, { dir }))).toBe('EXISTS');
  });

  it('a corrupted download is refused and removed; a wrong size too', async () => {
    const dir = tempDir('download');
    expect(await code(downloadModel(`${base}/bad.gguf`, { dir, sha256: sha }))).toBe('SHA256_MISMATCH');
    expect(existsSync(path.join(dir, 'bad.gguf'))).toBe(false);
    expect(existsSync(path.join(dir, 'bad.gguf.part'))).toBe(false);
    expect(await code(downloadModel(`${base}/other.gguf`, { dir, size: 12 }))).toBe('SIZE_MISMATCH');
    expect(existsSync(path.join(dir, 'other.gguf.part'))).toBe(false);
  });

  it('hf: references name Hugging Face files; anything else is BAD_REF', () => {
    expect(modelUrl('hf:Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf')).toBe('https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf');
    expect(modelUrl('hf:a/b@v1/sub/m.gguf')).toBe('https://huggingface.co/a/b/resolve/v1/sub/m.gguf');
    expect(() => modelUrl('ftp://x/m.gguf')).toThrow(DownloadError);
    expect(() => modelUrl('hf:only-owner')).toThrow(/hf:<owner>\/<repo>\/<file.gguf>/);
  });
});
