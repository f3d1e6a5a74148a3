/**
 * The renderer's transport to the lab, whichever host serves the page:
 * - in the desktop app, `window.flowlab` (the Electron preload: IPC calls, and `onEvent` for
 *   pushed events);
 * - served by `flowlab serve` (the page URL carries `?token=...`), HTTP `POST /api/<method>` with
 *   the token in the `x-flowlab-token` header, and Server-Sent Events from `/api/events`.
 * The token is read from the page URL once and kept in memory only (never stored).
 */
import { ApiError, createRemoteApi, errorMessage, isLabEvent, TOKEN_HEADER, type FlowlabClient, type Invoke, type LabEvent, type Subscribe } from '../core/api/client.ts';
import { CONNECTED, createReconnectingSubscribe, deliverMessage, type ConnectionStatus } from './connection.ts';

/**
 * The renderer's API client. Calls go to `host` (by default: `window.flowlab` in Electron, else
 * the HTTP host when the page URL has `?token=`); a failure is rethrown as an `ApiError` with its
 * code rebuilt. With no host (the page opened some other way) every call rejects with
 * `UNAVAILABLE`, saying how to open the lab.
 */
export function createApiClient(host: FlowlabClient | undefined = defaultHost()): FlowlabClient {
  return createRemoteApi(async (method, payload) => {
    if (!host) {
      throw new ApiError(
        'UNAVAILABLE',
        `${method}: the Flowlab API is not available here; open this page in the Flowlab desktop app, or through the URL that \`flowlab serve\` prints`,
        method,
      );
    }
    try {
      return await (host[method] as (payload: unknown) => Promise<unknown>)(payload);
    } catch (err) {
      throw ApiError.fromWire(err);
    }
  });
}

/**
 * Subscribes to the lab's pushed events (`LabEvent`): through the preload's `onEvent` in
 * Electron, or one shared `EventSource('/api/events?token=...')` when served over HTTP (opened
 * with the first listener, closed with the last; it reconnects with backoff, connection.ts). Malformed events are
 * dropped. Where neither exists, nothing is ever delivered. Returns the unsubscribe function.
 */
export const subscribe: Subscribe = (listener) => defaultSubscribe()(listener);

/** Options of {@link createHttpInvoke}. */
export interface HttpOptions {
  /** Origin of the server, e.g. `http://127.0.0.1:5177`. Default: the page's own (relative URLs). */
  baseUrl?: string;
  /** Default: the global `fetch`. */
  fetch?: typeof fetch;
}

/**
 * The HTTP transport of `flowlab serve`: `POST <base>/api/<method>` with the JSON payload (no body
 * when there is none) and the token header. Resolves with `result` of `{ok: true, result}`;
 * rejects with the ApiError of `{ok: false, error}`, or `UNAVAILABLE` when the server cannot be
 * reached or answers something that is not the API's JSON.
 */
export function createHttpInvoke(token: string, options: HttpOptions = {}): Invoke {
  const base = options.baseUrl ?? '';
  return async (method, payload) => {
    const doFetch = options.fetch ?? fetch;
    let res: Response;
    try {
      res = await doFetch(`${base}/api/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [TOKEN_HEADER]: token },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      });
    } catch (err) {
      throw new ApiError('UNAVAILABLE', `${method}: the Flowlab server cannot be reached (${errorMessage(err)}); is \`flowlab serve\` still running?`, method);
    }
    let body: unknown;
    try {
      body = await res.json();
    } catch {
      throw new ApiError('UNAVAILABLE', `${method}: the server answered HTTP ${res.status} without the API's JSON`, method);
    }
    const answer = body as { ok?: unknown; result?: unknown; error?: unknown };
    if (answer && answer.ok === true) return answer.result;
    const error = ApiError.fromData(answer?.error);
    if (res.status === 401) throw new ApiError('FORBIDDEN', `${method}: ${error.message}`, method);
    throw error;
  };
}

/** The part of `EventSource` that {@link createEventSourceSubscribe} uses. */
export interface EventSourceLike {
  onmessage: ((event: MessageEvent) => void) | null;
  /** Connection state, when the source reports it (EventSource does). */
  onopen?: ((event: Event) => void) | null;
  onerror?: ((event: Event) => void) | null;
  close(): void;
}

/**
 * A `Subscribe` over Server-Sent Events at `url`: one connection shared by all listeners, opened
 * with the first and closed with the last. `open` makes the connection (default `new EventSource(url)`).
 */
export function createEventSourceSubscribe(url: string, open: (url: string) => EventSourceLike = (u) => new EventSource(u)): Subscribe {
  const listeners = new Set<(event: LabEvent) => void>();
  let source: EventSourceLike | undefined;
  return (listener) => {
    const own = (e: LabEvent) => listener(e);
    listeners.add(own);
    if (!source) {
      source = open(url);
      source.onmessage = (message) => deliverMessage(message, listeners);
    }
    return () => {
      listeners.delete(own);
      if (listeners.size === 0 && source) {
        source.close();
        source = undefined;
      }
    };
  };
}

/** A `Subscribe` over the preload's `onEvent`, checking each event's shape again. */
export function createPreloadSubscribe(onEvent: Subscribe): Subscribe {
  return (listener) => onEvent((event) => {
    if (isLabEvent(event)) listener(event);
  });
}

/** The session token of a page served by `flowlab serve` (`?token=` of its URL), if any. */
export function pageToken(search: string = typeof location === 'undefined' ? '' : location.search): string | undefined {
  const token = new URLSearchParams(search).get('token');
  return token ? token : undefined;
}

let httpHost: FlowlabClient | undefined;
let sseSubscribe: Subscribe | undefined;
/** Read once, kept in memory. */
let token: string | undefined | null = null;

function sessionToken(): string | undefined {
  if (token === null) token = pageToken();
  return token;
}

function defaultHost(): FlowlabClient | undefined {
  if (typeof window === 'undefined') return undefined;
  if (window.flowlab) return window.flowlab;
  const t = sessionToken();
  if (!t) return undefined;
  httpHost ??= createRemoteApi(createHttpInvoke(t));
  return httpHost;
}

const NO_EVENTS: Subscribe = () => () => {};

const statusListeners = new Set<(status: ConnectionStatus) => void>();
let lastStatus: ConnectionStatus = CONNECTED;

/**
 * The event stream's status now (what {@link onConnectionStatus} last reported; `CONNECTED`
 * before any report), or null where this page has no event stream at all (opened outside the
 * desktop app and `flowlab serve`).
 */
export function connectionStatus(): ConnectionStatus | null {
  if (typeof window === 'undefined') return null;
  if (window.flowlab) return lastStatus; // IPC: never reports, always up
  return sessionToken() && typeof EventSource !== 'undefined' ? lastStatus : null;
}
/**
 * Follows the connection to the browser host's event stream (lost, retrying, open again; see
 * connection.ts): the one way to hear about the connection (`state !== 'open'` is "down"). In the
 * desktop app (IPC) it never reports. Returns the unsubscribe function.
 */
export function onConnectionStatus(listener: (status: ConnectionStatus) => void): () => void {
  statusListeners.add(listener);
  return () => void statusListeners.delete(listener);
}

function defaultSubscribe(): Subscribe {
  if (typeof window === 'undefined') return NO_EVENTS;
  const onEvent = window.flowlab?.onEvent;
  if (onEvent) return createPreloadSubscribe(onEvent);
  const t = sessionToken();
  if (!t || typeof EventSource === 'undefined') return NO_EVENTS;
  sseSubscribe ??= createReconnectingSubscribe(`/api/events?token=${encodeURIComponent(t)}`, {
    onStatus: (status) => {
      lastStatus = status;
      for (const l of [...statusListeners]) l(status);
    },
  });
  return sseSubscribe;
}
