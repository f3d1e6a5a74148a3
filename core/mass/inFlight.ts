/**
 * MASS steps in flight (issue 26): the outer loop's champion runs, its tournament's judge pairs
 * and its audit's swapped pairs, rsi's held-out runs and judgments, and evolve's tasks are each a
 * list of independent steps, run here up to `parallel` at a time.
 *
 * Results do not depend on `parallel` (STYLE.md item 18; docs/scale.md): the steps start in item
 * order (so their experiments are created in that order), each step stores its run only once
 * every earlier step is stored (core/schedule runOrdered's `turn`, passed to the step as
 * `beforeSave` and awaited by core/pipeline executePending before its one transaction), and
 * `onDone` sees the results in item order. Seeds and ids are the caller's, derived from the
 * item, never from completion order.
 *
 * Where the slots come from: like a study's cells (core/studies/run.ts), the steps are ordered by
 * a lane of a scheduler of their own, `parallel` wide; each step's model work is an experiment of
 * its own whose run takes a slot of the process's one scheduler (core/schedule processScheduler,
 * through executePending), so the lab's global budget and its fairness hold over MASS jobs and
 * experiments alike, and an outer lane can never hold every global slot its own steps wait for.
 */
import { setMaxListeners } from 'node:events';
import { MAX_PARALLEL } from '../limits.ts';
import { defaultParallel, runOrdered, Scheduler } from '../schedule/index.ts';

/** How steps run. */
export interface InFlightOptions {
  /** Steps in flight at once (default 1: one after another, each started after the one before it is stored). */
  parallel?: number;
  /** The ordering lane's label (for progress views): the loop and what its steps are. */
  label: string;
  /** Stops starting steps once aborted; the ones started are awaited and their results kept in order. */
  signal?: AbortSignal;
}

/**
 * Runs `step` on every item, up to `o.parallel` at a time (see the module comment), and returns
 * the results in item order: all of them, or the prefix before `o.signal` aborted. `step` gets
 * `beforeSave`, to pass to the step's runMass / judgePair / optimize, which await it before
 * storing. `onDone` is called with each result in item order, after every earlier one.
 * @throws the first error in item order (a step's, or `onDone`'s), after the steps in flight
 *   settled; the steps after it store nothing.
 */
export async function stepsInFlight<T, R>(
  items: readonly T[],
  o: InFlightOptions,
  step: (item: T, index: number, beforeSave: () => Promise<void>) => Promise<R>,
  onDone?: (result: R, index: number) => void | Promise<void>,
): Promise<R[]> {
  const width = Math.max(1, Math.min(o.parallel ?? 1, items.length, MAX_PARALLEL));
  const out: R[] = [];
  if (!items.length) return out;
  // Each step in flight (and each of its running nodes) listens on the shared cancel signal.
  if (o.signal && width > 1) setMaxListeners(16 * width, o.signal);
  const lane = new Scheduler({ capacity: width }).lane(o.label, width);
  try {
    await runOrdered({
      items, lane, ...(o.signal && { signal: o.signal }), ...(width === 1 && { window: 1 }),
      run: (item, i, turn) => step(item, i, turn),
      commit: async (r, _item, i) => {
        out.push(r);
        await onDone?.(r, i);
      },
    });
  } finally {
    lane.close();
  }
  return out;
}

/**
 * The steps in flight of a loop on `model` when no `parallel` is given: as an experiment's
 * default (core/schedule defaultParallel): three times an OpenAI-compatible server's summed concurrency, 1
 * for a local GGUF file.
 */
export function defaultStepsInFlight(model: string): number {
  return defaultParallel({ models: { default: model }, roleModels: {} }).parallel;
}
