/**
 * Watches the store for writes from anyone (this host's runs, the CLI or another process on the
 * same database file) and pushes one `stored` LabEvent naming the areas that changed
 * (core/api/storeEvents.ts). Every `intervalMs` it reads the store's change counter
 * (`Store.changeCounter`: `PRAGMA data_version` + `total_changes()`, one cheap read that touches
 * no table); only when that moved does it read the areas' signatures (`Store.areaSignatures`)
 * and compare them with the last ones. A burst of writes within one interval is one event.
 */
import type { LabEvent, StoredArea } from '../core/api/index.ts';
import type { Store, StoreArea } from '../core/store/index.ts';

/** Default polling interval, ms. */
export const STORE_WATCH_MS = 1000;

/** A running watch. */
export interface StoreWatch {
  /** Checks now (tests; the timer calls this). Returns the areas it reported, if any. */
  check(): StoredArea[];
  /** Stops the timer. Idempotent. */
  stop(): void;
}

/**
 * Starts watching `store`; `emit` receives each `stored` event. The timer is unref'd (it never
 * keeps a process alive) and stops by itself once the store is closed. A failing read (the
 * database busy or gone) is skipped and tried again at the next tick.
 */
export function watchStore(store: Store, emit: (event: LabEvent) => void, intervalMs = STORE_WATCH_MS): StoreWatch {
  let counter = store.closed ? 0 : store.changeCounter();
  let signatures: Record<StoreArea, string> | null = store.closed ? null : store.areaSignatures();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => {
    if (timer) clearInterval(timer);
    timer = undefined;
  };
  const check = (): StoredArea[] => {
    if (store.closed) {
      stop();
      return [];
    }
    try {
      const now = store.changeCounter();
      if (now === counter) return [];
      counter = now;
      const next = store.areaSignatures();
      const areas = (Object.keys(next) as StoreArea[]).filter((a) => !signatures || signatures[a] !== next[a]);
      signatures = next;
      if (areas.length) emit({ type: 'stored', areas });
      return areas;
    } catch {
      return [];
    }
  };
  timer = setInterval(check, intervalMs);
  timer.unref?.();
  return { check, stop };
}
