/**
 * A train loop's live progress folded from its pushed `TrainLoopEvent`s (core/api/trainLoop.ts)
 * (pure): status, iterations done, the rollouts of the iteration in flight, each finished
 * iteration's score and the held-out scores before and after.
 */
import type { TrainLoopEvent } from '../../core/api/client.ts';

export interface LoopIterationPoint {
  iteration: number;
  experimentId: string;
  /** Mean grader score of the iteration's rollouts, 0..1. */
  score: number;
  /** Versions written this iteration, by role. */
  versions: Record<string, string>;
}

export interface LoopProgress {
  loopId: string;
  status: 'starting' | 'running' | 'completed' | 'cancelled' | 'failed';
  roles: string[];
  /** Iterations finished, of `iterations` planned (0 until the loop's first event). */
  done: number;
  iterations: number;
  /** Rollouts stored of the iteration in flight, of its total; null between iterations. */
  rollouts: { iteration: number; done: number; total: number } | null;
  points: LoopIterationPoint[];
  heldout: { before?: number; after?: number };
  message?: string;
}

/** A loop just started from this window (before its first event). */
export function startLoopProgress(loopId: string, iterations = 0): LoopProgress {
  return { loopId, status: 'starting', roles: [], done: 0, iterations, rollouts: null, points: [], heldout: {} };
}

/** Whether the loop has ended. */
export function loopFinished(p: LoopProgress | undefined | null): boolean {
  return !!p && (p.status === 'completed' || p.status === 'cancelled' || p.status === 'failed');
}

/** Applies one event of this loop (events of other loops are ignored). Never mutates `p`. */
export function applyLoopEvent(p: LoopProgress, e: TrainLoopEvent): LoopProgress {
  if (e.loopId !== p.loopId) return p;
  switch (e.type) {
    case 'trainLoop':
      return { ...p, status: e.status, roles: e.roles, done: e.done, iterations: e.iterations, ...(e.message !== undefined && { message: e.message }), ...(e.status !== 'running' && { rollouts: null }) };
    case 'trainRollout':
      return { ...p, status: loopFinished(p) ? p.status : 'running', rollouts: { iteration: e.iteration, done: e.done, total: e.total } };
    case 'trainIteration': {
      const versions = Object.fromEntries(Object.entries(e.roles).flatMap(([role, m]) => (m.versionId ? [[role, m.versionId]] : [])));
      const points = [...p.points.filter((x) => x.iteration !== e.iteration), { iteration: e.iteration, experimentId: e.experimentId, score: e.score, versions }].sort((a, b) => a.iteration - b.iteration);
      return { ...p, points, done: Math.max(p.done, e.iteration), rollouts: null };
    }
    case 'trainHeldout':
      return { ...p, heldout: { ...p.heldout, [e.phase]: e.score } };
  }
}

/** One line for the loop: `iteration 2 of 3 · rollouts 3/4` / `completed 3 of 3 · held-out 0.10 → 0.25`. */
export function loopLine(p: LoopProgress): string {
  const parts: string[] = [`${p.status === 'starting' ? 'starting' : p.status}: ${p.done} of ${p.iterations || '?'} iterations`];
  if (p.rollouts) parts.push(`iteration ${p.rollouts.iteration} rollouts ${p.rollouts.done}/${p.rollouts.total}`);
  const last = p.points.at(-1);
  if (last) parts.push(`last score ${last.score.toFixed(2)}`);
  if (p.heldout.before !== undefined) parts.push(`held-out ${p.heldout.before.toFixed(2)}${p.heldout.after !== undefined ? ` → ${p.heldout.after.toFixed(2)}` : ''}`);
  if (p.message) parts.push(p.message);
  return parts.join(' · ');
}
