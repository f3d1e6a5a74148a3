/**
 * The run diff opened from the Trace view: which two runs (A is the trace's run), the aligned
 * diff from the API, and the aligned node run whose differences are open. A late answer for a
 * pair the user already left is dropped.
 */
import type { RunDiffView } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface DiffSlice {
  /** The two runs diffed (A first), or null. */
  diffPair: { a: string; b: string } | null;
  runDiff: Loadable<RunDiffView>;
  /** The aligned node run open in the detail (index into `diff.nodes`); null: the first divergence's. */
  diffNode: number | null;
  /** Diffs run `a` with run `b`. */
  openDiff(a: string, b: string): Promise<void>;
  /** Back to the trace. */
  closeDiff(): void;
  selectDiffNode(index: number | null): void;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends DiffSlice {}
}

export function createDiffSlice({ api, set, get }: SliceContext): DiffSlice {
  return {
    diffPair: null,
    runDiff: IDLE,
    diffNode: null,

    async openDiff(a, b) {
      set({ diffPair: { a, b }, runDiff: LOADING, diffNode: null });
      const runDiff = await load(() => api.diffRuns({ a, b }));
      const pair = get().diffPair;
      if (pair?.a === a && pair.b === b) set({ runDiff });
    },

    closeDiff() {
      set({ diffPair: null, runDiff: IDLE, diffNode: null });
    },

    selectDiffNode(index) {
      set({ diffNode: index });
    },
  };
}
