/** The reproducibility record of a MASS evolution (`flowlab evolve`): its settings' fingerprint, and the digest of its records. */
import type { ModelConfig } from '../model/config.ts';
import type { Store } from '../store/index.ts';
import { buildFingerprint, recordFingerprint, sha256Of, type ReproEnvironment } from './fingerprint.ts';

/** Records an evolution's fingerprint: its tasks, first design and settings (iterations, rule, ...), seed, models and environment. */
export function recordEvolution(store: Store, evolutionId: string, p: { tasks: unknown; firstDesign: unknown; settings: Record<string, unknown>; seed: number; models: ModelConfig; environment?: ReproEnvironment }): void {
  recordFingerprint(store, evolutionId, buildFingerprint({
    kind: 'evolution',
    inputs: { tasks: p.tasks, firstDesign: p.firstDesign, settings: p.settings },
    seed: p.seed,
    models: p.models,
    ...(p.environment && { environment: p.environment }),
  }));
}

/**
 * Stores a finished evolution's output digest: the sha256 of its MASS records as [kind, key,
 * value] sorted by kind then key (their write order and times left out). Returns it.
 */
export function finishEvolutionRecord(store: Store, evolutionId: string): string | undefined {
  if (!store.repro.find(evolutionId)) return undefined;
  const rows = store.mass.list(evolutionId).map((r) => [r.kind, r.key, r.value] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const digest = sha256Of(rows);
  store.repro.finish(evolutionId, digest);
  return digest;
}
