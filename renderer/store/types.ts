/** What every slice of the lab store is built from. */
import type { StoreApi } from 'zustand/vanilla';
import type { LabClient } from '../client.ts';

/** Side effects the store needs from its host page, injected so tests can drive them. */
export interface StoreDeps {
  /** Runs `fn` before the next paint (the browser: requestAnimationFrame). */
  schedule(fn: () => void): void;
  /** Runs `fn` after `ms`; returns a cancel function (the browser: setTimeout). */
  delay(fn: () => void, ms: number): () => void;
  /** Whether the system prefers a dark theme (initial theme). */
  prefersDark: boolean;
}

/**
 * What the views show, and the actions that change it: the fields of every slice. Each slice
 * file adds its own interface here by declaration merging (`declare module './types.ts'`), so
 * this file imports no slice and the slices never import state.ts (no import cycle).
 */
export interface LabState {}

export interface SliceContext {
  api: LabClient;
  deps: StoreDeps;
  set: StoreApi<LabState>['setState'];
  get: () => LabState;
}

/** Defaults outside a browser: flush at once, timers via setTimeout, light theme. */
export const NODE_DEPS: StoreDeps = {
  schedule: (fn) => fn(),
  delay: (fn, ms) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
  prefersDark: false,
};
