/** The sequences of one llama.cpp context, handed out to concurrent generation calls. */
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';
import { ModelError } from '../../core/model/index.ts';

/**
 * Hands out a context's sequences: at most `size`, created on demand, FIFO waiting when all are
 * taken. A waiter whose signal aborts leaves the queue with `ABORTED`; `close(reason)` rejects
 * every waiter and every later `acquire` with `reason`.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiters: {
    resolve: (s: LlamaContextSequence) => void;
    reject: (e: unknown) => void;
    cleanup: () => void;
  }[] = [];
  private created = 0;
  private closedWith?: unknown;

  constructor(
    private readonly context: LlamaContext,
    private readonly size: number,
  ) {}

  /**
   * A free sequence, a new one (while fewer than `size` exist), or the next one released.
   * With `prefer` (prefix reuse), the free sequence it scores highest, when it scores above 0
   * (a shared prefix), beats creating a new one; ties go to the most recently released.
   * @throws ModelError `ABORTED` (naming `ref`) when `signal` aborts while waiting; the close reason once closed.
   */
  acquire(signal: AbortSignal | undefined, ref: string, prefer?: (sequence: LlamaContextSequence) => number): Promise<LlamaContextSequence> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (prefer && this.free.length > 0) {
      let best = -1;
      let bestScore = 0;
      for (let i = this.free.length - 1; i >= 0; i--) {
        const score = prefer(this.free[i]!);
        if (score > bestScore) {
          best = i;
          bestScore = score;
        }
      }
      if (best >= 0) return Promise.resolve(this.free.splice(best, 1)[0]!);
    }
    if (prefer && this.created < this.size && this.context.sequencesLeft > 0) {
      this.created++;
      return Promise.resolve(this.context.getSequence());
    }
    const ready = this.free.pop();
    if (ready) return Promise.resolve(ready);
    if (this.created < this.size && this.context.sequencesLeft > 0) {
      this.created++;
      return Promise.resolve(this.context.getSequence());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new ModelError('ABORTED', `Generation (ref "${ref}") was aborted while waiting for a free sequence`, ref, {
          cause: signal?.reason,
        }));
      };
      const waiter = {
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Gives `sequence` to the longest waiter, or back to the free list. */
  release(sequence: LlamaContextSequence): void {
    const next = this.waiters.shift();
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
    for (const w of this.waiters.splice(0)) {
      w.cleanup();
      w.reject(reason);
    }
  }
}
