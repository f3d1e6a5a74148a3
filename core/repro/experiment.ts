/** The reproducibility record of an experiment (the experiment service records it; `flowlab verify` reads it). */
import type { ModelConfig } from '../model/config.ts';
import type { ExperimentRow, Store } from '../store/index.ts';
import { experimentDigest } from './digest.ts';
import { buildFingerprint, recordFingerprint, type Fingerprint, type ReproEnvironment } from './fingerprint.ts';

/**
 * An experiment's fingerprint: its workflow text, planned task list (ids, inputs, expected
 * answers), kind and stored config (flags, faults, rollout settings; the model paths apart), its
 * dataset and split, seed, model files and decode settings, and the environment.
 */
export function experimentFingerprint(store: Store, exp: ExperimentRow, models: ModelConfig | undefined, environment?: ReproEnvironment): Fingerprint {
  const { models: _m, ...config } = exp.config ?? {};
  return buildFingerprint({
    kind: 'experiment',
    inputs: { workflow: exp.workflowYaml, tasks: store.listTasks(exp.id), config },
    plain: { experimentKind: exp.kind, dataset: exp.dataset, split: exp.split },
    seed: exp.seed,
    ...(models && { models }),
    ...(environment && { environment }),
  });
}

/** Records `exp`'s fingerprint (a resume records it again: the environment may have changed). */
export function recordExperiment(store: Store, exp: ExperimentRow, models: ModelConfig | undefined, environment?: ReproEnvironment): Fingerprint {
  const fp = experimentFingerprint(store, exp, models, environment);
  recordFingerprint(store, exp.id, fp);
  return fp;
}

/** Stores the output digest of a completed experiment that has a record; returns it (undefined without a record). */
export function finishExperimentRecord(store: Store, experimentId: string): string | undefined {
  if (!store.repro.find(experimentId)) return undefined;
  const digest = experimentDigest(store, experimentId);
  store.repro.finish(experimentId, digest);
  return digest;
}
