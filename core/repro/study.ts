/** The reproducibility record of a study: its plan's fingerprint; on completion, the digest of its cells' outputs. */
import type { Store } from '../store/index.ts';
import { experimentDigest } from './digest.ts';
import { buildFingerprint, recordFingerprint, sha256Of, type ReproEnvironment } from './fingerprint.ts';

/**
 * Records a study's fingerprint: its validated plan (conditions, zones, seeds, models, training
 * settings) and the environment. Each cell (an experiment) and each training unit (a train loop)
 * records its own fingerprint when it starts.
 */
export function recordStudy(store: Store, studyId: string, plan: unknown, environment?: ReproEnvironment): void {
  recordFingerprint(store, studyId, buildFingerprint({ kind: 'study', inputs: { plan }, ...(environment && { environment }) }));
}

/**
 * Stores a completed study's output digest: the sha256 of its cells' experiment digests, as
 * [cell key, digest] sorted by key (a cell without an experiment digests as `none`). Returns it.
 */
export function finishStudyRecord(store: Store, studyId: string, cells: ReadonlyArray<{ key: string; experimentId: string }>): string | undefined {
  if (!store.repro.find(studyId)) return undefined;
  const rows = [...cells].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((c) => [c.key, store.findExperiment(c.experimentId) ? experimentDigest(store, c.experimentId) : 'none']);
  const digest = sha256Of(rows);
  store.repro.finish(studyId, digest);
  return digest;
}
