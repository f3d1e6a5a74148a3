/**
 * The pushed event that says the store changed, whoever wrote it: this host's runs, another
 * window, or another process on the same database (the CLI). The host polls the store's change
 * counter (`Store.changeCounter`: SQLite's `PRAGMA data_version` plus this connection's
 * `total_changes()`) and, when it moved, compares the areas' signatures (`Store.areaSignatures`)
 * and pushes one `stored` event naming the areas that changed (host/storeWatch.ts). The views
 * refetch what they show of those areas. Part of `LabEvent` (lab.ts); imports nothing.
 */

/** The parts of the store a `stored` event names (the store's `StoreArea`). */
export type StoredArea = 'experiments' | 'cards' | 'learning' | 'studies' | 'mass' | 'workshop';

/** The areas, in a stable order. */
export const STORED_AREAS: readonly StoredArea[] = ['experiments', 'cards', 'learning', 'studies', 'mass', 'workshop'];

/** The store changed; `areas` says where (never empty). */
export interface StoredEvent {
  type: 'stored';
  areas: StoredArea[];
}

/** Whether `value` is a well-formed `StoredEvent`. */
export function isStoredEvent(value: unknown): value is StoredEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const areas = e['areas'];
  return e['type'] === 'stored' && Array.isArray(areas) && areas.length > 0 && areas.length <= STORED_AREAS.length && areas.every((a) => STORED_AREAS.includes(a as StoredArea));
}
