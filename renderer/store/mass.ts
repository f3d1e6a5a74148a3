/**
 * The MASS view's state: the stored evolutions, the chosen one's champion timeline, and the
 * design diff between two of its versions; the stored outer loops and the chosen one's rankings,
 * quarantine and cycle comparison. Latest-wins loads: an older answer arriving after a
 * newer request is dropped.
 */
import type { DesignDiff, EvolutionSummary, EvolutionTimeline, OuterLoopSummary, OuterLoopView } from '../../core/api/client.ts';
import { IDLE, latestLoader, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface MassSlice {
  evolutions: Loadable<EvolutionSummary[]>;
  /** The evolution shown ('' = the newest). */
  massEvolutionId: string;
  evolution: Loadable<EvolutionTimeline>;
  /** The diff shown: task, from version, to version. */
  massDiffPick: { taskIndex: number; a: number; b: number } | null;
  designDiff: Loadable<DesignDiff>;
  /** Loads the list, then the chosen (or newest) evolution's timeline. */
  loadMass(): Promise<void>;
  selectEvolution(id: string): Promise<void>;
  loadDesignDiff(taskIndex: number, a: number, b: number): Promise<void>;
  outerLoops: Loadable<OuterLoopSummary[]>;
  /** The outer loop shown ('' = the newest). */
  massOuterId: string;
  outerLoop: Loadable<OuterLoopView>;
  selectOuterLoop(id: string): Promise<void>;
}

declare module './types.ts' {
  interface LabState extends MassSlice {}
}

export function createMassSlice({ api, set, get }: SliceContext): MassSlice {
  const listLoader = latestLoader(() => get().evolutions, (evolutions) => set({ evolutions }));
  const timelineLoader = latestLoader(() => get().evolution, (evolution) => set({ evolution }));
  const diffLoader = latestLoader(() => get().designDiff, (designDiff) => set({ designDiff }));
  const outerListLoader = latestLoader(() => get().outerLoops, (outerLoops) => set({ outerLoops }));
  const outerLoader = latestLoader(() => get().outerLoop, (outerLoop) => set({ outerLoop }));
  const loadInner = async () => {
    const list = await listLoader(() => api.listEvolutions());
    if (!list || list.status !== 'ready' || !list.data.length) return;
    const id = get().massEvolutionId || list.data[list.data.length - 1]!.evolutionId;
    await timelineLoader(() => api.getEvolution({ evolutionId: id }));
  };
  const loadOuter = async () => {
    const list = await outerListLoader(() => api.listOuterLoops());
    if (!list || list.status !== 'ready' || !list.data.length) return;
    const id = get().massOuterId || list.data[list.data.length - 1]!.loopId;
    await outerLoader(() => api.getOuterLoop({ loopId: id }));
  };
  return {
    evolutions: IDLE,
    massEvolutionId: '',
    evolution: IDLE,
    massDiffPick: null,
    designDiff: IDLE,
    outerLoops: IDLE,
    massOuterId: '',
    outerLoop: IDLE,

    async loadMass() {
      await Promise.all([loadInner(), loadOuter()]);
    },

    async selectOuterLoop(id) {
      set({ massOuterId: id, outerLoop: IDLE });
      await outerLoader(() => api.getOuterLoop({ loopId: id }));
    },

    async selectEvolution(id) {
      set({ massEvolutionId: id, massDiffPick: null, designDiff: IDLE, evolution: IDLE });
      await timelineLoader(() => api.getEvolution({ evolutionId: id }));
    },

    async loadDesignDiff(taskIndex, a, b) {
      const evo = get().evolution;
      if (evo.status !== 'ready') return;
      set({ massDiffPick: { taskIndex, a, b } });
      await diffLoader(() => api.getDesignDiff({ evolutionId: evo.data.evolutionId, taskIndex, a, b }));
    },
  };
}
