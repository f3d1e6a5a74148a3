/** The reproducibility record of a train loop: its plan's fingerprint, and the sha256 of every version file it wrote. */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ModelConfig } from '../model/config.ts';
import type { Store } from '../store/index.ts';
import { versionsDigest, type VersionHash } from './digest.ts';
import { buildFingerprint, recordFingerprint, type Fingerprint, type ReproEnvironment } from './fingerprint.ts';

/**
 * A train loop's fingerprint: its stored plan (workflow text, dataset, roles, schedule, seeds,
 * start versions; the model paths apart), its starting models (`models`: the config its sampling
 * runs with, fingerprints included, so its decode settings are recorded too), and the environment.
 */
export function trainLoopFingerprint(plan: Record<string, unknown>, models: ModelConfig, environment?: ReproEnvironment): Fingerprint {
  const { models: _m, ...rest } = plan;
  const workflow = (plan['workflow'] as { text?: string } | undefined)?.text;
  return buildFingerprint({
    kind: 'train-loop',
    inputs: { workflow, plan: rest },
    plain: { dataset: String(plan['dataset'] ?? ''), split: String(plan['split'] ?? '') },
    ...(typeof plan['seed'] === 'number' && { seed: plan['seed'] }),
    models,
    ...(environment && { environment }),
  });
}

/** Records a loop's fingerprint (again on a resume). */
export function recordTrainLoop(store: Store, loopId: string, fp: Fingerprint): void {
  recordFingerprint(store, loopId, fp);
}

/**
 * The versions a loop wrote (its `hyper.loopId`), each with the sha256 of its file as it is now;
 * a missing file reads `missing`.
 */
export function loopVersionHashes(store: Store, loopId: string): VersionHash[] {
  return store.weights.list().filter((v) => v.hyper['loopId'] === loopId && v.iteration !== undefined).map((v) => {
    let sha256 = 'missing';
    try {
      sha256 = createHash('sha256').update(readFileSync(v.path)).digest('hex');
    } catch {
      // left `missing`
    }
    return { role: v.role, iteration: v.iteration!, sha256 };
  });
}

/** Stores a completed loop's output digest (its versions' hashes) when it has a record; returns it. */
export function finishTrainLoopRecord(store: Store, loopId: string): string | undefined {
  if (!store.repro.find(loopId)) return undefined;
  const digest = versionsDigest(loopVersionHashes(store, loopId));
  store.repro.finish(loopId, digest);
  return digest;
}
