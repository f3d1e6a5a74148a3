/**
 * The job kinds by name (kind.ts). `builtinJobKinds()` is the registry the lab and the CLI start
 * from: every long-running kind Flowlab has, each registered once here with its spec and stored
 * codec. A new kind is one file exporting its `JobKind` and one `register` line (a test may
 * register a toy kind in its own registry: `builtinJobKinds().register(toy)`).
 */
import { z } from 'zod';
import { decodeExperimentConfig, type ExperimentConfig } from '../store/config.ts';
import { loopPlanOf } from '../experiments/trainLoopResume.ts';
import type { TrainLoopPlan } from '../experiments/trainLoop.ts';
import { experimentSpecSchemas } from './experimentSpec.ts';
import { JobError, type JobKind, type JobProgress } from './kind.ts';

/** What a registered kind offers, as `listJobKinds` and `flowlab job kinds` show it. */
export interface JobKindInfo {
  name: string;
  family: string;
  describe: string;
  /** Started through the generic `startJob` / `flowlab job start`. */
  startable: boolean;
  /** Resumed through `resumeJob` (by the kind itself, or routed to its `resumeVia` method) / `flowlab job resume`. */
  resumable: boolean;
  /** The kind's own lab method and CLI command, for kinds started there. */
  startVia?: { method: string; command: string };
  /** The lab method and CLI command `resumeJob` routes the kind to (`resumeRun`, `flowlab resume`). */
  resumeVia?: { method: string; command: string };
  /** Its stored config's shape version, when it stores one. */
  configVersion?: number;
}

/** The job kinds by name. */
export class JobRegistry {
  private readonly kinds = new Map<string, JobKind<never, never>>();

  /**
   * Adds `kind`; returns the registry (chainable).
   * @throws JobError `DUPLICATE_KIND` when the name is taken.
   */
  register<S, U, C>(kind: JobKind<S, U, C>): this {
    if (this.kinds.has(kind.name)) throw new JobError('DUPLICATE_KIND', 'kind', `a job kind "${kind.name}" is registered already`);
    this.kinds.set(kind.name, kind as unknown as JobKind<never, never>); // variance only: the table calls it with its own spec, parsed by its own schema
    return this;
  }

  /** The kind named `name`. @throws JobError `UNKNOWN_KIND` (field `kind`), listing the kinds. */
  get(name: string): JobKind<unknown, unknown> {
    const kind = this.kinds.get(name);
    if (!kind) throw new JobError('UNKNOWN_KIND', 'kind', `unknown job kind "${name}" (kinds: ${[...this.kinds.keys()].join(', ')})`);
    return kind as JobKind<unknown, unknown>;
  }

  /** Every kind, in registration order. */
  list(): JobKindInfo[] {
    return [...this.kinds.values()].map((k) => ({
      name: k.name, family: k.family, describe: k.describe, startable: k.start !== undefined, resumable: k.resume !== undefined || k.resumeVia !== undefined,
      ...(k.startVia && { startVia: k.startVia }), ...(k.resumeVia && { resumeVia: k.resumeVia }), ...(k.codec && { configVersion: k.codec.version }),
    }));
  }
}

/** The fold of kinds whose updates are progress itself (units done of total, a summary line). */
export function progressFold(progress: JobProgress, update: JobProgress): JobProgress {
  return { ...progress, ...update };
}

/** The stored experiment config codec (core/store/config.ts), as the experiment kinds bring it. */
const experimentCodec = { version: 1, decode: (value: unknown, id: string): ExperimentConfig | null => decodeExperimentConfig(value, id) };
/** The stored train-loop plan codec (core/experiments/trainLoopResume.ts). */
const loopPlanCodec = { version: 1, decode: (value: unknown, id: string): TrainLoopPlan => loopPlanOf({ id, plan: value }) };
/** Experiments and train loops resume through `resumeRun` (it finds which from the id). */
const RESUME_RUN = { method: 'resumeRun', command: 'flowlab resume' } as const;

/** A kind started and resumed through its own lab method (its payload schema lives with that method: core/api). */
function viaMethod(name: string, family: string, describe: string, method: string, command: string): JobKind<unknown, JobProgress> {
  return { name, family, describe, spec: z.unknown(), startVia: { method, command }, fold: progressFold };
}

/**
 * A registry of Flowlab's long-running kinds: experiments (`run`, `blame-eval`, `rollouts`, with
 * the one spec schema both faces build: experimentSpec.ts), train loops, MASS jobs (`evolve`,
 * `rank`, `rsi`), studies, model downloads and forks.
 */
export function builtinJobKinds(): JobRegistry {
  const registry = new JobRegistry();
  const experiment = (name: 'run' | 'blame-eval' | 'rollouts', describe: string, command: string): JobKind<unknown, JobProgress, ExperimentConfig | null> => ({
    name, family: 'experiment', describe, spec: experimentSpecSchemas[name], codec: experimentCodec, startVia: { method: 'startRun', command }, resumeVia: RESUME_RUN, fold: progressFold,
  });
  registry
    .register(experiment('run', 'tasks through one workflow, each once', 'flowlab run'))
    .register(experiment('blame-eval', 'SIMULATED faults with ground truth, blame scored against them', 'flowlab blame-eval'))
    .register(experiment('rollouts', 'G on-policy rollouts per task and group-relative advantages', 'flowlab rollouts'))
    .register({ ...viaMethod('train-loop', 'train-loop', 'rollouts, policy steps and held-out evaluation, iteration by iteration', 'startTrainLoop', 'flowlab train-loop'), codec: loopPlanCodec, resumeVia: RESUME_RUN })
    .register(viaMethod('evolve', 'mass', 'MASS inner loop: evolve a workflow design', 'startEvolve', 'flowlab evolve'))
    .register(viaMethod('rank', 'mass', 'MASS outer loop: rank designs (Bradley-Terry)', 'startRank', 'flowlab rank'))
    .register(viaMethod('rsi', 'mass', 'MASS RSI cycles: evolve, rank, repeat', 'startRsi', 'flowlab rsi'))
    .register(viaMethod('study', 'study', 'conditions x zones x seeds x models into tables with intervals', 'startStudy', 'flowlab study'))
    .register(viaMethod('download', 'download', 'a model file into the models folder', 'startDownload', 'flowlab models download'))
    .register(viaMethod('fork', 'fork', 'a stored run re-run from one node with one intervention', 'forkRun', 'flowlab fork'));
  return registry;
}
