/**
 * The MASS feature (store reads): the stored evolutions, one evolution's champion timeline (per
 * task: each iteration's version or rejected proposal, its verdicts with orientation and
 * rationale, the champion after it; the designs), the diff between any two design versions
 * (core/mass/timeline.ts), and the stored outer loops with their rankings, quarantine and cycles.
 * Plain, JSON-safe data.
 */
import * as z from 'zod';
import { designDiffOf, MassError, outerLoopOf, outerLoopsOf, timelineOf, type DesignDiff, type EvolutionTimeline, type OuterLoopSummary, type OuterLoopView } from '../../mass/index.ts';
import type { Store } from '../../store/index.ts';
import { ApiError } from '../errors.ts';
import { defineFeature } from '../feature.ts';
import { Id, NoPayload } from '../fields.ts';

export type { OuterCut, OuterCycleArm, OuterLoopSummary, OuterLoopView, OuterQuarantine, OuterRunRow, OuterTaskRanking } from '../../mass/index.ts';
export type { AgentChange, DesignDiff, EvolutionTimeline, TaskTimeline, TimelineDesign, TimelineIteration, TimelineVerdict } from '../../mass/index.ts';

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

/** `getOuterLoop`'s payload. */
export interface GetOuterLoopPayload {
  loopId: string;
}

/** The MASS methods (store reads, synchronous on the host). */
export interface MassApi {
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

export const massFeature = defineFeature<MassApi>()({
  name: 'mass',
  payloads: {
    listEvolutions: NoPayload,
    getEvolution: z.strictObject({ evolutionId: Id }),
    getDesignDiff: z.strictObject({ evolutionId: Id, taskIndex: z.number().int().min(0), a: z.number().int().min(0), b: z.number().int().min(0) }),
    listOuterLoops: NoPayload,
    getOuterLoop: z.strictObject({ loopId: Id }),
  },
  handlers: ({ store }: { store: Store }) => ({
    listEvolutions: () => listEvolutions(store),
    getEvolution: ({ evolutionId }) => getEvolution(store, evolutionId),
    getDesignDiff: (payload) => getDesignDiff(store, payload),
    listOuterLoops: () => listOuterLoops(store),
    getOuterLoop: ({ loopId }) => getOuterLoop(store, loopId),
  }),
});

/** Every stored evolution with its settings and per-task champion. */
export function listEvolutions(store: Store): EvolutionSummary[] {
  return store.mass.evolutions().flatMap((id) => {
    const records = store.mass.list(id);
    const s = records.find((r) => r.kind === 'evolution' && r.key === 'settings')?.value as { dataset: string; rule: 'baseline' | 'direct'; iterations: number; tasks: unknown[] } | undefined;
    if (!s) return [];
    const champions = s.tasks.map((_, t) => {
      const res = records.find((r) => r.kind === 'result' && r.key === `t${t}`)?.value as { champion: number | null } | undefined;
      return res?.champion;
    });
    return [{ evolutionId: id, dataset: s.dataset, rule: s.rule, iterations: s.iterations, tasks: s.tasks.length, champions, records: records.length }];
  });
}

/** One evolution's timeline. Errors: ApiError `NOT_FOUND`. */
export function getEvolution(store: Store, evolutionId: string): EvolutionTimeline {
  return notFound(() => timelineOf(evolutionId, store.mass.list(evolutionId)), 'evolutionId');
}

/** The diff of two stored versions. Errors: ApiError `NOT_FOUND`. */
export function getDesignDiff(store: Store, p: GetDesignDiffPayload): DesignDiff {
  return notFound(() => designDiffOf(store.mass.list(p.evolutionId), p.taskIndex, p.a, p.b), 'evolutionId');
}

/** The stored outer loops (core/mass/outerRecords.ts). */
export function listOuterLoops(store: Store): OuterLoopSummary[] {
  return outerLoopsOf(store);
}

/** One outer loop's view. Errors: ApiError `NOT_FOUND`. */
export function getOuterLoop(store: Store, loopId: string): OuterLoopView {
  return notFound(() => outerLoopOf(loopId, store.mass.list(loopId)), 'loopId');
}

function notFound<T>(fn: () => T, field: string): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof MassError && err.code === 'NOT_FOUND') throw new ApiError('NOT_FOUND', err.message, undefined, field);
    throw err;
  }
}
