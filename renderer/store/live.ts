/**
 * Live lists and the connection: every list the views show follows the store, whoever writes
 * it. A pushed `stored` event (core/api/storeEvents.ts: the host saw the database change, the
 * CLI's writes included) names the areas that changed; the lists of those areas that have been
 * loaded are fetched again, at most once per LIVE_REFETCH_MS (a burst of events is one refetch,
 * and an area named meanwhile is fetched at the end of the window). When the connection to the
 * server is lost, `serverDown` is set (the banner shows; actions that need the server are
 * disabled); when it comes back, everything loaded is fetched again and a run this page was
 * following is checked (it may have ended while the page could not hear).
 */
import { isStoredEvent, STORED_AREAS, type LabEvent, type StoredArea } from '../../core/api/client.ts';
import { CONNECTED, type ConnectionStatus } from '../connection.ts';
import { isFinished, settledFromStored } from '../lib/liveRun.ts';
import { load } from './loadable.ts';
import type { SliceContext } from './types.ts';

/** Shortest time between two refetches of the lists, ms. */
export const LIVE_REFETCH_MS = 750;

export interface LiveSlice {
  connection: ConnectionStatus;
  /**
   * The server cannot be reached now: `connection.state !== 'open'`, set with it by
   * setConnection (the one source of "the connection is down" for every view: the banner, Start,
   * Cancel, Save).
   */
  serverDown: boolean;
  /** Takes a connection status (renderer/connection.ts); coming back refetches everything. */
  setConnection(status: ConnectionStatus): void;
  /** Takes a pushed event: `stored` ones refetch their areas' loaded lists. */
  receiveStored(event: LabEvent): void;
  /** Fetches again the loaded lists of `areas` (now, or at the end of the current window). */
  refetchAreas(areas: readonly StoredArea[]): void;
}

declare module './types.ts' {
  interface LabState extends LiveSlice {}
}

export function createLiveSlice({ api, set, get, deps }: SliceContext): LiveSlice {
  const waiting = new Set<StoredArea>();
  let windowOpen = false;

  /** Refetches the loaded lists of the areas (what is idle was never shown: nothing to do). */
  const refetch = (areas: ReadonlySet<StoredArea>) => {
    const s = get();
    const jobs: Array<Promise<unknown>> = [];
    if (areas.has('experiments')) {
      jobs.push(s.refresh());
      if (s.rolloutsExperimentId) jobs.push(s.selectRolloutsExperiment(s.rolloutsExperimentId));
    }
    if (areas.has('cards') && s.cards.status !== 'idle') jobs.push(s.loadCards());
    if (areas.has('learning') && s.learning.status !== 'idle') jobs.push(s.loadLearning());
    if ((areas.has('studies') || areas.has('experiments')) && s.studies.status !== 'idle') jobs.push(s.loadStudies());
    if (areas.has('mass') && (s.evolutions.status !== 'idle' || s.outerLoops.status !== 'idle')) jobs.push(s.loadMass());
    return Promise.all(jobs);
  };

  const closeWindow = () => {
    windowOpen = false;
    if (!waiting.size) return;
    const areas = new Set(waiting);
    waiting.clear();
    windowOpen = true;
    void refetch(areas);
    deps.delay(closeWindow, LIVE_REFETCH_MS);
  };

  /** After a reconnect: a followed run that is not running any more gets its stored status. */
  const settleLiveRun = async () => {
    const live = get().live;
    if (!live || isFinished(live)) return;
    const detail = await load(() => api.getExperiment({ id: live.experimentId }));
    if (detail.status !== 'ready' || get().live?.experimentId !== live.experimentId) return;
    const next = settledFromStored(get().live!, detail.data);
    if (next !== get().live) set({ live: next });
  };

  return {
    connection: CONNECTED,
    serverDown: false,

    setConnection(status) {
      const wasDown = get().serverDown;
      const down = status.state !== 'open';
      set({ connection: status, serverDown: down });
      if (wasDown && !down) {
        get().refetchAreas(STORED_AREAS);
        void get().loadCatalog(true);
        // The followed run's stored end first, then whatever the host runs now (another window's).
        void settleLiveRun().then(() => get().attachActiveRun());
        // Job events missed while down: the host's list of running jobs again.
        void get().loadJobs();
      }
    },

    receiveStored(event) {
      if (isStoredEvent(event)) get().refetchAreas(event.areas);
    },

    refetchAreas(areas) {
      for (const a of areas) waiting.add(a);
      if (windowOpen) return;
      closeWindow();
    },
  };
}
