/**
 * The Learning view's state: learning curves per role and the weight versions with their lineage. Loaded
 * together; an older load answering after a newer one is dropped.
 */
import type { LearningCurves, WeightVersionView } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface LearningSlice {
  learning: Loadable<LearningCurves>;
  weightVersions: Loadable<WeightVersionView[]>;
  /** The role shown ('' = the first). */
  learningRole: string;
  /** Loads curves and versions (keeps what is shown while reloading). */
  loadLearning(): Promise<void>;
  setLearningRole(role: string): void;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends LearningSlice {}
}

export function createLearningSlice({ api, set, get }: SliceContext): LearningSlice {
  let ticket = 0;
  return {
    learning: IDLE,
    weightVersions: IDLE,
    learningRole: '',

    async loadLearning() {
      const mine = ++ticket;
      if (get().learning.status !== 'ready') set({ learning: LOADING });
      if (get().weightVersions.status !== 'ready') set({ weightVersions: LOADING });
      const [learning, weightVersions] = await Promise.all([load(() => api.getLearningCurves()), load(() => api.listWeightVersions())]);
      if (mine !== ticket) return;
      set({ learning, weightVersions });
    },

    setLearningRole(role) {
      set({ learningRole: role });
    },
  };
}
