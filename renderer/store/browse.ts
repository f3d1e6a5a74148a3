/**
 * Stored results: app info, the experiments list (with each experiment's runs for failure
 * counts and the chart), the selected experiment with its runs, the selected run's trace and
 * the node open in the Trace view. A late answer for a selection the user already left is dropped.
 */
import type { AppInfo, ExperimentDetail, ExperimentSummary, RunRecord, RunTrace } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

/** Most experiments whose runs are fetched for the list's failure counts and the chart. */
export const LIST_RUNS_LIMIT = 40;

export interface BrowseSlice {
  appInfo: Loadable<AppInfo>;
  experiments: Loadable<ExperimentSummary[]>;
  /** Runs per experiment for the list and chart (the first LIST_RUNS_LIMIT experiments). */
  runsByExperiment: Record<string, Loadable<RunRecord[]>>;
  /** The experiment whose runs are shown, if any. */
  selectedExperimentId: string | null;
  /** The selected experiment in full (its workflow text draws the trace graph). */
  experiment: Loadable<ExperimentDetail>;
  runs: Loadable<RunRecord[]>;
  /** The run whose trace is shown, if any. */
  selectedRunId: string | null;
  trace: Loadable<RunTrace>;
  /** The node open in the trace's detail panel, and which attempt (null: the final one). */
  traceNode: string | null;
  traceAttempt: number | null;
  /** Loads app info and the experiments list (again), then the runs behind the list. */
  refresh(): Promise<void>;
  /** Shows an experiment's runs (null: none); clears the selected run unless it is the same experiment. */
  selectExperiment(id: string | null): Promise<void>;
  /** Shows a run's trace (null: none). */
  selectRun(runId: string | null): Promise<void>;
  /** Opens a node of the shown trace (null closes the panel). */
  selectTraceNode(nodeId: string | null, attempt?: number | null): void;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends BrowseSlice {}
}

export function createBrowseSlice({ api, set, get }: SliceContext): BrowseSlice {
  let experimentsTicket = 0;
  return {
    appInfo: IDLE,
    experiments: IDLE,
    runsByExperiment: {},
    selectedExperimentId: null,
    experiment: IDLE,
    runs: IDLE,
    selectedRunId: null,
    trace: IDLE,
    traceNode: null,
    traceAttempt: null,

    async refresh() {
      const ticket = ++experimentsTicket;
      if (get().experiments.status !== 'ready') set({ experiments: LOADING });
      if (get().appInfo.status !== 'ready') void load(() => api.appInfo()).then((appInfo) => set({ appInfo }));
      const experiments = await load(() => api.listExperiments());
      if (ticket !== experimentsTicket) return;
      set({ experiments });
      const open = get().selectedExperimentId;
      const jobs: Array<Promise<void>> = [];
      if (open) jobs.push(get().selectExperiment(open));
      if (experiments.status === 'ready') {
        // Runs of listed experiments: finished ones once, running ones every refresh.
        for (const e of experiments.data.slice(0, LIST_RUNS_LIMIT)) {
          const have = get().runsByExperiment[e.id];
          if (have?.status === 'ready' && e.status !== 'running' && have.data.length === e.runsDone) continue;
          jobs.push(
            load(() => api.listRuns({ experimentId: e.id })).then((runs) => {
              if (ticket !== experimentsTicket) return;
              set({ runsByExperiment: { ...get().runsByExperiment, [e.id]: runs } });
            }),
          );
        }
      }
      await Promise.all(jobs);
    },

    async selectExperiment(id) {
      const same = id === get().selectedExperimentId;
      set({
        selectedExperimentId: id,
        runs: id ? (same && get().runs.status === 'ready' ? get().runs : LOADING) : IDLE,
        ...(same ? {} : { experiment: id ? LOADING : IDLE, selectedRunId: null, trace: IDLE, traceNode: null, traceAttempt: null }),
      });
      if (!id) return;
      const [runs, experiment] = await Promise.all([
        load(() => api.listRuns({ experimentId: id })),
        same && get().experiment.status === 'ready' ? Promise.resolve(null) : load(() => api.getExperiment({ id })),
      ]);
      if (get().selectedExperimentId !== id) return;
      set({ runs, ...(experiment ? { experiment } : {}) });
    },

    async selectRun(runId) {
      set({ selectedRunId: runId, trace: runId ? LOADING : IDLE, traceNode: null, traceAttempt: null });
      if (!runId) return;
      const trace = await load(() => api.getRunTrace({ runId }));
      if (get().selectedRunId === runId) set({ trace });
    },

    selectTraceNode(nodeId, attempt = null) {
      set({ traceNode: nodeId, traceAttempt: nodeId ? attempt : null });
    },
  };
}
