/**
 * Many pieces of work in flight, their results committed in id order: the loop under every
 * command that runs tasks, runs or judge calls in parallel. Work `i` may finish before work
 * `i - 1`; its result waits, and `commit` sees results strictly in the order of `items`, one at a
 * time, so what is stored (and in which order, and under which ids) is the same at any width —
 * the rule of STYLE.md item 18 ("order by ids and indices, never by completion time").
 */
import type { Lane } from './scheduler.ts';

/** Options of {@link runOrdered}. */
export interface OrderedOptions<T, R> {
  /** The work, in id order. */
  items: readonly T[];
  /** Where the work runs (its width bounds the work in flight; the scheduler's budget bounds all lanes). */
  lane: Lane;
  /**
   * Computes item `i`'s result. Must not store anything: storing is `commit`'s — unless the work
   * stores as it ends (a MASS step is a whole stored experiment): then it awaits `turn()` just
   * before it writes, which resolves once every earlier item is committed, so its rows still land
   * in item order. `turn()` rejects (an `AbortError`) when the loop stops before the item's turn
   * (an earlier error, a commit returning false): the work must then store nothing.
   */
  run: (item: T, index: number, turn: () => Promise<void>) => Promise<R>;
  /**
   * Stores item `i`'s result; called in item order, one at a time, after every earlier item's.
   * Return `false` to stop: nothing after this item is committed, queued work is dropped.
   */
  commit: (result: R, item: T, index: number) => Promise<boolean | void> | boolean | void;
  /**
   * Most items started and not yet committed (bounds the results held in memory). Default: four
   * times the lane's width. `1` runs each item only after the one before it is committed (work
   * whose input depends on what the previous commit stored, e.g. online distillation).
   */
  window?: number;
  /** Stops starting new work once aborted; work in flight is awaited and committed in order as usual. */
  signal?: AbortSignal;
}

/** What {@link runOrdered} did. */
export interface OrderedOutcome {
  /** Items committed (a prefix of `items`). */
  committed: number;
  /** `commit` returned false. */
  stopped: boolean;
  /** The signal aborted before every item was started. */
  aborted: boolean;
}

/**
 * Runs `items` through `lane` and commits their results in order (see the module comment).
 * Returns once every started piece of work has settled — nothing runs on after it returns.
 * @throws the first error (in item order) of `run` or of `commit`, after the work in flight settled;
 *   the items before it are committed, none after.
 */
export async function runOrdered<T, R>(opts: OrderedOptions<T, R>): Promise<OrderedOutcome> {
  const { items, lane, signal } = opts;
  const window = Math.max(1, opts.window ?? 4 * lane.width);
  type Settled = { skipped: true } | { skipped: false; value: R } | { error: unknown };
  const started: Array<Promise<Settled>> = [];
  let committed = 0;
  let stopped = false;
  let halted = false;
  let aborted = false;
  let failure: { error: unknown } | undefined;
  /** Items waiting for their turn (all earlier items committed), by index. */
  const waiting = new Map<number, { resolve: () => void; reject: (e: unknown) => void }>();
  const turnOf = (i: number) => (): Promise<void> => {
    if (committed >= i) return Promise.resolve();
    if (stopped) return Promise.reject(notYourTurn(i));
    return new Promise<void>((resolve, reject) => waiting.set(i, { resolve, reject }));
  };
  const launch = () => {
    while (!stopped && started.length < items.length && started.length < committed + window) {
      if (signal?.aborted) {
        aborted = true;
        return;
      }
      const i = started.length;
      started.push(lane.submit(() => opts.run(items[i]!, i, turnOf(i))).catch((error: unknown) => ({ error })));
    }
  };
  try {
    launch();
    while (committed < started.length && !stopped) {
      const settled = await started[committed]!;
      if ('error' in settled) {
        failure = settled;
        break;
      }
      if (settled.skipped) break;
      let keep: boolean | void;
      try {
        keep = await opts.commit(settled.value, items[committed]!, committed);
      } catch (error) {
        failure = { error };
        break;
      }
      started[committed] = DONE; // the result is stored: let it go
      committed++;
      if (keep === false) stopped = halted = true;
      else {
        const next = waiting.get(committed);
        waiting.delete(committed);
        next?.resolve();
        launch();
      }
    }
  } finally {
    stopped = true;
    lane.dropQueued();
    for (const [i, w] of waiting) w.reject(notYourTurn(i));
    waiting.clear();
    await Promise.all(started);
  }
  if (failure) throw failure.error;
  return { committed, stopped: halted, aborted };
}

const notYourTurn = (i: number) => new DOMException(`item ${i} was not stored: the work before it stopped`, 'AbortError');

const DONE: Promise<{ skipped: true }> = Promise.resolve({ skipped: true });
