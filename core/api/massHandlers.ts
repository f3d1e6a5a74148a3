/** The store reads behind the MASS methods (mass.ts has the types). */
import { designDiffOf, MassError, outerLoopOf, outerLoopsOf, timelineOf, type DesignDiff, type EvolutionTimeline, type OuterLoopSummary, type OuterLoopView } from '../mass/index.ts';
import type { Store } from '../store/index.ts';
import { ApiError } from './errors.ts';
import type { EvolutionSummary, GetDesignDiffPayload } from './mass.ts';

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
