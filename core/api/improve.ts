/**
 * The lab's API for rollouts and hint cards (types only): a rollouts experiment's groups with each
 * role's reward and group-relative advantage, and the prior library of hint cards with their
 * measured effect. Store reads, answered in-process by `createHandlers` (improveHandlers.ts);
 * no LabHost needed. Plain, structured-clone-safe and JSON-safe data (no NaN, no undefined in
 * arrays). Imports only types, so the renderer can use it.
 */
import type { SignTest } from '../stats/index.ts';
import type { Card } from '../store/improve.ts';
import type { ExperimentStatus } from '../store/types.ts';
import type { RunRecord } from '../results/index.ts';

/** `getRollouts`'s payload. */
export interface GetRolloutsPayload {
  experimentId: string;
}

/** One role in one rollout: its ladder reward h_ρ and its group-relative advantage A_ρ. */
export interface RolloutRoleValue {
  /** h_ρ of the role in this rollout. */
  reward: number;
  /** A_ρ = (h_ρ − mean) / (std + 1e-6) within the group; null until the group is complete and its advantages stored. */
  advantage: number | null;
}

/** One rollout (a trajectory) of a group. */
export interface RolloutEntry {
  runId: string;
  /** Planned task index within the experiment (group index × G + rollout index). */
  taskIndex: number;
  /** The rollout's task id, `<dataset task id>#r<g>`. */
  taskId: string;
  /** The rollout's recorded seed. */
  seed: number;
  /** The grader's score 0..1: the trajectory's outcome reward. */
  score: number;
  correct: boolean;
  status: RunRecord['status'];
  /** Each learning role that took part: reward h and advantage A (ladder mode). */
  perRole: Record<string, RolloutRoleValue>;
  /** Flow-GRPO: the outcome reward normalised over the group's trajectories, broadcast to every turn; null until stored. */
  outcomeAdvantage: number | null;
  /** Faults were injected into this run (SIMULATED). */
  simulated: boolean;
}

/** A role's reward statistics over a group (population std). */
export interface RolloutRoleStats {
  mean: number;
  std: number;
  /** Rollouts in which the role has a reward. */
  size: number;
}

/** One task's group of G rollouts. */
export interface RolloutGroup {
  /** 0-based group number (the dataset task's position in the experiment). */
  index: number;
  /** The dataset task id the group was sampled for. */
  groupKey: string;
  /** Every one of the G rollouts is stored (an interrupted experiment can leave a group short; resume completes it). */
  complete: boolean;
  /** In rollout order. */
  rollouts: RolloutEntry[];
  /** Per learning role: every rollout got the same h, so every advantage is 0 (no learning signal). */
  zeroSpread: Record<string, boolean>;
  /** Per learning role: mean and std of h over the group. */
  stats: Record<string, RolloutRoleStats>;
  /** The outcome rewards (scores) over the group; `zeroSpread`: every rollout scored the same (no Flow-GRPO signal). */
  outcome: { mean: number; std: number; zeroSpread: boolean };
  /** Every learning role with a reward has zero spread: the group teaches nothing. */
  noSignal: boolean;
}

/** `getRollouts`'s answer. */
export interface RolloutsView {
  experimentId: string;
  workflowName: string;
  status: ExperimentStatus;
  /** Rollouts per task, G. */
  group: number;
  temperature: number;
  /** Co-evolution mode, e.g. `multi-agent`, `single:solver`. */
  mode: string;
  learningRoles: string[];
  /** Groups planned (dataset tasks). */
  plannedGroups: number;
  /** Groups with at least one stored rollout, in task order. */
  groups: RolloutGroup[];
}

/** `listCards`'s payload. */
export interface ListCardsPayload {
  /** Only this role's cards. */
  role?: string;
}

/**
 * Why a hint card is not to be trusted blindly, shown where it is offered: it was distilled from
 * SIMULATED trajectories (injected faults, a scripted model) or by a simulated teacher, or some
 * or all of the runs it was distilled from were graded wrong.
 */
export interface CardTrust {
  /** Source runs recorded, and how many of them are still stored. */
  sources: number;
  found: number;
  /** Stored source runs graded wrong (not `correct`). */
  failedSources: number;
  simulated: boolean;
  /** True when `simulated` or any source run failed. */
  flagged: boolean;
  /** The reasons in users' words, e.g. `distilled from 3 failed runs (all of its sources)`. */
  reasons: string[];
}

/** A card of the prior library with its provenance and how many runs' prompts carried it. */
export type LibraryCard = Card & { uses: number; trust?: CardTrust };

/** `getCardEffect`'s payload. */
export interface GetCardEffectPayload {
  cardId: string;
}

/** Runs on one side of a card comparison. */
export interface CardEffectSide {
  /** Runs counted. */
  runs: number;
  /** Mean grader score 0..1. */
  meanScore: number;
  /** Mean ladder reward h of the card's role; null when no counted run has it. */
  meanH: number | null;
}

/**
 * The measured effect of a card: runs whose prompts carried it vs runs of the same workflow,
 * dataset, split and experiment kind without it. `paired`: matched by dataset task id (and by
 * seed where a run with the same seed exists; several baseline runs of one task are averaged);
 * `unpaired`: no task in common, so the two sides are different tasks (weak evidence).
 */
export interface CardEffect {
  basis: 'paired' | 'unpaired';
  /** Pairs (paired), or runs with the card (unpaired). */
  n: number;
  /** Pairs in which both sides have a ladder for the card's role (the h comparison's n). */
  nH: number;
  with: CardEffectSide;
  without: CardEffectSide;
  /** with − without. */
  delta: { score: number; h: number | null };
  /** Paired only: exact two-sided sign test of the paired differences. */
  signTest?: { score: SignTest; h: SignTest | null };
  /** Paired only: every pair's baseline ran with the same seed as the run with the card. */
  seedsMatch?: boolean;
  /** Runs with the card that found no baseline run of the same task (left out of a paired comparison). */
  unpairedWith: number;
  /** The experiments the baseline runs came from. */
  baselineExperiments: string[];
}

/** `getCardEffect`'s answer. */
export interface CardEffectView {
  card: LibraryCard;
  /** Runs whose prompts carried the card, and their experiments. */
  usedBy: { runs: number; experiments: string[] };
  /** Null when not measured: never used, or no run without it to compare with (`reason` says which). */
  effect: CardEffect | null;
  reason?: string;
}

/** The rollouts and hint-card methods (store reads, synchronous on the host, like `listRuns`). */
export interface ImproveApiAdditions {
  /**
   * A rollouts experiment's groups: each rollout's seed, score, and per learning role its reward
   * h and advantage A, the Flow-GRPO outcome advantage, and zero-spread flags.
   * Errors: `NOT_FOUND` (no such experiment), `BAD_REQUEST` (field `experimentId`: not a rollouts experiment).
   */
  getRollouts(payload: GetRolloutsPayload): RolloutsView;
  /** The prior library, oldest first, with provenance and use counts; `role` filters. */
  listCards(payload?: ListCardsPayload): LibraryCard[];
  /** A card and, when runs used it and comparable runs without it exist, its measured effect. Errors: `NOT_FOUND`. */
  getCardEffect(payload: GetCardEffectPayload): CardEffectView;
}
