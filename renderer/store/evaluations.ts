/**
 * The evaluations the CLI prints, for the views (issue 29, "every evaluation the CLI prints, in
 * the window"): a blame evaluation's report (`getBlameEval`, what `flowlab blame-eval --json`
 * prints); per-role trends across experiments (`getRoleTrends`: mean ladder reward and runs blamed,
 * the `h reward` and `blamed` columns `flowlab show <experiment-id>` prints per role). Latest wins:
 * opening another experiment while one loads drops the older answer.
 */
import type { BlameEvalView, RoleTrends } from '../../core/api/client.ts';
import { IDLE, latestLoader, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface EvaluationsSlice {
  /** The blame evaluation shown in the Experiments view's evaluation panel (idle: none chosen). */
  blameEval: Loadable<BlameEvalView>;
  /** The experiment whose blame evaluation is shown, or null. */
  blameEvalId: string | null;
  /** Shows `experimentId`'s blame evaluation (null: closes the panel). */
  openBlameEval(experimentId: string | null): Promise<void>;
  /** Per role, across experiments (the Ladder view's trends). */
  roleTrends: Loadable<RoleTrends>;
  /** Reads the trends again. */
  loadRoleTrends(): Promise<void>;
}

declare module './types.ts' {
  interface LabState extends EvaluationsSlice {}
}

export function createEvaluationsSlice({ api, set, get }: SliceContext): EvaluationsSlice {
  const loader = latestLoader(() => get().blameEval, (blameEval) => set({ blameEval }));
  const trends = latestLoader(() => get().roleTrends, (roleTrends) => set({ roleTrends }));
  return {
    roleTrends: IDLE,
    async loadRoleTrends() {
      await trends(() => api.getRoleTrends());
    },
    blameEval: IDLE,
    blameEvalId: null,
    async openBlameEval(experimentId) {
      if (experimentId === null) {
        set({ blameEvalId: null, blameEval: IDLE });
        return;
      }
      // Another experiment: blank the old report rather than show it under the new id.
      if (experimentId !== get().blameEvalId) set({ blameEval: IDLE });
      set({ blameEvalId: experimentId });
      await loader(() => api.getBlameEval({ experimentId }));
    },
  };
}
