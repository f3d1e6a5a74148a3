/**
 * The renderer's view state as a vanilla zustand store (STYLE.md §1: no React here; the hook
 * lives in useLab.ts). It holds what the three views show and loads it through the API client.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { ApiError, type AppInfo, type ExperimentSummary, type FlowlabClient, type RunTrace } from '../core/api/client.ts';
import type { RunRecord } from '../core/trace/index.ts';

/** A value being fetched: not asked for, on its way, there, or failed with a printable error. */
export type Loadable<T> =
  | { status: 'idle' }
  | { status: 'loading' }
  | { status: 'ready'; data: T }
  | { status: 'error'; code: string; message: string };

/** What the views show, and the actions that change it. */
export interface LabState {
  appInfo: Loadable<AppInfo>;
  experiments: Loadable<ExperimentSummary[]>;
  /** The experiment whose runs are shown, if any. */
  selectedExperimentId: string | null;
  runs: Loadable<RunRecord[]>;
  /** The run whose node events are shown, if any. */
  selectedRunId: string | null;
  trace: Loadable<RunTrace>;
  /** Loads app info and the experiments list (again). */
  refresh(): Promise<void>;
  /** Shows an experiment's runs (null: none); clears the selected run. */
  selectExperiment(id: string | null): Promise<void>;
  /** Shows a run's node events (null: none). */
  selectRun(runId: string | null): Promise<void>;
}

const IDLE = { status: 'idle' } as const;
const LOADING = { status: 'loading' } as const;

/**
 * Creates the lab's view store over `api`. A response that arrives after the user selected
 * something else is dropped, so a slow answer never overwrites a newer view.
 */
export function createLabStore(api: FlowlabClient): StoreApi<LabState> {
  return createStore<LabState>()((set, get) => {
    let experimentsRequest = 0;

    return {
      appInfo: IDLE,
      experiments: IDLE,
      selectedExperimentId: null,
      runs: IDLE,
      selectedRunId: null,
      trace: IDLE,

      async refresh() {
        const ticket = ++experimentsRequest;
        set({ experiments: LOADING });
        if (get().appInfo.status !== 'ready') {
          void load(() => api.appInfo()).then((appInfo) => set({ appInfo }));
        }
        const experiments = await load(() => api.listExperiments());
        if (ticket !== experimentsRequest) return;
        set({ experiments });
        // Keep the open experiment's runs fresh too (a CLI run may have added some).
        const open = get().selectedExperimentId;
        if (open) await get().selectExperiment(open);
      },

      async selectExperiment(id) {
        const sameExperiment = id === get().selectedExperimentId;
        set({
          selectedExperimentId: id,
          runs: id ? LOADING : IDLE,
          ...(sameExperiment ? {} : { selectedRunId: null, trace: IDLE }),
        });
        if (!id) return;
        const runs = await load(() => api.listRuns({ experimentId: id }));
        if (get().selectedExperimentId === id) set({ runs });
      },

      async selectRun(runId) {
        set({ selectedRunId: runId, trace: runId ? LOADING : IDLE });
        if (!runId) return;
        const trace = await load(() => api.getRunTrace({ runId }));
        if (get().selectedRunId === runId) set({ trace });
      },
    };
  });
}

/** Runs one API call and turns its outcome into a Loadable (never rejects). */
async function load<T>(call: () => Promise<T>): Promise<Loadable<T>> {
  try {
    return { status: 'ready', data: await call() };
  } catch (err) {
    const e = ApiError.fromWire(err);
    return { status: 'error', code: e.code, message: e.message };
  }
}
