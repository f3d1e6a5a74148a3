/**
 * The Learning view's state: learning curves per role and the weight versions with their lineage. Loaded
 * together; an older load answering after a newer one is dropped. Each loop's held-out change is
 * `compareExperiments(before, after)`, what `flowlab compare <before> <after>` prints (paired by
 * task sample, bootstrap interval, sign test), fetched once per pair of evaluations as stored.
 */
import type { CompareView, HeldoutSide, LearningCurves, WeightVersionView } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface LearningSlice {
  learning: Loadable<LearningCurves>;
  weightVersions: Loadable<WeightVersionView[]>;
  /** The held-out change of a loop by `heldoutChangeKey(before, after)`. */
  heldoutChanges: Record<string, Loadable<CompareView>>;
  /** Fetches `compareExperiments {a: before, b: after}` unless this pair (with these run counts) is already loaded. */
  loadHeldoutChange(before: HeldoutSide, after: HeldoutSide): Promise<void>;
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

/** The key of a loop's held-out change: both experiments and their run counts (a resumed evaluation that gained runs is compared again). */
export const heldoutChangeKey = (before: HeldoutSide, after: HeldoutSide): string => `${before.experimentId}:${before.runs}→${after.experimentId}:${after.runs}`;

export function createLearningSlice({ api, set, get }: SliceContext): LearningSlice {
  let ticket = 0;
  return {
    learning: IDLE,
    weightVersions: IDLE,
    learningRole: '',
    heldoutChanges: {},

    async loadHeldoutChange(before, after) {
      const key = heldoutChangeKey(before, after);
      const known = get().heldoutChanges[key];
      if (known && known.status !== 'error') return;
      set({ heldoutChanges: { ...get().heldoutChanges, [key]: LOADING } });
      const view = await load(() => api.compareExperiments({ a: before.experimentId, b: after.experimentId }));
      set({ heldoutChanges: { ...get().heldoutChanges, [key]: view } });
    },

    async loadLearning() {
      const mine = ++ticket;
      if (get().learning.status !== 'ready') set({ learning: LOADING });
      if (get().weightVersions.status !== 'ready') set({ weightVersions: LOADING });
      const [learning, weightVersions] = await Promise.all([load(() => api.getLearningCurves()), load(() => api.listWeightVersions())]);
      if (mine !== ticket) return;
      set({ learning, weightVersions });
      // Each loop's held-out change (the newest loop of each role is what the view shows).
      if (learning.status === 'ready') {
        const pairs = learning.data.roles.flatMap((r) => r.loops.flatMap((l) => (l.before && l.after ? [[l.before, l.after] as const] : [])));
        await Promise.all(pairs.map(([b, a]) => get().loadHeldoutChange(b, a)));
      }
    },

    setLearningRole(role) {
      set({ learningRole: role });
    },
  };
}
