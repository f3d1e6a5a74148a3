/**
 * Abort signals of generation calls: one listener on a caller's signal however many calls share
 * it, and the `ABORTED` check made before any work.
 */
import { ModelError } from '../../core/model/index.ts';

/** Per-call signals that follow one caller signal, through a single listener on it. */
const linkedSignals = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * A per-call signal that aborts (with the parent's reason) when `parent` does. Every link to one
 * parent shares a single `abort` listener on it: a rollout group runs G calls under one signal,
 * node-llama-cpp adds listeners per call, and Node warns past 10 listeners on one target.
 * Call `release()` when the call ends, so the parent no longer holds the child.
 */
export function linkSignal(parent: AbortSignal): { signal: AbortSignal; release: () => void } {
  const child = new AbortController();
  if (parent.aborted) {
    child.abort(parent.reason);
    return { signal: child.signal, release: () => {} };
  }
  let children = linkedSignals.get(parent);
  if (!children) {
    const set = new Set<AbortController>();
    children = set;
    linkedSignals.set(parent, set);
    parent.addEventListener(
      'abort',
      () => {
        for (const c of set) c.abort(parent.reason);
        set.clear();
      },
      { once: true },
    );
  }
  children.add(child);
  const set = children;
  return { signal: child.signal, release: () => set.delete(child) };
}

/** @throws ModelError `ABORTED` (naming `ref`, the signal's reason as cause) when `signal` is aborted. */
export function throwIfAborted(signal: AbortSignal | undefined, ref: string): void {
  if (signal?.aborted) {
    throw new ModelError('ABORTED', `Generation (ref "${ref}") was aborted`, ref, { cause: signal.reason });
  }
}
