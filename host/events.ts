import type { LabEvent, Subscribe } from '../core/api/index.ts';

/** A fan-out of `LabEvent`s to any number of listeners (SSE clients, a window, tests). */
export interface EventHub {
  /** Delivers `event` to every current listener, in subscription order. A throwing listener is skipped, not fatal. */
  emit(event: LabEvent): void;
  subscribe: Subscribe;
  /** Number of current listeners. */
  readonly size: number;
}

/** Creates an empty hub. */
export function createEventHub(): EventHub {
  const listeners = new Set<(event: LabEvent) => void>();
  return {
    emit(event) {
      for (const listener of [...listeners]) {
        try {
          listener(event);
        } catch {
          // one broken listener must not stop the others (or the run that emitted)
        }
      }
    },
    subscribe(listener) {
      const own = (e: LabEvent) => listener(e);
      listeners.add(own);
      return () => {
        listeners.delete(own);
      };
    },
    get size() {
      return listeners.size;
    },
  };
}
