/**
 * The lab's API for training results (types only): the weight versions written by training,
 * with their lineage, and each role's learning curves from the train loop (per iteration: mean
 * reward, rungs, KL, tokens/s, seconds) with the held-out before/after comparison. Store reads,
 * answered in-process by `createHandlers` (learningHandlers.ts). Plain, JSON-safe data. Imports
 * only types, so the renderer can use it.
 */
import type { AnswerGuard } from '../guards/index.ts';
import type { WeightVersion } from '../store/weights.ts';

/** `listWeightVersions`' and `getLearningCurves`' payload. */
export interface LearningPayload {
  /** Only this role. */
  role?: string;
}

/** A stored weight version (hyper-parameters and metrics parsed) with its lineage fields. */
export type WeightVersionView = WeightVersion;

/** The rung means of the reward ladder (format, validity, completion/execution, correctness/answer, credit). */
export interface RungMeans {
  format: number;
  validity: number;
  completion: number;
  correctness: number;
  credit: number;
}

/** One role's numbers in one train-loop iteration (from the version written that iteration). */
export interface CurvePoint {
  iteration: number;
  versionId: string;
  experimentId: string | null;
  /** Mean ladder reward h of the role over the iteration's rollouts. */
  reward: number | null;
  /** Mean grader score of the iteration's rollouts. */
  score: number | null;
  /** Rung means: from the version's metrics, else from the iteration experiment's stored ladders; null when neither has them. */
  rungs: RungMeans | null;
  /** Mean k3 KL to the starting weights (null when not measured). */
  kl: number | null;
  loss: number | null;
  /** Train tokens per second of the role's policy step. */
  tokensPerSecond: number | null;
  /** Seconds of the iteration: sampling, training, and writing this role's version (null where not recorded). */
  seconds: { sampling: number | null; training: number | null; writeReload: number | null };
}

/** A held-out evaluation of a loop (a stored `run` experiment, `config.trainLoop.phase` = `heldout-before|after`). */
export interface HeldoutSide {
  experimentId: string;
  /** Mean grader score over the held-out runs. */
  score: number;
  /** Mean ladder reward of the role; null when no run has one. */
  reward: number | null;
  /** Runs stored. */
  runs: number;
  /** Share of runs correct (0..1), and the constant guard of their answers (core/guards answerGuard: best constant, distinct answers, CONSTANT). */
  accuracy: number;
  guard: AnswerGuard;
}

/** One train loop of a role: its curve and its held-out comparison. */
export interface LoopCurve {
  loopId: string;
  /** In iteration order. */
  points: CurvePoint[];
  /** Null where the loop recorded no such evaluation (no held-out tasks, or it has not run yet). */
  before: HeldoutSide | null;
  after: HeldoutSide | null;
  /** Hyper-parameters of the loop (from its first version). */
  hyper: Record<string, unknown>;
}

/** A role's learning: its train loops, oldest first. */
export interface RoleLearning {
  role: string;
  loops: LoopCurve[];
}

/** `getLearningCurves`' answer. */
export interface LearningCurves {
  roles: RoleLearning[];
}

/** The training-result methods (store reads, synchronous on the host). */
export interface LearningApiAdditions {
  /** Every weight version (or a role's), oldest first, with lineage, hyper-parameters and metrics. */
  listWeightVersions(payload?: LearningPayload): WeightVersionView[];
  /** Per role, each train loop's per-iteration metrics and held-out before/after. */
  getLearningCurves(payload?: LearningPayload): LearningCurves;
}
