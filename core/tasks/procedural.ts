/**
 * What the procedural task families (core/tasks/learn.ts, core/tasks/learnDesign.ts) share: a
 * split's tasks made one by one from (split, index), loaded by offset and limit, and a seeded pick.
 */
import type { Rng } from '../random.ts';
import { DatasetError } from './errors.ts';
import type { LoadOptions, Task } from './types.ts';

/**
 * The tasks `opts` asks for of a procedural dataset: indices offset .. offset+limit (capped at the
 * split's size), each made by `taskAt(split, index)`.
 * @throws DatasetError UNKNOWN_SPLIT (naming the valid splits), BAD_OPTIONS (offset or limit not a non-negative integer).
 */
export function loadProcedural<S extends string>(name: string, sizes: Readonly<Record<S, number>>, opts: LoadOptions, taskAt: (split: S, index: number) => Task): Task[] {
  const splits = Object.keys(sizes) as S[];
  const split = opts.split as S;
  if (!splits.includes(split)) throw new DatasetError('UNKNOWN_SPLIT', `${name} has no split '${opts.split}'; valid splits: ${splits.join(', ')}`, opts.split);
  const offset = count('offset', opts.offset ?? 0);
  const limit = opts.limit === undefined ? Infinity : count('limit', opts.limit);
  const end = Math.min(sizes[split], offset + limit);
  const tasks: Task[] = [];
  for (let i = offset; i < end; i++) tasks.push(taskAt(split, i));
  return tasks;
}

function count(what: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new DatasetError('BAD_OPTIONS', `${what} must be a non-negative integer, got ${String(n)}`);
  return n;
}

/** One of `xs`, drawn with `r`. */
export function pick<T>(r: Rng, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}
