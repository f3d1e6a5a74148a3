/**
 * The train loop's options, progress events, metrics and report (core/training/loop.ts runs
 * it; core/training/steps.ts holds its steps).
 */
import type { ToolSource } from '../engine/index.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { RUNGS } from '../reward/ladder.ts';
import type { AnswerGuard, NoveltyAccuracy } from '../guards/index.ts';
import type { Store } from '../store/index.ts';
import type { WeightVersion } from '../store/weights.ts';
import type { Grader, Task } from '../tasks/types.ts';
import type { Graph } from '../workflow/graph.ts';
import type { TrainableModel, Trainer } from './port.ts';

/** Model files as the provider sees them: ref -> GGUF path, and which ref each role uses. */
export interface LoopModels {
  models: Record<string, string>;
  roleModels: Record<string, string>;
}

/**
 * A train loop's schedule and hyper-parameters: how many iterations, groups and tasks, the policy
 * step's learning rate, KL weight and clip, the sampling temperatures and seed, and where the
 * versions go. Shared by TrainLoopOptions and the experiment service's TrainLoopSpec
 * (core/experiments/trainLoop.ts).
 */
export interface TrainLoopSchedule {
  /** Rollouts per task (GRPO's group; advantages are taken within a group). */
  group: number;
  iterations: number;
  /** Training tasks per iteration. */
  tasksPerIteration: number;
  /** Learning rate of the policy step. */
  lr: number;
  /** Weight of the k3 KL penalty to the starting weights. */
  kl: number;
  /** Sampling temperature of the training rollouts. */
  temperature: number;
  /** Clip of the global gradient norm in the policy step (0: off; absent: the trainer's own, core/training/port.ts). */
  maxGradNorm?: number;
  /**
   * Entropy bonus weight β of the policy step (absent or 0: none): −β times the entropy of the
   * sampler's renormalised distribution at each grammar-restricted chosen token is added to the
   * loss (core/training/port.ts PolicyOptions.entropy; Williams & Peng 1991, §5).
   */
  entropy?: number;
  /** Held-out samples per task (fixed seeds, same before and after) and their temperature (0: greedy, one per task). */
  heldoutSamples: number;
  heldoutTemperature: number;
  seed: number;
  /** Where the versions are written: `<versionsDir>/<loopId>/<role>/iter-<k>.gguf`. */
  versionsDir: string;
  /** Versions the trained roles start from (`--role-version`): their files and the parents of the first new versions. */
  startVersions?: Readonly<Record<string, WeightVersion>>;
  /** Supervised steps on the loop's own successful trajectories (absent: policy steps only). */
  sft?: SftSchedule;
}

/**
 * Rejection-sampling fine-tuning inside the loop (filtered behaviour cloning; RAFT, Dong et al.
 * 2023, "Reward rAnked FineTuning", §3; the STaR loop, Zelikman et al. 2022): in an SFT
 * iteration each trained role takes supervised steps — cross-entropy on completion tokens only —
 * on its own calls of the iteration's successful runs, a run being a success for a role when
 * its grader score reaches the role's `minScore`.
 */
export interface SftSchedule {
  /** Iterations 1..warmStart take the SFT step instead of the policy step (the warm start). */
  warmStart: number;
  /** Iterations after the warm start take the SFT step too, before the policy step. */
  mix: boolean;
  /** Passes over the iteration's kept sequences (each in batches of at most 32). */
  steps: number;
  /** Adam learning rate of the SFT steps. */
  lr: number;
  /**
   * A run is a success for a role when its score is at least this: a number for every role, or
   * per role (roles left out: 1). With partial credit per part (learn-design: tool, argument), a
   * role whose part comes first can take the score its part alone gives (0.5).
   */
  minScore: number | Readonly<Record<string, number>>;
  /** The trained roles that take SFT steps (absent: every trained role); the others take policy steps only. */
  roles?: readonly string[];
  /**
   * A replay pool: SFT on up to this many distinct successes per task class from every iteration
   * so far (the loop's stored rollouts, newest first), balanced over classes, instead of this
   * iteration's only; absent or 0: this iteration's. A class the policy stops sampling keeps
   * its successes in the batch, so the SFT cannot collapse a choosing role onto one class.
   */
  pool?: number;
}

export interface TrainLoopOptions extends TrainLoopSchedule {
  store: Store;
  graph: Graph;
  /** The workflow's source (stored with each experiment) and file, if any. */
  workflow: { yaml: string; file?: string };
  /** `heldoutNovelty`: what the held-out split holds that training does not (Dataset.novelty of the split). */
  dataset: { name: string; grader: Grader; classOf?: (task: Pick<Task, 'expected'>) => string; heldoutNovelty?: string };
  /** Training tasks: iteration k takes the next `tasksPerIteration` of them (wrapping around). */
  trainTasks: readonly Task[];
  /** Held-out tasks evaluated before and after (none: no held-out evaluation). */
  heldoutTasks: readonly Task[];
  tools: ToolSource;
  trainer: Trainer;
  /** Builds a provider over these model files; called at the start and after every write (reload). */
  makeProvider: (models: LoopModels) => Promise<ModelProvider>;
  /** The models before training (roles not trained keep theirs throughout). */
  models: LoopModels;
  /** Roles whose weights are trained (each gets its own version lineage). */
  roles: readonly string[];
  /** Most trajectories decoded at once (default: every trajectory of an iteration, up to 64). */
  parallel?: number;
  signal?: AbortSignal;
  /** Progress: rollouts done within an iteration, and each finished iteration / evaluation. */
  onEvent?: (e: LoopEvent) => void;
  /** Extra config stored with each experiment (the CLI's model settings). */
  config?: Record<string, unknown>;
  /** A loop id (default `tl-<time>-<rand>`). */
  loopId?: string;
  /**
   * Continue the stored loop `loopId` (store.trainLoops) from its last complete iteration
   * instead of starting one: same lineage, numbering, tasks and seeds; an iteration's stored
   * rollouts are used again. The options must be those it was started with (the experiment
   * service rebuilds them from the stored plan, core/experiments/trainLoop.ts).
   */
  resume?: boolean;
  /** Stored with a new loop as its plan: what a later resume rebuilds these options from. */
  plan?: Record<string, unknown>;
}

/**
 * A loop's progress as stored with it (store.trainLoops state) after each complete iteration:
 * every trained role's lineage, the metrics of the iterations done, the held-out result before.
 */
export interface TrainLoopState {
  roles: Record<string, { basePath: string; startPath: string; path: string; parentId?: string; versions: string[] }>;
  iterations: IterationMetrics[];
  heldoutBefore?: HeldoutResult;
}

export type LoopEvent =
  | { type: 'rollout'; iteration: number; done: number; total: number }
  | { type: 'iteration'; metrics: IterationMetrics }
  | { type: 'heldout'; phase: 'before' | 'after'; result: HeldoutResult };

/** One role's numbers in one iteration. */
export interface RoleIterationMetrics {
  /** Mean ladder reward h of the role over the iteration's rollouts. */
  reward: number;
  /** Mean of each rung (format, validity, completion, correctness, credit). */
  rungs: RungMeans;
  /** Samples (model calls) trained on, and how many had a non-zero advantage. */
  samples: number;
  signalSamples: number;
  /** Groups whose rewards for this role were all equal (no signal). */
  zeroSpreadGroups: number;
  /** The policy step: loss, mean k3 KL to the starting weights, tokens trained, train tokens/s. */
  loss?: number;
  kl?: number;
  trainTokens: number;
  trainTokensPerSecond?: number;
  /** The version written this iteration (absent when the role had no samples). */
  versionId?: string;
  path: string;
  /** What the role's step was: `grpo` (policy step), `sft`, `sft+grpo`, or `none` (no data); set by the loop. */
  step?: RoleStepKind;
  /** SFT iterations: the successful calls trained on, and the mean loss of their steps. */
  sftSequences?: number;
  sftLoss?: number;
  /** Wiring root failures blamed on the role, per run (mean over the iteration's runs); set by the loop. */
  wiringRootFailures?: number;
}

export type RoleStepKind = 'grpo' | 'sft' | 'sft+grpo' | 'none';

/** Accuracy of one class of tasks (Dataset.classOf): runs, the share correct, the mean score. */
export interface ClassAccuracy {
  runs: number;
  accuracy: number;
  score: number;
  /** Share of the runs whose answer is of this class (the right design, whatever its arguments). */
  classRight: number;
}

/** The best constant policy on a set of runs (core/training/iteration.ts constantBaseline). */
export interface ConstantBaseline {
  /** The most common expected answer, and its share: the accuracy of always giving it. */
  answer: string | null;
  accuracy: number;
  /** The most common class, and its share: the class accuracy of always choosing it (datasets with classes). */
  class?: string;
  classAccuracy?: number;
}

export interface IterationMetrics {
  iteration: number;
  experimentId: string;
  /** Mean grader score (the outcome) over the iteration's rollouts. */
  score: number;
  roles: Record<string, RoleIterationMetrics>;
  /** Accuracy per class of task, when the dataset has classes (Dataset.classOf). */
  classes?: Record<string, ClassAccuracy>;
  /** Completion tokens sampled, and per second of sampling. */
  sampledTokens: number;
  sampleTokensPerSecond: number;
  seconds: { sampling: number; training: number; writeReload: number; total: number };
}

export interface HeldoutResult {
  experimentId: string;
  /** Mean grader score over every held-out sample. */
  score: number;
  samples: number;
  /** Mean ladder reward per role. */
  roles: Record<string, number>;
  /** Share of runs correct, over every held-out sample (set by the loop, as the fields below). */
  accuracy?: number;
  /** Accuracy per class of task, when the dataset has classes (Dataset.classOf). */
  classes?: Record<string, ClassAccuracy>;
  /** Share of runs whose answer is of the right class (datasets with classes). */
  classAccuracy?: number;
  /** The best constant policy on the same runs. */
  constant?: ConstantBaseline;
  /** The constant guard of the runs: best constant, distinct answers, CONSTANT (core/guards answerGuard). */
  guard?: AnswerGuard;
  /** Accuracy per novelty of the held-out tasks (`in-template`, `new-wording`), when the split has both (core/guards accuracyByNovelty). */
  novelty?: Record<string, NoveltyAccuracy>;
  /** What the held-out split holds that training does not (the dataset's `novelty` of the split). */
  what?: string;
  /** Wiring root failures blamed on each trained role, per run. */
  wiringRootFailures?: Record<string, number>;
  /** A few completions of each trained role (the first samples), to see the text stays fluent. */
  examples: Record<string, string[]>;
}

export interface TrainLoopReport {
  loopId: string;
  roles: string[];
  iterations: IterationMetrics[];
  heldout?: { before: HeldoutResult; after: HeldoutResult };
  /** Each trained role's versions in order, and its final file. */
  versions: Record<string, string[]>;
  finalModels: Record<string, string>;
  cancelled: boolean;
  hyper: LoopHyper;
}

/** Mean of each ladder rung (format, validity, completion, correctness, credit). */
export type RungMeans = Record<(typeof RUNGS)[number], number>;

/** The loop's hyper-parameters, stored with every experiment and version it writes. */
export type LoopHyper = {
  lr: number;
  kl: number;
  temperature: number;
  group: number;
  tasksPerIteration: number;
  maxGradNorm: number | null;
  /** The entropy bonus weight; absent when none. */
  entropy?: number;
  seed: number;
  dataset: string;
  loopId: string;
  /** The SFT schedule (SftSchedule); absent for policy steps only. */
  sft?: SftSchedule;
};

/** A trained role's own weights and lineage while the loop runs. */
export interface TrainedRole {
  model: TrainableModel;
  /** The file the lineage started from (recorded on every version). */
  basePath: string;
  /** The file this loop started the role from (its KL reference, also after a resume). */
  startPath: string;
  /** The role's current file (the newest version, or where it started). */
  path: string;
  /** The newest version's id: the parent of the next. */
  parentId?: string;
  /** Version ids written so far, in order. */
  versions: string[];
}

/** What the loop's steps share: its options, id and hyper-parameters, the files in use and the provider over them. */
export interface LoopRun {
  readonly o: TrainLoopOptions;
  readonly loopId: string;
  readonly hyper: LoopHyper;
  /** The model files in use now; each write of a role's version updates its `train:<role>` ref. */
  readonly models: LoopModels;
  provider: ModelProvider;
}
