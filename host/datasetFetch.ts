/**
 * Fetches a public dataset's files into the data folder (core/tasks/downloads.ts says which
 * files, from where, their sizes and sha256): each file through models/download.ts (a `.part`
 * file, resumed after an interruption, size and sha256 checked, renamed into place only when
 * both match; a mismatch removes it). A file served gzipped is checked as downloaded, unpacked to
 * a temporary file, checked again, then renamed. Files already present with the right digest are
 * kept. When one URL fails (network, or a file that no longer matches its pinned digest), the
 * next is tried; the error names every URL tried.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { datasetBytes, datasetNames, datasetSource, type DatasetFile, type DatasetSource } from '../core/tasks/index.ts';
import { DownloadError, downloadModel } from '../models/download.ts';
import { errorMessage } from '../core/errors.ts';

/** Progress of a dataset fetch: bytes written so far over the whole set, and the set's total. */
export type DatasetProgress = (done: number, total: number, file: string) => void;

/** Options of {@link fetchDataset}. */
export interface FetchDatasetOptions {
  /** The data folder (files go to `<dataDir>/<file.path>`). */
  dataDir: string;
  onProgress?: DatasetProgress;
  signal?: AbortSignal;
  /** @internal tests: the fetch to use (e.g. one that rewrites URLs to a loopback server). */
  fetch?: typeof fetch;
  /** @internal tests: replaces each URL before fetching. */
  rewriteUrl?: (url: string) => string;
  /** @internal tests: the files to fetch instead of the catalogue's entry for `name`. */
  source?: DatasetSource;
}

/** What {@link fetchDataset} did per file. */
export interface FetchedFile {
  path: string;
  bytes: number;
  sha256: string;
  /** `kept`: already there with the right digest; `fetched`: downloaded now. */
  action: 'kept' | 'fetched';
  /** The URL it came from (fetched only). */
  url?: string;
}

async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * Fetches dataset `name` into `options.dataDir`.
 * @throws DownloadError `BAD_REF` for a dataset with nothing to fetch (procedural or unknown; the
 *   message lists the fetchable ones); `HTTP_ERROR`, `SIZE_MISMATCH`, `SHA256_MISMATCH` (the
 *   last URL's failure, naming all URLs tried); `ABORTED`.
 */
export async function fetchDataset(name: string, options: FetchDatasetOptions): Promise<FetchedFile[]> {
  const source = options.source ?? datasetSource(name);
  if (!source) {
    const fetchable = datasetNames().filter((n) => datasetSource(n));
    throw new DownloadError('BAD_REF', `dataset '${name}' has no files to fetch (procedural datasets are built in); fetchable: ${fetchable.join(', ')}`, name);
  }
  const total = datasetBytes(source);
  let before = 0;
  const results: FetchedFile[] = [];
  for (const f of source.files) {
    const target = path.join(options.dataDir, ...f.path.split('/'));
    if (existsSync(target) && statSync(target).size === f.bytes && (await sha256File(target)) === f.sha256) {
      results.push({ path: f.path, bytes: f.bytes, sha256: f.sha256, action: 'kept' });
    } else {
      results.push(await fetchFile(f, target, options, (n) => options.onProgress?.(before + n, total, f.path)));
    }
    before += f.bytes;
    options.onProgress?.(before, total, f.path);
  }
  return results;
}

/** One file: each URL in turn until one passes its checks. */
async function fetchFile(f: DatasetFile, target: string, options: FetchDatasetOptions, progress: (bytes: number) => void): Promise<FetchedFile> {
  const dir = path.dirname(target);
  mkdirSync(dir, { recursive: true });
  const failures: string[] = [];
  let last: unknown;
  for (const original of f.urls) {
    const url = options.rewriteUrl ? options.rewriteUrl(original) : original;
    const packed = f.gunzip !== undefined;
    const downloadName = `${path.basename(target)}${packed ? '.gz' : ''}`;
    try {
      const r = await downloadModel(url, {
        dir,
        fileName: downloadName,
        overwrite: true,
        sha256: packed ? f.gunzip!.sha256 : f.sha256,
        size: packed ? f.gunzip!.bytes : f.bytes,
        // A gzip's bytes count against the unpacked size only in proportion.
        onProgress: (n) => progress(packed ? Math.floor((n / f.gunzip!.bytes) * f.bytes) : n),
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.fetch ? { fetch: options.fetch } : {}),
      });
      if (!packed) return { path: f.path, bytes: r.bytes, sha256: r.sha256, action: 'fetched', url };
      const tmp = `${target}.${process.pid}.tmp`;
      try {
        await pipeline(createReadStream(r.file), createGunzip(), createWriteStream(tmp));
        const sha = await sha256File(tmp);
        if (sha !== f.sha256 || statSync(tmp).size !== f.bytes) throw new DownloadError('SHA256_MISMATCH', `${url}: unpacked ${f.path} has sha256 ${sha}, expected ${f.sha256}; removed`, url);
        renameSync(tmp, target);
      } finally {
        rmSync(tmp, { force: true });
        rmSync(r.file, { force: true });
      }
      return { path: f.path, bytes: f.bytes, sha256: f.sha256, action: 'fetched', url };
    } catch (err) {
      if (err instanceof DownloadError && err.code === 'ABORTED') throw err;
      last = err;
      failures.push(`${url}: ${errorMessage(err)}`);
    }
  }
  const code = last instanceof DownloadError ? last.code : 'HTTP_ERROR';
  throw new DownloadError(code, `could not fetch ${f.path}: ${failures.join('; ')}`, f.urls.join(' '));
}
