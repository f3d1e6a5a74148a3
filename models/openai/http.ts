/**
 * One HTTP exchange with an OpenAI-compatible server: a JSON POST with a timeout, the caller's
 * abort signal, the API key read from the environment, and the port's typed errors. Retries are
 * the caller's (`OpenAiProvider`), which may move a retried call to another endpoint; this file
 * says which failures are worth retrying ({@link RetryableError}) and how long to wait.
 */
import { ModelError } from '../../core/model/index.ts';
import type { EndpointSpec } from '../../core/model/index.ts';

/** A failure another attempt may cure: 429, 5xx, a refused or reset connection, a timeout. */
export class RetryableError extends Error {
  override readonly name = 'RetryableError';
  constructor(
    message: string,
    /** The server's `Retry-After`, in ms, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** What `postJson` hands back: the parsed body and the status. */
export interface JsonReply {
  status: number;
  body: unknown;
}

/** A minimal `fetch` (the global one by default; tests may pass their own). */
export type FetchLike = (url: string, init: { method: string; headers: Record<string, string>; body: string; signal: AbortSignal }) => Promise<Response>;

/**
 * POSTs `body` as JSON to `<spec.baseUrl><route>`.
 *
 * The key: `Authorization: Bearer $<spec.keyEnv>` when the spec names a variable (it must be set
 * and non-empty); it is never put in an error message.
 *
 * @throws ModelError `ABORTED` (the caller's `signal`), `MODEL_NOT_FOUND` (404),
 *   `GENERATION_FAILED` (other 4xx, a body that is not JSON, a key variable unset), or
 *   {@link RetryableError} (429, 5xx, connection failure, `spec.timeoutMs` passed).
 */
export async function postJson(spec: EndpointSpec, route: string, body: unknown, ref: string, signal: AbortSignal | undefined, fetchImpl: FetchLike, env: NodeJS.ProcessEnv = process.env): Promise<JsonReply> {
  const url = `${spec.baseUrl}${route}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (spec.keyEnv !== undefined) {
    const key = env[spec.keyEnv];
    if (!key) throw new ModelError('GENERATION_FAILED', `endpoint ${spec.baseUrl} (ref "${ref}") needs an API key in $${spec.keyEnv}, which is not set`, ref);
    headers['authorization'] = `Bearer ${key}`;
  }
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(body), signal: combined });
  } catch (err) {
    throw transportError(err, spec, ref, signal, timeout);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw transportError(err, spec, ref, signal, timeout);
  }
  if (res.status === 429 || res.status >= 500) {
    throw new RetryableError(`${url} answered ${res.status}: ${clip(serverMessage(text))}`, retryAfterMs(res.headers.get('retry-after')));
  }
  if (res.status === 404) {
    throw new ModelError('MODEL_NOT_FOUND', `${url} answered 404 for model "${spec.model}" (ref "${ref}"): ${clip(serverMessage(text))}`, ref);
  }
  if (res.status === 401 || res.status === 403) {
    const how = spec.keyEnv ? `check the key in $${spec.keyEnv}` : 'add &key=<ENV> to the endpoint reference, naming the variable that holds the key';
    throw new ModelError('GENERATION_FAILED', `${url} refused the request (${res.status}): ${how}`, ref);
  }
  if (res.status >= 400) {
    throw new ModelError('GENERATION_FAILED', `${url} answered ${res.status} for model "${spec.model}" (ref "${ref}"): ${clip(serverMessage(text))}`, ref);
  }
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    throw new ModelError('GENERATION_FAILED', `${url} answered ${res.status} with a body that is not JSON: ${clip(text)}`, ref);
  }
}

/** The caller's abort as `ABORTED`; a timeout or a network failure as retryable. */
function transportError(err: unknown, spec: EndpointSpec, ref: string, signal: AbortSignal | undefined, timeout: AbortSignal): Error {
  if (signal?.aborted) return new ModelError('ABORTED', `call to ${spec.baseUrl} (ref "${ref}") was aborted`, ref, { cause: signal.reason });
  if (timeout.aborted) return new RetryableError(`${spec.baseUrl} did not answer within ${spec.timeoutMs / 1000} s`);
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  return new RetryableError(`cannot reach ${spec.baseUrl}: ${cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err))}`);
}

/**
 * Wait before retry `attempt` (0-based): the server's `Retry-After` when given (at most 30 s),
 * else exponential backoff 250 ms · 2^attempt (at most 8 s) with full jitter from `random`
 * (AWS Architecture Blog, "Exponential Backoff and Jitter", 2015: the "full jitter" variant).
 */
export function backoffMs(attempt: number, retryAfter?: number, random: () => number = Math.random): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, 30_000);
  const cap = Math.min(8_000, 250 * 2 ** attempt);
  return Math.round(cap / 2 + (cap / 2) * random());
}

/** Sleeps `ms`, rejecting with `ABORTED` if `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined, ref: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new ModelError('ABORTED', `call (ref "${ref}") was aborted`, ref, { cause: signal.reason }));
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ModelError('ABORTED', `call (ref "${ref}") was aborted while waiting to retry`, ref, { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** `Retry-After` in ms (seconds or an HTTP date), or undefined. */
function retryAfterMs(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** The `error.message` of an OpenAI-style error body, or the body itself. */
function serverMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string };
    const e = body.error;
    if (typeof e === 'string') return e;
    if (e && typeof e.message === 'string') return e.message;
  } catch {
    /* not JSON: the text as is */
  }
  return text;
}

const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 297)}...` : s);
