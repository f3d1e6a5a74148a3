/**
 * The MASS view's state: the stored evolutions, the chosen one's champion timeline, and the
 * design diff between two of its versions; the stored outer loops and the chosen one's rankings,
 * quarantine and cycle comparison. Latest-wins loads: an older answer arriving after a
 * newer request is dropped. And the MASS job started from the tab (evolve, rank, rsi): its
 * status, progress lines and count from the pushed `MassJobEvent`s, and its cancel; when it
 * ends, the lists are loaded again with its evolution or loop shown.
 */
import type { DesignDiff, EvolutionSummary, EvolutionTimeline, LabEvent, MassJobEvent, MassJobKind, OuterLoopSummary, OuterLoopView, StartEvolveRequest, StartRankRequest, StartRsiRequest } from '../../core/api/client.ts';
import { errorMessage } from '../../core/api/client.ts';
import { followJob, withProgress } from './jobFollow.ts';
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
  /** The job started from the tab (null: none yet). */
  massJob: MassJob | null;
  /** Why the last start was refused (the API error's message), or null. */
  massJobError: string | null;
  startMassJob(start: MassJobStart): Promise<void>;
  cancelMassJob(): Promise<void>;
  /** Folds a pushed event of the job into `massJob` (other events are ignored). */
  receiveMass(event: LabEvent): void;
}

/** What the start form sends: one of the three requests. */
export type MassJobStart = { job: 'evolve'; request: StartEvolveRequest } | { job: 'rank'; request: StartRankRequest } | { job: 'rsi'; request: StartRsiRequest };

export interface MassJob {
  jobId: string;
  job: MassJobKind;
  status: 'starting' | 'running' | 'completed' | 'cancelled' | 'failed';
  /** The latest progress lines, oldest first (at most MASS_JOB_LINES). */
  lines: string[];
  done?: number;
  total?: number;
  message?: string;
}

/** Progress lines kept for the view. */
export const MASS_JOB_LINES = 12;

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
  const fold = (job: MassJob, e: MassJobEvent): MassJob => {
    if (e.type === 'massJob') return { ...job, status: e.status, ...(e.message !== undefined && { message: e.message }) };
    return withProgress(job, e, MASS_JOB_LINES);
  };
  const ended = (s: MassJob['status']) => s === 'completed' || s === 'cancelled' || s === 'failed';
  const afterEnd = async (job: MassJob) => {
    set(job.job === 'evolve' ? { massEvolutionId: job.jobId } : { massOuterId: job.jobId });
    await get().loadMass();
  };
  const follow = followJob<MassJob, MassJobEvent>({
    idOfEvent: (e) => e.jobId, idOfJob: (j) => j.jobId, fold, ended: (j) => ended(j.status),
    get: () => get().massJob, set: (massJob) => set({ massJob }), onEnd: afterEnd,
  });
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
    massJob: null,
    massJobError: null,

    async startMassJob(start) {
      set({ massJob: null, massJobError: null });
      follow.reset();
      try {
        const { jobId } = await (start.job === 'evolve' ? api.startEvolve(start.request) : start.job === 'rank' ? api.startRank(start.request) : api.startRsi(start.request));
        const job = follow.started({ jobId, job: start.job, status: 'starting', lines: [] });
        set({ massJob: job });
        if (ended(job.status)) await afterEnd(job);
      } catch (err) {
        set({ massJobError: errorMessage(err) });
      }
    },

    async cancelMassJob() {
      const job = get().massJob;
      if (!job || ended(job.status)) return;
      await api.cancelMass({ jobId: job.jobId });
    },

    receiveMass(event) {
      if (event.type === 'massJob' || event.type === 'massProgress') follow.receive(event);
    },

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
