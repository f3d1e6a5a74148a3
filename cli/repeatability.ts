/** The note under a table whose experiment is not exactly repeatable (core/repro records it). */
import type { Store } from '../core/store/index.ts';

/**
 * The line a table gets when its experiment (or study cell) is not exactly repeatable, e.g.
 * `Repeatability not guaranteed: server-side batching (flowlab repeat <id> measures it).`;
 * '' when it is exact or has no record.
 */
export function repeatabilityLine(store: Pick<Store, 'repro'>, id: string): string {
  const r = store.repro.find(id)?.repeatability;
  return r && r !== 'exact' ? `Repeatability ${r} (flowlab repeat ${id} measures it).\n` : '';
}
