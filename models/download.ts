/**
 * Model downloads into the models folder: from a URL or an `hf:<owner>/<repo>/<file>` reference
 * (Hugging Face's `resolve/main` URL), into `<dest>.part`, resumed after an interruption with an
 * HTTP Range request (RFC 9110 section 14), checked against the expected size and sha256 when
 * known, then renamed into place (a reader never sees a half file under the final name). A file
 * that fails its check is removed and the download refused.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FlowlabError, errorMessage } from '../core/errors.ts';

export type DownloadErrorCode = 'BAD_REF' | 'HTTP_ERROR' | 'SIZE_MISMATCH' | 'SHA256_MISMATCH' | 'EXISTS' | 'ABORTED';

/** A download that failed; `where` is the URL or file. */
export class DownloadError extends FlowlabError<DownloadErrorCode> {
  override readonly name = 'DownloadError';
  constructor(code: DownloadErrorCode, message: string, readonly where: string) {
    super(code, message, { file: where });
  }
}

/** Options of {@link downloadModel}. */
export interface DownloadOptions {
  /** The models folder (created when missing). */
  dir: string;
  /** The file name in `dir`. Default: the URL's last path segment. */
  fileName?: string;
  /** Expected sha256 (hex); the download is refused and removed when it differs. */
  sha256?: string;
  /** Expected size in bytes (else the server's Content-Length / Content-Range total, when sent). */
  size?: number;
  /** Replace an existing file of that name. Default: refuse (`EXISTS`). */
  overwrite?: boolean;
  /** Progress: bytes on disk so far and the total when known. */
  onProgress?: (bytes: number, total: number | undefined) => void;
  signal?: AbortSignal;
  /** @internal tests: the fetch to use. */
  fetch?: typeof fetch;
}

/** What {@link downloadModel} did. */
export interface DownloadResult {
  file: string;
  bytes: number;
  sha256: string;
  /** Bytes already on disk from an interrupted download, not fetched again. */
  resumedFrom: number;
}

/**
 * The URL of a model reference: `hf:<owner>/<repo>/<path/in/repo.gguf>` (optionally
 * `hf:<owner>/<repo>@<revision>/<path>`) -> `https://huggingface.co/<owner>/<repo>/resolve/<revision|main>/<path>`;
 * an http(s) URL as is.
 * @throws DownloadError `BAD_REF` for anything else.
 */
export function modelUrl(ref: string): string {
  const hf = /^hf:([^/@\s]+)\/([^/@\s]+)(?:@([^/\s]+))?\/(.+)$/.exec(ref);
  if (hf) return `https://huggingface.co/${hf[1]}/${hf[2]}/resolve/${encodeURIComponent(hf[3] ?? 'main')}/${hf[4]!.split('/').map(encodeURIComponent).join('/')}`;
  if (/^https?:\/\/\S+$/.test(ref)) return ref;
  throw new DownloadError('BAD_REF', `not a model reference: "${ref}" (expected hf:<owner>/<repo>/<file.gguf> or an http(s) URL)`, ref);
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/**
 * Downloads `ref` (see {@link modelUrl}) into `options.dir`. A `<file>.part` left by an earlier
 * attempt is resumed from its length (`Range: bytes=<n>-`; a server that answers 200 instead of
 * 206 sends the whole file again, which then replaces the part).
 *
 * @throws DownloadError `BAD_REF`, `EXISTS`, `HTTP_ERROR` (status, URL), `SIZE_MISMATCH` and
 *   `SHA256_MISMATCH` (the part file is removed), `ABORTED` (the part file is kept for a resume).
 */
export async function downloadModel(ref: string, options: DownloadOptions): Promise<DownloadResult> {
  const url = modelUrl(ref);
  const name = options.fileName ?? decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
  if (!name || name.includes('/') || name.includes('\\') || name === '.' || name === '..') throw new DownloadError('BAD_REF', `cannot name a file after ${url}; give a file name`, url);
  const { mkdirSync } = await import('node:fs');
  mkdirSync(options.dir, { recursive: true });
  const file = path.join(options.dir, name);
  if (existsSync(file) && !options.overwrite) throw new DownloadError('EXISTS', `${file} already exists (give --overwrite to replace it)`, file);
  const part = `${file}.part`;
  const have = existsSync(part) ? statSync(part).size : 0;
  const doFetch = options.fetch ?? fetch;
  let res: Response;
  try {
    res = await doFetch(url, { headers: have > 0 ? { Range: `bytes=${have}-` } : {}, redirect: 'follow', ...(options.signal ? { signal: options.signal } : {}) });
  } catch (err) {
    if (options.signal?.aborted) throw new DownloadError('ABORTED', `download of ${url} was aborted; run it again to resume`, url);
    throw new DownloadError('HTTP_ERROR', `cannot fetch ${url}: ${errorMessage(err)}`, url);
  }
  if (res.status === 416 && have > 0) {
    // The part already holds everything the server has: check it as it is.
  } else if (res.status !== 200 && res.status !== 206) {
    throw new DownloadError('HTTP_ERROR', `${url} answered HTTP ${res.status} ${res.statusText}`, url);
  }
  const resumed = res.status === 206 ? have : res.status === 416 ? have : 0;
  const range = /\/(\d+)$/.exec(res.headers.get('content-range') ?? '');
  const length = Number(res.headers.get('content-length') ?? NaN);
  const total = options.size ?? (range ? Number(range[1]) : res.status === 200 && Number.isFinite(length) ? length : undefined);
  if (res.status !== 416 && res.body) {
    let bytes = resumed;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        options.onProgress?.(bytes, total);
        controller.enqueue(chunk);
      },
    });
    const out = createWriteStream(part, { flags: resumed > 0 ? 'a' : 'w' });
    try {
      await pipeline(Readable.fromWeb(res.body.pipeThrough(counter) as import('node:stream/web').ReadableStream), out);
    } catch (err) {
      // The broken pipeline destroys the file stream, but writes in flight still land: wait for its
      // close, so the .part holds what arrived (the next run resumes from its size) before we answer.
      if (!out.closed) await new Promise<void>((resolve) => out.once('close', () => resolve()));
      if (options.signal?.aborted) throw new DownloadError('ABORTED', `download of ${url} was aborted at ${bytes} bytes; run it again to resume`, url);
      throw new DownloadError('HTTP_ERROR', `download of ${url} broke off at ${bytes} bytes (${errorMessage(err)}); run it again to resume`, url);
    }
  }
  const size = statSync(part).size;
  if (total !== undefined && size !== total) {
    rmSync(part, { force: true });
    throw new DownloadError('SIZE_MISMATCH', `${url}: got ${size} bytes, expected ${total}; the download was removed`, url);
  }
  const sha256 = await sha256Of(part);
  if (options.sha256 && sha256 !== options.sha256.toLowerCase()) {
    rmSync(part, { force: true });
    throw new DownloadError('SHA256_MISMATCH', `${url}: sha256 ${sha256}, expected ${options.sha256.toLowerCase()}; the download was removed`, url);
  }
  renameSync(part, file);
  return { file, bytes: size, sha256, resumedFrom: resumed };
}
