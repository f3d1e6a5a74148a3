/**
 * One HTTP exchange with an OpenAI-compatible server: a JSON POST with a timeout, the caller's
 * abort signal, the API key read from the environment or the OS keychain, and the port's typed errors. Retries are
 * the caller's (`OpenAiProvider`), which may move a retried call to another endpoint; this file
 * says which failures are worth retrying ({@link RetryableError}) and how long to wait.
 */
import { ModelError } from '../../core/model/index.ts';
import type { EndpointSpec } from '../../core/model/index.ts';
import { KeychainError, keychainSecret } from '../keychain.ts';
import { errorMessage } from '../../core/errors.ts';

/** A failure another attempt may cure: 429, 5xx, a refused or reset connection, a timeout. */
export class RetryableError extends Error {
  override readonly name = 'RetryableError';
  constructor(
    message: string,
    /** The server's `Retry-After`, in ms, when it sent one. */
    readonly retryAfterMs?: number,
    /** The HTTP status (429, 5xx); undefined when the server was not reached or did not answer in time. */
    readonly status?: number,
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

/** Where the API key of an endpoint comes from, for error messages (never the key itself). */
export function keySource(spec: EndpointSpec): string | undefined {
  if (spec.keyEnv !== undefined) return `$${spec.keyEnv}`;
  if (spec.keychain !== undefined) return `the keychain entry ${spec.keychain.service}/${spec.keychain.account}`;
  return undefined;
}

/**
 * The endpoint's API key: the environment variable it names (must be set and non-empty), or its
 * OS keychain entry (`keychainSecret`, read once per process); undefined when it names neither.
 * @throws ModelError `GENERATION_FAILED` naming the variable, or the keychain's error (the tool,
 *   the entry and the command that stores it).
 */
export async function apiKey(spec: EndpointSpec, ref: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  if (spec.keyEnv !== undefined) {
    const key = env[spec.keyEnv];
    if (!key) throw new ModelError('GENERATION_FAILED', `endpoint ${spec.baseUrl} (ref "${ref}") needs an API key in $${spec.keyEnv}, which is not set`, ref);
    return key;
  }
  if (spec.keychain === undefined) return undefined;
  try {
    return await keychainSecret(spec.keychain, { env });
  } catch (err) {
    const why = err instanceof KeychainError ? err.message : String(err);
    throw new ModelError('GENERATION_FAILED', `endpoint ${spec.baseUrl} (ref "${ref}"): ${why}`, ref, { cause: err });
  }
}

/** An answered request whose status was 2xx, with what its reading needs to type a failure. */
export interface SentRequest {
  url: string;
  res: Response;
  /** The request's own timeout (`spec.timeoutMs`), which also bounds reading the body. */
  timeout: AbortSignal;
}

/**
 * POSTs `body` as JSON to `<spec.baseUrl><route>` with the key as `Authorization: Bearer` (see
 * {@link apiKey}; never put in an error message) and answers the 2xx response unread. `accept`
 * is the media type asked for (`text/event-stream` for a stream).
 *
 * @throws ModelError `ABORTED` (the caller's `signal`), `MODEL_NOT_FOUND` (404),
 *   `GENERATION_FAILED` (other 4xx, a key that cannot be read), or {@link RetryableError} (429,
 *   5xx, connection failure, `spec.timeoutMs` passed).
 */
export async function send(spec: EndpointSpec, route: string, body: unknown, ref: string, signal: AbortSignal | undefined, fetchImpl: FetchLike, env: NodeJS.ProcessEnv = process.env, accept = 'application/json'): Promise<SentRequest> {
  const url = `${spec.baseUrl}${route}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept };
  const key = await apiKey(spec, ref, env);
  if (key !== undefined) headers['authorization'] = `Bearer ${key}`;
  const timeout = AbortSignal.timeout(spec.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let res: Response;
  try {
    res = await fetchImpl(url, { method: 'POST', headers, body: JSON.stringify(body), signal: combined });
  } catch (err) {
    throw transportError(err, spec, ref, signal, timeout);
  }
  if (res.status < 400) return { url, res, timeout };
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw transportError(err, spec, ref, signal, timeout);
  }
  if (res.status === 429 || res.status >= 500) {
    throw new RetryableError(`${url} answered ${res.status}: ${clip(serverMessage(text))}`, retryAfterMs(res.headers.get('retry-after')), res.status);
  }
  if (res.status === 404) {
    throw new ModelError('MODEL_NOT_FOUND', `${url} answered 404 for model "${spec.model}" (ref "${ref}"): ${clip(serverMessage(text))}`, ref);
  }
  if (res.status === 401 || res.status === 403) {
    const source = keySource(spec);
    const how = source ? `check the key in ${source}` : 'add &key=<ENV> (or &keychain=<service>/<account>) to the endpoint reference, naming where the key is';
    throw new ModelError('GENERATION_FAILED', `${url} refused the request (${res.status}): ${how}`, ref);
  }
  throw new ModelError('GENERATION_FAILED', `${url} answered ${res.status} for model "${spec.model}" (ref "${ref}"): ${clip(serverMessage(text))}`, ref);
}

/**
 * POSTs `body` as JSON (see {@link send}) and parses the JSON reply.
 *
 * @throws what `send` throws, and ModelError `GENERATION_FAILED` for a body that is not JSON.
 */
export async function postJson(spec: EndpointSpec, route: string, body: unknown, ref: string, signal: AbortSignal | undefined, fetchImpl: FetchLike, env: NodeJS.ProcessEnv = process.env): Promise<JsonReply> {
  const { url, res, timeout } = await send(spec, route, body, ref, signal, fetchImpl, env);
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    throw transportError(err, spec, ref, signal, timeout);
  }
  try {
    return { status: res.status, body: JSON.parse(text) };
  } catch {
    throw new ModelError('GENERATION_FAILED', `${url} answered ${res.status} with a body that is not JSON: ${clip(text)}`, ref);
  }
}

/** The caller's abort as `ABORTED`; a timeout or a network failure as retryable. */
export function transportError(err: unknown, spec: EndpointSpec, ref: string, signal: AbortSignal | undefined, timeout: AbortSignal): Error {
  if (signal?.aborted) return new ModelError('ABORTED', `call to ${spec.baseUrl} (ref "${ref}") was aborted`, ref, { cause: signal.reason });
  if (timeout.aborted) return new RetryableError(`${spec.baseUrl} did not answer within ${spec.timeoutMs / 1000} s`);
  const cause = (err as { cause?: { code?: string; message?: string } } | null)?.cause;
  return new RetryableError(`cannot reach ${spec.baseUrl}: ${cause?.code ?? cause?.message ?? (errorMessage(err))}`);
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
export function serverMessage(text: string): string {
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

export const clip = (s: string): string => (s.length > 300 ? `${s.slice(0, 297)}...` : s);
