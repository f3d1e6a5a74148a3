/**
 * The lab's API for MASS's inner loop (types only): the stored evolutions, one evolution's
 * champion timeline (per task: each iteration's version or rejected proposal, its verdicts with
 * orientation and rationale, the champion after it; the designs) and the diff between any two
 * design versions (core/mass/timeline.ts). Store reads, answered in-process by `createHandlers`
 * (massHandlers.ts). Plain, JSON-safe data. Imports only types, so the renderer can use it.
 */
import type { DesignDiff, EvolutionTimeline, OuterLoopSummary, OuterLoopView } from '../mass/index.ts';

export type { OuterCut, OuterCycleArm, OuterLoopSummary, OuterLoopView, OuterQuarantine, OuterRunRow, OuterTaskRanking } from '../mass/index.ts';
export type { AgentChange, DesignDiff, EvolutionTimeline, TaskTimeline, TimelineDesign, TimelineIteration, TimelineVerdict } from '../mass/index.ts';

/** One stored evolution, as `listEvolutions` lists it. */
export interface EvolutionSummary {
  evolutionId: string;
  dataset: string;
  rule: 'baseline' | 'direct';
  iterations: number;
  tasks: number;
  /** Per task, the champion version when the task's loop has finished (null: no champion; absent: not finished). */
  champions: Array<number | null | undefined>;
  records: number;
}

/** `getEvolution`'s payload. */
export interface GetEvolutionPayload {
  evolutionId: string;
}

/** `getDesignDiff`'s payload: task `taskIndex`, from version `a` to version `b`. */
export interface GetDesignDiffPayload {
  evolutionId: string;
  taskIndex: number;
  a: number;
  b: number;
}

/** The MASS methods of `FlowlabApi`. */
export interface MassApiAdditions {
  /** Every stored evolution, oldest first. */
  listEvolutions(payload?: Record<string, never>): EvolutionSummary[];
  /** One evolution's champion timeline. Errors: `NOT_FOUND`. */
  getEvolution(payload: GetEvolutionPayload): EvolutionTimeline;
  /** The diff between two stored design versions of one task. Errors: `NOT_FOUND` (evolution or version). */
  getDesignDiff(payload: GetDesignDiffPayload): DesignDiff;
  /** Every stored outer loop (`flowlab rank` prefix or `flowlab rsi` loop id), oldest first. */
  listOuterLoops(payload?: Record<string, never>): OuterLoopSummary[];
  /** One outer loop: per-task Bradley-Terry ranking with its cut, the quarantine, the cycle-over-cycle comparison. Errors: `NOT_FOUND`. */
  getOuterLoop(payload: GetOuterLoopPayload): OuterLoopView;
}

/** `getOuterLoop`'s payload. */
export interface GetOuterLoopPayload {
  loopId: string;
}
