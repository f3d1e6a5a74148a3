/**
 * The lab's model downloads (`startDownload`, `cancelDownload`, core/api/downloads.ts) over the
 * CLI's downloader (models/download.ts `downloadModel`: a `.part` file, an HTTP Range resume,
 * the size and sha256 checks, the rename into place), run in the background with their progress
 * pushed as `DownloadEvent`s.
 *
 * Confinement: the file is written only into the models folder, under a bare `*.gguf` name
 * (`downloadFileNameProblem`), never over an existing file. Sources are `hf:` references and
 * http(s) URLs only. So that a page of the browser host cannot use the lab as a proxy into the
 * local network (server-side request forgery), every URL fetched, each redirect's target
 * included, must name a host whose every resolved address is public: loopback, private
 * (RFC 1918, RFC 4193), link-local, carrier-grade NAT (RFC 6598), unspecified and multicast
 * addresses are refused with FORBIDDEN, unless the host was created with `allowPrivateHosts`
 * (`flowlab serve --allow-private-downloads`; tests). The check resolves names before the
 * request; a name whose DNS answer changes between the check and the connection is not caught.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { existsSync } from 'node:fs';
import { ApiError, downloadFileNameProblem, type DownloadEvent, type DownloadFailure, type LabEvent, type StartDownloadRequest } from '../core/api/index.ts';
import { errorMessage } from '../core/errors.ts';
import { DownloadError, downloadModel, modelUrl } from '../models/download.ts';
import { jobEmitter, JobOwner, MAX_EVENT_TEXT, RunningJobs } from './jobs.ts';

/** Options of {@link ModelDownloads}. */
export interface ModelDownloadsOptions {
  /** The models folder, the only place files are written. */
  modelDir: string;
  emit: (event: LabEvent) => void;
  /** Allow hosts on this machine or a private network (default false: FORBIDDEN). */
  allowPrivateHosts?: boolean;
  /** @internal tests: the fetch under the guard (default the global fetch). */
  fetch?: typeof fetch;
  /** @internal tests: the resolver (default `dns.lookup` with `all`). */
  resolve?: (host: string) => Promise<string[]>;
  /** The lab's list of running jobs, where downloads are listed and announced as `download` jobs (bytes done of total; default: one of its own over `emit`). */
  running?: RunningJobs;
}

/** Redirects followed per request, each one checked (browsers allow 20; Hugging Face needs 1 or 2). */
export const MAX_REDIRECTS = 5;
/** The closing message of a cancelled download. */
const CANCELLED_DOWNLOAD = 'Cancelled. Start the same download again to resume where it stopped.';
/** Least milliseconds between two `downloadProgress` events of one download. */
export const PROGRESS_EVERY_MS = 100;

const v4 = (ip: string) => ip.split('.').map(Number) as [number, number, number, number];

/**
 * Whether `ip` (an IPv4 or IPv6 literal) is loopback (127/8, ::1), private (10/8, 172.16/12,
 * 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), carrier-grade NAT (100.64/10),
 * unspecified (0/8, ::), multicast or reserved (224/3, ff00::/8), or an IPv4-mapped IPv6 form of
 * one of them (RFC 6890's special-purpose registries). Not an IP literal: true (refused).
 */
export function isPrivateAddress(ip: string): boolean {
  const kind = isIP(ip);
  if (kind === 4) {
    const [a, b] = v4(ip);
    return a === 0 || a === 10 || a === 127 || (a === 169 && b === 254) || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168) || (a === 100 && b >= 64 && b <= 127) || a >= 224;
  }
  if (kind !== 6) return true;
  const low = ip.toLowerCase();
  const mapped = /^(?:0*:)*:?(?:0*:)?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(low) ?? /^::(\d+\.\d+\.\d+\.\d+)$/.exec(low);
  if (mapped) return isPrivateAddress(mapped[1]!);
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(low);
  if (hex) {
    const n = (parseInt(hex[1]!, 16) << 16) | parseInt(hex[2]!, 16);
    return isPrivateAddress(`${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`);
  }
  if (low === '::' || low === '::1' || /^0*(:0*)*:0*1$/.test(low) || /^0*(:0*)*$/.test(low)) return true;
  const first = parseInt(low.split(':')[0] || '0', 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/**
 * The downloads running in one lab, each kept with the file name it writes (see the module
 * comment); `cancel` stops one and leaves its part file for a resume (JobOwner).
 */
export class ModelDownloads extends JobOwner<string> {
  private next = 1;

  constructor(private readonly o: ModelDownloadsOptions) {
    super(o.running ?? new RunningJobs(o.emit));
  }

  /**
   * Refuses `url` unless it is http(s) and (without `allowPrivateHosts`) every address its host
   * resolves to is public. Errors: ApiError FORBIDDEN (method `startDownload`, field `source`)
   * naming the host and address; BAD_REQUEST for another scheme or a name that does not resolve.
   */
  async checkUrl(url: string): Promise<void> {
    const M = 'startDownload';
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new ApiError('BAD_REQUEST', `${M}: ${u.protocol} links are not downloaded; use http(s) or hf:`, M, 'source');
    if (this.o.allowPrivateHosts) return;
    const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
    let addresses: string[];
    try {
      addresses = isIP(host) ? [host] : await (this.o.resolve ?? ((h: string) => lookup(h, { all: true, verbatim: true }).then((r) => r.map((a) => a.address))))(host);
    } catch (err) {
      throw new ApiError('BAD_REQUEST', `${M}: the host ${host} cannot be found (${errorMessage(err)})`, M, 'source', { cause: err });
    }
    const bad = addresses.find(isPrivateAddress);
    if (bad !== undefined || addresses.length === 0) {
      throw new ApiError('FORBIDDEN', `${M}: ${host}${bad !== undefined && bad !== host ? ` (${bad})` : ''} is on this machine or a private network; the lab downloads only from public hosts (start it with \`flowlab serve --allow-private-downloads\` to allow them)`, M, 'source');
    }
  }

  /** A fetch that follows redirects itself, checking each target with {@link checkUrl}. */
  private readonly guardedFetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const doFetch = this.o.fetch ?? fetch;
    let url = String(input instanceof Request ? input.url : input);
    for (let hop = 0; ; hop++) {
      await this.checkUrl(url);
      const res = await doFetch(url, { ...init, redirect: 'manual' });
      const location = res.headers.get('location');
      if (res.status < 300 || res.status > 399 || !location) return res;
      await res.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
      url = new URL(location, url).href;
    }
  }) as typeof fetch;

  /**
   * Starts a download (see `startDownload` in core/api/downloads.ts for the errors); resolves
   * with its id once the source was checked and the `running` event sent.
   */
  async start(req: StartDownloadRequest): Promise<{ downloadId: string }> {
    const M = 'startDownload';
    let url: string;
    try {
      url = modelUrl(req.source);
    } catch (err) {
      throw new ApiError('BAD_REQUEST', `${M}: ${errorMessage(err)}`, M, 'source', { cause: err });
    }
    const fileName = req.fileName ?? decodeURIComponent(new URL(url).pathname.split('/').pop() ?? '');
    const problem = downloadFileNameProblem(fileName);
    if (problem) throw new ApiError('BAD_REQUEST', `${M}: the file name ${JSON.stringify(fileName)} taken from the source ${problem}; give a file name`, M, 'fileName');
    const dir = path.resolve(this.o.modelDir);
    const file = path.join(dir, fileName);
    if (path.dirname(file) !== dir) throw new ApiError('BAD_REQUEST', `${M}: the file name must stay in the models folder`, M, 'fileName');
    if (this.jobs.metas().includes(fileName)) throw new ApiError('BUSY', `${M}: ${fileName} is downloading already`, M, 'fileName');
    if (existsSync(file)) throw new ApiError('BAD_REQUEST', `${M}: ${fileName} is in the models folder already; remove it or give another file name`, M, 'fileName');
    await this.checkUrl(url);

    const downloadId = `dl-${Date.now().toString(36)}-${this.next++}`;
    const send = jobEmitter<DownloadEvent>(this.o.emit);
    let bytes = 0;
    let total: number | undefined = req.sizeBytes;
    let sentAt = 0;
    const totalOf = () => (total !== undefined ? { total } : {});
    send({ type: 'download', downloadId, fileName, status: 'running', bytes, ...totalOf() });
    this.jobs.start(downloadId, fileName, (signal, job) => downloadModel(url, {
      dir, fileName, signal, fetch: this.guardedFetch,
      ...(req.sha256 && { sha256: req.sha256 }), ...(req.sizeBytes !== undefined && { size: req.sizeBytes }),
      onProgress: (b, t) => {
        bytes = b;
        total = t;
        job.progress({ done: b, ...totalOf() });
        const now = Date.now();
        if (now - sentAt < PROGRESS_EVERY_MS && b !== t) return;
        sentAt = now;
        send({ type: 'downloadProgress', downloadId, bytes, ...totalOf() });
      },
    }).then(
      (r) => {
        job.close('completed', undefined, { done: r.bytes, total: r.bytes });
        send({ type: 'download', downloadId, fileName, status: 'completed', bytes: r.bytes, total: r.bytes, path: r.file, sha256: r.sha256 });
      },
      (err: unknown) => {
        if (signal.aborted) {
          job.close('cancelled', CANCELLED_DOWNLOAD);
          return send({ type: 'download', downloadId, fileName, status: 'cancelled', bytes, ...totalOf(), message: CANCELLED_DOWNLOAD });
        }
        const { code, message } = failureOf(err);
        job.close('failed', message);
        send({ type: 'download', downloadId, fileName, status: 'failed', bytes, ...totalOf(), code, message: message.slice(0, MAX_EVENT_TEXT) });
      },
    ), undefined, { kind: 'download', progress: { done: 0, ...totalOf(), summary: fileName } });
    return { downloadId };
  }
}

/** A failed download in the user's words, with its class (the downloader's detail kept after the sentence). */
export function failureOf(err: unknown): { code: DownloadFailure; message: string } {
  const detail = errorMessage(err);
  const forbidden = /is on this machine or a private network/.test(detail);
  if (err instanceof DownloadError) {
    switch (err.code) {
      case 'SHA256_MISMATCH':
        return { code: 'SHA256_MISMATCH', message: `The downloaded file does not match the sha256 you gave, so it was removed. Check the sha256 and the source. (${detail})` };
      case 'SIZE_MISMATCH':
        return { code: 'SIZE_MISMATCH', message: `The download ended with the wrong size, so it was removed. Try again. (${detail})` };
      case 'HTTP_ERROR':
        if (forbidden) return { code: 'FORBIDDEN', message: `The source redirected to a host on this machine or a private network, which the lab does not download from. (${detail})` };
        return { code: 'HTTP_ERROR', message: `The file could not be fetched: the server refused it or the connection broke. Check the source; starting it again resumes a broken download. (${detail})` };
      default:
        break;
    }
  }
  return { code: 'INTERNAL', message: `The download failed: ${detail}` };
}
