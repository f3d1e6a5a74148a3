/**
 * The endpoints of one model reference: each with a concurrency limit (a slot per request in
 * flight, FIFO waiting beyond it), and calls spread by least outstanding requests (in flight plus
 * waiting), ties to the endpoint listed first — the "least outstanding requests" rule of load
 * balancers (e.g. AWS Application Load Balancer's `least_outstanding_requests` algorithm).
 */
import { ModelError, type EndpointSpec } from '../../core/model/index.ts';

/** One endpoint's state. */
interface Slot {
  spec: EndpointSpec;
  active: number;
  waiting: Array<{ grant: () => void; cancel: (e: Error) => void }>;
}

/** A slot held on one endpoint; `release()` it when the request ends (idempotent). */
export interface Lease {
  spec: EndpointSpec;
  release(): void;
}

export class EndpointPool {
  private readonly slots: Slot[];

  constructor(specs: readonly EndpointSpec[]) {
    this.slots = specs.map((spec) => ({ spec, active: 0, waiting: [] }));
  }

  /** Requests outstanding (in flight + waiting) per endpoint, in the order given. */
  outstanding(): number[] {
    return this.slots.map((s) => s.active + s.waiting.length);
  }

  /**
   * A slot on the endpoint with the fewest outstanding requests, waiting while it is at its
   * concurrency limit. @throws ModelError `ABORTED` when `signal` aborts while waiting.
   */
  acquire(signal: AbortSignal | undefined, ref: string): Promise<Lease> {
    let best = this.slots[0]!;
    for (const s of this.slots) if (s.active + s.waiting.length < best.active + best.waiting.length) best = s;
    const slot = best;
    const lease = (): Lease => {
      let held = true;
      return {
        spec: slot.spec,
        release: () => {
          if (!held) return;
          held = false;
          slot.active--;
          const next = slot.waiting.shift();
          if (next) next.grant();
        },
      };
    };
    if (slot.active < slot.spec.concurrency && slot.waiting.length === 0) {
      slot.active++;
      return Promise.resolve(lease());
    }
    return new Promise<Lease>((resolve, reject) => {
      const onAbort = () => entry.cancel(new ModelError('ABORTED', `call (ref "${ref}") was aborted while waiting for ${slot.spec.baseUrl}`, ref, { cause: signal?.reason }));
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          slot.active++;
          resolve(lease());
        },
        cancel: (e: Error) => {
          signal?.removeEventListener('abort', onAbort);
          const i = slot.waiting.indexOf(entry);
          if (i >= 0) slot.waiting.splice(i, 1);
          reject(e);
        },
      };
      slot.waiting.push(entry);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Rejects every waiting request with `error` (dispose). */
  cancelWaiting(error: Error): void {
    for (const s of this.slots) for (const w of [...s.waiting]) w.cancel(error);
  }
}
