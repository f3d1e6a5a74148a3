/**
 * The page's connection to `flowlab serve`'s event stream, kept up by the page itself: when the
 * stream drops, the `EventSource` is closed (so the browser does not retry every `retry:` 2 s,
 * logging a refused connection each time) and opened again after a growing wait — 1 s, 2 s,
 * 4 s ... up to 30 s (exponential backoff, as TCP backs off its retransmission timer: RFC 6298
 * §5, step 5.5), reset once a connection opens. Each state change is reported (`onStatus`), so the lab can show a
 * banner and disable what needs the server; a reconnect is reported as `open` again, after
 * which the lab refetches what it shows (the server may have changed meanwhile).
 */
import { isLabEvent, type LabEvent, type Subscribe } from '../core/api/client.ts';

/** Where the page stands with the server. */
export interface ConnectionStatus {
  /** `open`: events flow; `lost`: the stream dropped and a retry is waiting; `connecting`: a retry is under way. */
  state: 'open' | 'lost' | 'connecting';
  /** Retries since the last open connection. */
  attempt: number;
  /** Wait before the next retry, ms (state `lost`). */
  retryInMs: number | null;
  /** Since when the connection has been down, epoch ms. */
  downSince: number | null;
}

/** The status of a page that has not lost its connection. */
export const CONNECTED: ConnectionStatus = { state: 'open', attempt: 0, retryInMs: null, downSince: null };

/** First retry wait, ms. */
export const RETRY_FIRST_MS = 1000;
/** Longest retry wait, ms. */
export const RETRY_MAX_MS = 30_000;

/** The wait before retry number `attempt` (1-based): 1 s, 2 s, 4 s, ... capped at 30 s. */
export function retryDelay(attempt: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.max(0, attempt - 1));
}

/** Parses one SSE message as a `LabEvent` and hands it to every listener; a malformed one is dropped. */
export function deliverMessage(message: MessageEvent, listeners: ReadonlySet<(event: LabEvent) => void>): void {
  let event: unknown;
  try {
    event = JSON.parse(String(message.data));
  } catch {
    return;
  }
  if (!isLabEvent(event)) return;
  for (const l of [...listeners]) l(event);
}

/** The part of `EventSource` used here. */
export interface ReconnectingSource {
  onmessage: ((event: MessageEvent) => void) | null;
  onopen: ((event: Event) => void) | null;
  onerror: ((event: Event) => void) | null;
  close(): void;
}

/** Options of {@link createReconnectingSubscribe}. */
export interface ReconnectOptions {
  /** Opens the stream (default `new EventSource(url)`). */
  open?: (url: string) => ReconnectingSource;
  /** Runs `fn` after `ms`; returns a cancel function (default setTimeout). */
  delay?: (fn: () => void, ms: number) => () => void;
  /** Receives every status change. */
  onStatus?: (status: ConnectionStatus) => void;
  now?: () => number;
}

/**
 * A `Subscribe` over Server-Sent Events at `url` that reconnects with backoff: one stream
 * shared by every listener, opened with the first, closed with the last. Malformed events are dropped.
 */
export function createReconnectingSubscribe(url: string, options: ReconnectOptions = {}): Subscribe {
  const open = options.open ?? ((u: string) => new EventSource(u) as unknown as ReconnectingSource);
  const delay = options.delay ?? ((fn: () => void, ms: number) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  });
  const now = options.now ?? Date.now;
  const listeners = new Set<(event: LabEvent) => void>();
  let source: ReconnectingSource | undefined;
  let cancelRetry: (() => void) | undefined;
  let status: ConnectionStatus = CONNECTED;
  const report = (next: ConnectionStatus) => {
    status = next;
    options.onStatus?.(next);
  };

  const connect = () => {
    const s = open(url);
    source = s;
    s.onopen = () => {
      if (source !== s) return;
      if (status.state !== 'open') report(CONNECTED);
    };
    s.onmessage = (message) => {
      if (source === s) deliverMessage(message, listeners);
    };
    s.onerror = () => {
      if (source !== s) return;
      // Take over from the browser's own fixed-interval retry.
      s.close();
      source = undefined;
      const attempt = status.attempt + 1;
      const wait = retryDelay(attempt);
      report({ state: 'lost', attempt, retryInMs: wait, downSince: status.downSince ?? now() });
      cancelRetry = delay(() => {
        cancelRetry = undefined;
        if (!listeners.size) return;
        report({ ...status, state: 'connecting', retryInMs: null });
        connect();
      }, wait);
    };
  };

  return (listener) => {
    const own = (e: LabEvent) => listener(e);
    listeners.add(own);
    if (!source && !cancelRetry) connect();
    return () => {
      listeners.delete(own);
      if (listeners.size) return;
      cancelRetry?.();
      cancelRetry = undefined;
      source?.close();
      source = undefined;
    };
  };
}
