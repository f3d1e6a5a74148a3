/** The sequences of one llama.cpp context, handed out to concurrent generation calls. */
import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';
import { ModelError } from '../../core/model/index.ts';

/**
 * The fewest tokens a sequence must share with a prompt to count as holding its prefix. Every
 * prompt rendered with one chat template shares the template's opening (and often a first word
 * of the system text) with every other prompt; a share that short says nothing about the role,
 * and taking that sequence would overwrite the prefix another role keeps there.
 */
export const MIN_SHARED_PREFIX = 32;

/** The part of a context a pool needs (a fake in tests). */
export type SequenceSource = Pick<LlamaContext, 'sequencesLeft' | 'getSequence'>;
/** The part of a sequence a pool needs (a fake in tests). */
export type PooledSequence = Pick<LlamaContextSequence, 'compareContextTokens'>;

interface Waiter<S> {
  resolve: (s: S) => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

/**
 * Hands out a context's sequences: at most `size`, created on demand, FIFO waiting when all are
 * taken. A waiter whose signal aborts leaves the queue with `ABORTED`; `close(reason)` rejects
 * every waiter and every later `acquire` with `reason`.
 *
 * With prefix reuse (`acquire` given the prompt's tokens), a call's choice, in order:
 * 1. the free sequence sharing the longest prefix with the prompt, when it shares at least
 *    `MIN_SHARED_PREFIX` tokens (ties: the most recently released);
 * 2. otherwise, when a busy sequence's prompt shares at least half of this prompt (and
 *    `MIN_SHARED_PREFIX` tokens) more than the best free one, a wait for that sequence: no KV
 *    state can be copied between sequences in node-llama-cpp, so calls with one prefix (the same
 *    node sampled G times in a rollout group) chain on the sequence that holds it, each
 *    evaluating only what follows the shared part;
 * 3. otherwise a new sequence while fewer than `size` exist, else the least recently released
 *    free one (LRU), so the prefixes held for other roles stay for them;
 * 4. otherwise the next sequence released (FIFO).
 * A sequence released goes first to the calls waiting for it in particular (step 2), then to
 * the longest waiter.
 */
export class SequencePool<S extends PooledSequence = LlamaContextSequence> {
  /** Free sequences, least recently released first. */
  private readonly free: S[] = [];
  private readonly waiters: Waiter<S>[] = [];
  /** Calls waiting for one busy sequence (the one holding their prefix), FIFO per sequence. */
  private readonly targeted = new Map<S, Waiter<S>[]>();
  /** Busy sequences -> the prompt tokens of the call holding them. */
  private readonly busy = new Map<S, readonly Token[]>();
  private created = 0;
  private closedWith?: unknown;

  constructor(
    private readonly context: SequenceSource,
    private readonly size: number,
  ) {}

  /**
   * A sequence for a call: without `tokens`, a free one, a new one (while fewer than `size`
   * exist), or the next one released; with `tokens` (the prompt as fed, prefix reuse), chosen as
   * the class documents.
   * @throws ModelError `ABORTED` (naming `ref`) when `signal` aborts while waiting; the close reason once closed.
   */
  acquire(signal: AbortSignal | undefined, ref: string, tokens?: readonly Token[]): Promise<S> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (!tokens) {
      const ready = this.free.pop() ?? this.create();
      return ready ? Promise.resolve(this.take(ready)) : this.wait(this.waiters, signal, ref);
    }
    // LlamaCompletion always evaluates the prompt's last token, so at most n - 1 are reused.
    const cap = Math.max(0, tokens.length - 1);
    const need = Math.min(MIN_SHARED_PREFIX, cap);
    let best = -1;
    let bestScore = 0;
    for (let i = this.free.length - 1; i >= 0; i--) {
      const score = Math.min(this.free[i]!.compareContextTokens(tokens as Token[]).firstDifferentIndex, cap);
      if (score > bestScore) [best, bestScore] = [i, score];
    }
    if (best >= 0 && bestScore >= need && need > 0) return Promise.resolve(this.take(this.free.splice(best, 1)[0]!, tokens));

    let holder: S | undefined;
    let holderScore = 0;
    for (const [s, prompt] of this.busy) {
      const score = Math.min(sharedPrefix(prompt, tokens), cap);
      if (score > holderScore) [holder, holderScore] = [s, score];
    }
    if (holder && holderScore - bestScore >= Math.max(MIN_SHARED_PREFIX, tokens.length / 2)) {
      let queue = this.targeted.get(holder);
      if (!queue) this.targeted.set(holder, (queue = []));
      return this.wait(queue, signal, ref, tokens);
    }

    const ready = this.create() ?? this.free.shift();
    return ready ? Promise.resolve(this.take(ready, tokens)) : this.wait(this.waiters, signal, ref, tokens);
  }

  /** Gives `sequence` to the first call waiting for it in particular, else the longest waiter, else back to the free list. */
  release(sequence: S): void {
    this.busy.delete(sequence);
    const queue = this.targeted.get(sequence);
    const next = queue?.shift() ?? this.waiters.shift();
    if (queue && queue.length === 0) this.targeted.delete(sequence);
    if (next) {
      next.cleanup();
      next.resolve(sequence);
    } else {
      this.free.push(sequence);
    }
  }

  /** Rejects every waiter, and every later `acquire`, with `reason`. */
  close(reason: unknown): void {
    this.closedWith = reason;
    const all = [...this.waiters.splice(0), ...[...this.targeted.values()].flat()];
    this.targeted.clear();
    for (const w of all) {
      w.cleanup();
      w.reject(reason);
    }
  }

  private create(): S | undefined {
    if (this.created >= this.size || this.context.sequencesLeft <= 0) return undefined;
    this.created++;
    return this.context.getSequence() as unknown as S;
  }

  private take(sequence: S, tokens?: readonly Token[]): S {
    this.busy.set(sequence, tokens ?? []);
    return sequence;
  }

  private wait(queue: Waiter<S>[], signal: AbortSignal | undefined, ref: string, tokens?: readonly Token[]): Promise<S> {
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        reject(new ModelError('ABORTED', `Generation (ref "${ref}") was aborted while waiting for a free sequence`, ref, {
          cause: signal?.reason,
        }));
      };
      const waiter: Waiter<S> = {
        resolve: (s) => resolve(this.take(s, tokens)),
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
    });
  }
}

/** How many leading tokens `a` and `b` share. */
function sharedPrefix(a: readonly Token[], b: readonly Token[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
