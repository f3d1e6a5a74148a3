/**
 * The outer loop's champion per task from a stored inner loop (`flowlab evolve`, core/mass/inner.ts):
 * the design that won task t of the evolution (its `result` record), or the bare task when no
 * version beat the baseline. The task must be the one the evolution ran at that index.
 */
import type { Store } from '../store/index.ts';
import type { Task } from '../tasks/types.ts';
import { MassError } from './errors.ts';
import { storedDesign } from './timeline.ts';
import type { MassDesign } from './types.ts';

/** Errors: MassError `NOT_FOUND` (no result for the task in that evolution), `MISMATCH` (it ran another task). */
export function championOf(store: Store, evolutionId: string, taskIndex: number, task: Task): { design: MassDesign | null; version: number | null } {
  const rec = store.mass.get(evolutionId, 'result', `t${taskIndex}`);
  if (!rec) throw new MassError('NOT_FOUND', `evolution ${evolutionId} has no result for task ${taskIndex} (${task.id}); run flowlab evolve on it first`, { field: 'champions' });
  const result = rec.value as { taskId?: string; champion?: number | null };
  if (result.taskId !== undefined && result.taskId !== task.id) throw new MassError('MISMATCH', `evolution ${evolutionId} ran ${result.taskId} as task ${taskIndex}, not ${task.id}`, { field: 'champions' });
  const v = result.champion ?? null;
  return v === null ? { design: null, version: null } : { design: storedDesign(store.mass.list(evolutionId), taskIndex, v), version: v };
}
