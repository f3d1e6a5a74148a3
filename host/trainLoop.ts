/**
 * The lab's face of the train loop: a `StartTrainLoopRequest` (core/api/trainLoop.ts) mapped
 * onto the `TrainLoopSpec` that `flowlab train-loop` builds (cli/commands/trainLoop.ts), with
 * the same defaults, and the loop's events (core/training/types.ts `LoopEvent`) as the lab's
 * `TrainLoopEvent`s. The runner (host/runner.ts) owns starting, cancelling and the model files.
 */
import { ApiError, TRAIN_LOOP_DEFAULTS, type StartTrainLoopRequest, type TrainLoopEvent, type TrainRoleMetrics } from '../core/api/index.ts';
import type { TrainLoopSpec } from '../core/experiments/index.ts';
import type { Store, WeightVersion } from '../core/store/index.ts';
import type { Dataset } from '../core/tasks/index.ts';
import type { LoopEvent, SftSchedule } from '../core/training/index.ts';
import type { Graph } from '../core/workflow/index.ts';
import type { ResolvedModels } from '../models/resolve.ts';

const M = 'startTrainLoop';

export { TRAIN_LOOP_DEFAULTS };

/** Where the lab's versions go and its data comes from (the runner's folders, never the request's). */
export interface TrainLoopPlace {
  /** Versions are written to `<versionsDir>/<loopId>/<role>/iter-<k>.gguf`. */
  versionsDir: string;
  /** The data folder recorded as `config.dataDir` (the lab's, as for `startRun`). */
  dataDir: string | undefined;
}

/**
 * The spec `flowlab train-loop` would build for the same options: defaults filled in as the CLI
 * fills them (held-out temperature = sampling temperature), the resolved models, and each role's
 * start version (`roleVersions`) read from the store, and the SFT schedule when `warmStart` > 0
 * or `sftMix`. Errors: BAD_REQUEST `split` / `heldoutSplit` naming a split `dataset` does not
 * have; `sftMinScore` / `sftRoles` / a non-zero `sftPool` given without a warm start or mix.
 * `entropy` and `sftPool` of 0 are none, as `--entropy 0` and `--sft-pool 0` are.
 */
export function trainLoopSpecOf(req: StartTrainLoopRequest, graph: Graph, text: string, resolved: ResolvedModels, store: Store, dataset: Dataset, place: TrainLoopPlace): TrainLoopSpec {
  const d = TRAIN_LOOP_DEFAULTS;
  const split = req.split ?? d.split;
  const heldoutSplit = req.heldoutSplit ?? d.heldoutSplit;
  const heldout = req.heldout ?? d.heldout;
  for (const [field, name] of [['split', split], ...(heldout > 0 ? [['heldoutSplit', heldoutSplit]] : [])] as const) {
    if (!dataset.splits.includes(name)) throw new ApiError('BAD_REQUEST', `${M}: ${dataset.name} has no split "${name}" (splits: ${dataset.splits.join(', ')})`, M, field);
  }
  const temperature = req.temperature ?? d.temperature;
  const warmStart = req.warmStart ?? d.warmStart;
  const sft: SftSchedule | undefined = warmStart > 0 || req.sftMix
    ? { warmStart, mix: req.sftMix ?? false, steps: req.sftSteps ?? d.sftSteps, lr: req.sftLr ?? d.sftLr, minScore: req.sftMinScore ?? d.sftMinScore, ...(req.sftRoles && { roles: req.sftRoles }), ...(req.sftPool && { pool: req.sftPool }) }
    : undefined;
  if (!sft) {
    for (const field of ['sftMinScore', 'sftRoles', 'sftPool'] as const) {
      if (req[field] !== undefined && req[field] !== 0) throw new ApiError('BAD_REQUEST', `${M}: ${field} needs warmStart > 0 or sftMix`, M, field);
    }
  }
  const startVersions: Record<string, WeightVersion> = Object.fromEntries(Object.entries(resolved.versions).map(([role, v]) => [role, store.weights.get(v!.id)]));
  return {
    workflow: { graph, text },
    dataset: req.dataset,
    dataDir: place.dataDir,
    split,
    heldoutSplit,
    heldout,
    ...(req.roles && { roles: req.roles }),
    group: req.group ?? d.group,
    iterations: req.iterations ?? d.iterations,
    tasksPerIteration: req.limit ?? d.limit,
    lr: req.lr ?? d.lr,
    kl: req.kl ?? d.kl,
    temperature,
    maxGradNorm: req.maxGradNorm ?? d.maxGradNorm,
    heldoutSamples: req.heldoutSamples ?? d.heldoutSamples,
    heldoutTemperature: req.heldoutTemperature ?? temperature,
    seed: req.seed ?? d.seed,
    models: resolved.config,
    startVersions,
    versionsDir: place.versionsDir,
    ...(sft && { sft }),
    ...(req.entropy ? { entropy: req.entropy } : {}),
  };
}

/** A loop event as the lab pushes it: rollout progress, an iteration's metrics (per role), a held-out evaluation. */
export function trainLoopLabEvent(loopId: string, e: LoopEvent): TrainLoopEvent {
  switch (e.type) {
    case 'rollout':
      return { type: 'trainRollout', loopId, iteration: e.iteration, done: e.done, total: e.total };
    case 'iteration': {
      const m = e.metrics;
      const roles: Record<string, TrainRoleMetrics> = {};
      for (const [role, x] of Object.entries(m.roles)) {
        roles[role] = {
          reward: x.reward,
          samples: x.samples,
          signalSamples: x.signalSamples,
          ...(x.kl !== undefined && Number.isFinite(x.kl) && { kl: x.kl }),
          ...(x.loss !== undefined && Number.isFinite(x.loss) && { loss: x.loss }),
          ...(x.versionId !== undefined && { versionId: x.versionId }),
          ...(x.step !== undefined && { step: x.step }),
          ...(x.sftSequences !== undefined && { sftSequences: x.sftSequences }),
          ...(x.wiringRootFailures !== undefined && { wiringRootFailures: x.wiringRootFailures }),
        };
      }
      return { type: 'trainIteration', loopId, iteration: m.iteration, experimentId: m.experimentId, score: m.score, sampledTokens: m.sampledTokens, seconds: m.seconds.total, roles };
    }
    case 'heldout':
      return {
        type: 'trainHeldout', loopId, phase: e.phase, experimentId: e.result.experimentId, score: e.result.score, samples: e.result.samples, roles: { ...e.result.roles },
        ...(e.result.accuracy !== undefined && { accuracy: e.result.accuracy }),
        ...(e.result.classes && { classes: Object.fromEntries(Object.entries(e.result.classes).map(([c, x]) => [c, x.accuracy])) }),
      };
  }
}
