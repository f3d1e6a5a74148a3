/**
 * Keeps a workshop page's view of the session fresh. The session lives in the store (core/workshop:
 * its state, step results and the room's predictions), so the host's store watch pushes a `stored`
 * event naming `workshop` whenever anyone changes it (host/storeWatch.ts; the same event the lab's
 * lists follow, renderer/store/live.ts): the page fetches `getWorkshop` once, then again on each
 * such event. Only while the event stream is down (the server cannot be reached, or the page's
 * token has no stream: the attendee token, host/workshop.ts) does it poll, every
 * WORKSHOP_POLL_MS. One fetch at a time: one asked for while another is in flight runs once
 * after it, so answers arrive in order.
 */
import { isStoredEvent, type LabEvent, type StepResult, type WorkshopView } from '../../../core/api/client.ts';
import type { ConnectionStatus } from '../../connection.ts';
import { traceHash } from '../../lib/traceRoute.ts';

/** The poll period while the event stream is down, ms. */
export const WORKSHOP_POLL_MS = 1000;

/** What {@link followWorkshop} works with (the page's API and event stream, and the clock). */
export interface WorkshopFeedOptions {
  fetch: () => Promise<WorkshopView>;
  onView: (view: WorkshopView) => void;
  onError: (message: string) => void;
  /** The pushed events (renderer/api.ts `subscribe`); returns the unsubscribe function. */
  subscribe: (listener: (event: LabEvent) => void) => () => void;
  /** The event stream's status changes (renderer/api.ts `onConnectionStatus`); returns the unsubscribe function. */
  onConnectionStatus: (listener: (status: ConnectionStatus) => void) => () => void;
  /** The stream's status now; null where the page has no event stream at all (it polls). */
  connectionStatus: () => ConnectionStatus | null;
  /** Runs `fn` every `ms` until the returned function is called (default setInterval). */
  every?: (fn: () => void, ms: number) => () => void;
}

/** Whether a pushed event says the workshop's part of the store changed. */
export function isWorkshopChange(event: LabEvent): boolean {
  return isStoredEvent(event) && event.areas.includes('workshop');
}

/** Starts following the session (see the module comment); returns the function that stops it. */
export function followWorkshop(o: WorkshopFeedOptions): () => void {
  const every = o.every ?? ((fn: () => void, ms: number) => {
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  });
  let stopped = false;
  let inFlight = false;
  let again = false;
  const fetchNow = () => {
    if (stopped) return;
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    void o.fetch().then(
      (v) => {
        if (!stopped) o.onView(v);
      },
      (e: unknown) => {
        if (!stopped) o.onError(String((e as Error)?.message ?? e));
      },
    ).finally(() => {
      inFlight = false;
      if (again) {
        again = false;
        fetchNow();
      }
    });
  };

  let stopPolling: (() => void) | null = null;
  const follow = (status: ConnectionStatus | null) => {
    if (stopped) return;
    if (status?.state !== 'open') {
      stopPolling ??= every(fetchNow, WORKSHOP_POLL_MS);
    } else if (stopPolling) {
      // The stream is back: what changed meanwhile arrives by this one fetch, then by events.
      stopPolling();
      stopPolling = null;
      fetchNow();
    }
  };

  const unsubscribe = o.subscribe((event) => {
    if (isWorkshopChange(event)) fetchNow();
  });
  const unfollow = o.onConnectionStatus(follow);
  fetchNow();
  follow(o.connectionStatus());
  return () => {
    stopped = true;
    unsubscribe();
    unfollow();
    stopPolling?.();
    stopPolling = null;
  };
}

/** The event-stream side of {@link WorkshopFeedOptions}. */
export type WorkshopStream = Pick<WorkshopFeedOptions, 'subscribe' | 'onConnectionStatus' | 'connectionStatus'>;

/** No event stream: never subscribes, reports no status, so the page polls. */
export const NO_STREAM: WorkshopStream = { subscribe: () => () => {}, onConnectionStatus: () => () => {}, connectionStatus: () => null };

/**
 * The stream a workshop page follows: the presenter's `live` one; none for an attendee, whose token
 * the host refuses on `/api/events` (its page opened the stream anyway and retried into 403s).
 */
export function workshopStream(role: 'presenter' | 'attendee', live: WorkshopStream): WorkshopStream {
  return role === 'attendee' ? NO_STREAM : live;
}

/** A fact's value as the room sees it: an absolute file path (the presenter's disk) as its file name. */
export function publicFactValue(value: string): string {
  return value.replace(/(?:[A-Za-z]:[\\/]|\/)(?:[^\s/\\]+[\\/])+([^\s/\\]+)/g, '$1');
}

/** What the attendee's page says after the reveal: right (green), wrong (red) or no prediction. */
export function verdictOf(mine: string | undefined, truth: string): { text: string; tone: 'right' | 'wrong' | 'none' } {
  if (!mine) return { text: 'Revealed. You did not predict this step.', tone: 'none' };
  return mine === truth ? { text: 'You were right!', tone: 'right' } : { text: 'Not this time: your prediction was wrong.', tone: 'wrong' };
}

/**
 * Whether the attendee URL names this machine only (127.0.0.0/8, `localhost`, `::1`): a phone in
 * the room cannot open it, so the presenter page shows no QR code for it but says how to share
 * the workshop (`--host 0.0.0.0`). An unparsable URL counts as not loopback.
 */
export function isLoopbackUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The runs of a step's result the reveal links to, each with its experiment (the longest of the
 * result's experiment ids its run id starts with: run ids are `<experiment-id>/<task>`) and the hash that opens its
 * trace in the lab (renderer/lib/traceRoute.ts). Runs of no listed experiment are left out.
 */
export function revealTraces(result: Pick<StepResult, 'experimentIds' | 'runIds'>): Array<{ runId: string; experimentId: string; hash: string }> {
  const ids = [...result.experimentIds].sort((a, b) => b.length - a.length);
  return result.runIds.flatMap((runId) => {
    const experimentId = ids.find((id) => runId.startsWith(id));
    return experimentId ? [{ runId, experimentId, hash: traceHash(experimentId, runId) }] : [];
  });
}
