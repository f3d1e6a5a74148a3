/**
 * Forks from the Trace view (core/api fork.ts): the trace's run's parent link and forks, and
 * "Fork from here" — fork the run at the selected node run with an edited output or prompt, then
 * open the diff of the parent and the fork (the existing diff highlights the first divergence).
 */
import type { ForkRunRequest, ForkRunResult, RunForks } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface ForkSlice {
  /** The forks of the run they were loaded for. */
  runForks: Loadable<RunForks> & { runId?: string };
  /** The fork being run, or its outcome (null: none asked). */
  forking: Loadable<ForkRunResult> | null;
  loadForks(runId: string): Promise<void>;
  /** Forks, then reloads the run's forks and opens the diff of parent and fork. */
  forkFromHere(req: ForkRunRequest): Promise<void>;
  clearFork(): void;
}

declare module './types.ts' {
  interface LabState extends ForkSlice {}
}

export function createForkSlice({ api, set, get }: SliceContext): ForkSlice {
  return {
    runForks: IDLE,
    forking: null,

    async loadForks(runId) {
      if (get().runForks.runId !== runId) set({ runForks: { ...LOADING, runId } });
      const forks = await load(() => api.listForks({ runId }));
      if (get().selectedRunId === runId) set({ runForks: { ...forks, runId } });
    },

    async forkFromHere(req) {
      set({ forking: LOADING });
      const out = await load(() => api.forkRun(req));
      set({ forking: out });
      if (out.status !== 'ready') return;
      await get().loadForks(req.runId);
      await get().openDiff(req.runId, out.data.runId);
    },

    clearFork() {
      set({ forking: null });
    },
  };
}
