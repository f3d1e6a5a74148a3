/**
 * The lab API's model downloads (types, the checks of a source and a file name, and the event
 * check; no zod, so the preload and the renderer can use them): `startDownload` fetches a GGUF
 * file from an `hf:<owner>/<repo>/<file.gguf>` reference or an http(s) URL into the host's models
 * folder, as `flowlab models download` does (models/download.ts: a `.part` file resumed with an
 * HTTP Range request, the size and sha256 checked, then renamed into place), in the background,
 * its progress pushed as `DownloadEvent`s, a part of `LabEvent`. The host (host/downloads.ts)
 * refuses hosts on this machine or a private network unless it was started to allow them. The
 * payloads' zod schemas are in contract.ts.
 */

/** `startDownload`'s payload. */
export interface StartDownloadRequest {
  /** `hf:<owner>/<repo>/<path/file.gguf>` (optionally `hf:<owner>/<repo>@<revision>/<path>`) or an `http://` / `https://` URL. */
  source: string;
  /** Expected sha256 (64 hex digits); a file that differs is removed and the download fails. */
  sha256?: string;
  /** Expected size in bytes (else the server's length, when it sends one). */
  sizeBytes?: number;
  /** The file name in the models folder (a bare `*.gguf` name, see {@link downloadFileNameProblem}). Default: the source's last path segment. */
  fileName?: string;
}

/** `cancelDownload`'s payload. */
export interface CancelDownloadPayload {
  downloadId: string;
}

/** Why a download failed, as the host classifies it (models/download.ts `DownloadErrorCode`, less the ones refused before it starts). */
export type DownloadFailure = 'HTTP_ERROR' | 'SIZE_MISMATCH' | 'SHA256_MISMATCH' | 'FORBIDDEN' | 'INTERNAL';
const FAILURES: readonly string[] = ['HTTP_ERROR', 'SIZE_MISMATCH', 'SHA256_MISMATCH', 'FORBIDDEN', 'INTERNAL'];

/**
 * A download's progress, ordered per download. `download` opens (`running`) and closes
 * (`completed` with the file's `path` and `sha256`; `cancelled`, the part file kept so the same
 * download resumes; `failed` with `message` in the user's words and its `code`) each download;
 * `downloadProgress` carries the bytes on disk so far and the total when known (sent at most
 * about every 100 ms). Bytes count the whole file, a resumed part included.
 */
export type DownloadEvent =
  | {
      type: 'download'; downloadId: string; fileName: string; status: 'running' | 'completed' | 'cancelled' | 'failed';
      bytes: number; total?: number; path?: string; sha256?: string; message?: string; code?: DownloadFailure;
    }
  | { type: 'downloadProgress'; downloadId: string; bytes: number; total?: number };

/** The download methods of `FlowlabApi` (answered by the host: it writes into its models folder). */
export interface DownloadApiAdditions {
  /**
   * Checks the request and starts the download in the background; resolves with its id once it
   * runs (events may arrive before the answer). Errors: `BAD_REQUEST` naming `source` (not an
   * `hf:` reference or an http(s) URL) or `fileName` (not a bare `.gguf` name, or a file of that
   * name already in the models folder), `FORBIDDEN` naming `source` (a host on this machine or a
   * private network), `BUSY` (the same file is downloading).
   */
  startDownload(payload: StartDownloadRequest): Promise<{ downloadId: string }>;
  /** Stops a download (its part file stays, so the same request resumes); resolves once it stopped. `cancelled: false` when it does not run here. */
  cancelDownload(payload: CancelDownloadPayload): Promise<{ cancelled: boolean }>;
}

/** What a host implements of them (optional: hosts without them answer UNAVAILABLE). */
export interface DownloadHost {
  startDownload?(payload: StartDownloadRequest): Awaitable<{ downloadId: string }>;
  cancelDownload?(payload: CancelDownloadPayload): Awaitable<{ cancelled: boolean }>;
}
type Awaitable<T> = T | Promise<T>;

/** The longest file name a download may take (most file systems allow 255 bytes). */
export const MAX_DOWNLOAD_FILE_NAME = 200;

/**
 * Why `name` cannot be a downloaded model's file name, or undefined when it can: a bare name
 * (no `/`, `\`, NUL or other control character, not starting with `.`), ending in `.gguf`
 * (case-insensitive), 6..200 characters. Used by the payload schema and by the host for a name
 * taken from the URL.
 */
export function downloadFileNameProblem(name: string): string | undefined {
  if (/[\\/]/.test(name)) return 'must be a file name, not a path (no / or \\)';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'must not contain control characters';
  if (name.startsWith('.')) return 'must not start with "."';
  if (!/\.gguf$/i.test(name) || name.length < 6) return 'must be a .gguf file name';
  if (name.length > MAX_DOWNLOAD_FILE_NAME) return `must be at most ${MAX_DOWNLOAD_FILE_NAME} characters`;
  return undefined;
}

/**
 * Why `source` cannot be downloaded from, or undefined when it can (the form only; the host
 * also checks where it points): an `hf:<owner>/<repo>/<path>` reference (optionally with
 * `@<revision>` after the repo) or an `http://` / `https://` URL with a host; no whitespace.
 */
export function downloadSourceProblem(source: string): string | undefined {
  if (/\s/.test(source)) return 'must not contain spaces';
  if (/^hf:/i.test(source)) return /^hf:[^/@]+\/[^/@]+(?:@[^/]+)?\/.+$/.test(source) ? undefined : 'must look like hf:<owner>/<repo>/<file.gguf>';
  if (!/^https?:\/\//i.test(source)) return 'must be an hf:<owner>/<repo>/<file.gguf> reference or an http(s) URL';
  try {
    return new URL(source).hostname ? undefined : 'must name a host';
  } catch {
    return 'must be a valid URL';
  }
}

const STATUSES: readonly string[] = ['running', 'completed', 'cancelled', 'failed'];

/** Whether `value` is a well-formed `DownloadEvent` (field by field, without zod). */
export function isDownloadEvent(value: unknown): value is DownloadEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const str = (v: unknown, max = 400) => typeof v === 'string' && v.length > 0 && v.length <= max;
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  const opt = (v: unknown, ok: (x: unknown) => boolean) => v === undefined || ok(v);
  if (!str(e['downloadId']) || !count(e['bytes']) || !opt(e['total'], count)) return false;
  if (e['type'] === 'downloadProgress') return true;
  if (e['type'] !== 'download') return false;
  return (
    str(e['fileName']) && STATUSES.includes(e['status'] as string) &&
    opt(e['path'], (v) => str(v, 4096)) && opt(e['sha256'], (v) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)) &&
    opt(e['message'], (v) => typeof v === 'string' && v.length <= 2000) && opt(e['code'], (v) => FAILURES.includes(v as string))
  );
}
