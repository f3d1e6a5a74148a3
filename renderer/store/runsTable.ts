/**
 * The Runs view's state (issue 29, "find any run"): the query (filters, search text, order) and
 * the result, fetched a page at a time as the table scrolls (`searchRuns`, what `flowlab ls`
 * asks the store), so a result of hundreds of thousands of runs costs only the pages seen. A page
 * answering for a query the user has already changed is dropped. Opening a row shows its trace (`openRunTrace`, store/improve.ts).
 */
import type { RunHit, RunQuery } from '../../core/api/client.ts';
import { errorMessage } from '../../core/api/client.ts';
import type { SliceContext } from './types.ts';

/** Rows per fetched page. */
export const RUNS_PAGE = 200;

/** The filters and order of the table (paging is the slice's). */
export type RunsFilter = Omit<RunQuery, 'offset' | 'limit'>;

export interface RunsTableSlice {
  runsFilter: RunsFilter;
  /** Matching runs in all (null: not counted yet). */
  runsTotal: number | null;
  /** Fetched pages by page index. */
  runsPages: Record<number, RunHit[]>;
  /** The last error of a search (a bad filter's message), or null. */
  runsError: string | null;
  /** Bumped on every new query: a page answering for an older one is dropped. */
  runsTicket: number;
  /** Replaces the filters (and order) and fetches the first page. */
  setRunsFilter(filter: RunsFilter): Promise<void>;
  /** Makes sure the pages holding rows `from`..`to` (inclusive) are fetched. */
  loadRunRows(from: number, to: number): Promise<void>;
  /**
   * Opens an experiment in the Trace view with a run selected (the Run view's "Open its traces"
   * opened it with none): its first wrong run in task order, the one to look at, else its first.
   */
  openExperimentTraces(experimentId: string): Promise<void>;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends RunsTableSlice {}
}

/** The row at `index` when its page is fetched. */
export function runAt(pages: Record<number, RunHit[]>, index: number): RunHit | undefined {
  return pages[Math.floor(index / RUNS_PAGE)]?.[index % RUNS_PAGE];
}

export function createRunsTableSlice({ api, set, get }: SliceContext): RunsTableSlice {
  /** Pages requested for the current ticket (so a scroll does not ask twice). */
  let asked = new Set<number>();
  const fetchPage = async (page: number): Promise<void> => {
    const ticket = get().runsTicket;
    if (asked.has(page)) return;
    asked.add(page);
    try {
      const result = await api.searchRuns({ ...get().runsFilter, offset: page * RUNS_PAGE, limit: RUNS_PAGE });
      if (ticket !== get().runsTicket) return;
      set({ runsTotal: result.total, runsPages: { ...get().runsPages, [page]: result.rows }, runsError: null });
    } catch (err) {
      if (ticket !== get().runsTicket) return;
      asked.delete(page);
      set({ runsError: errorMessage(err), ...(page === 0 && { runsTotal: 0, runsPages: {} }) });
    }
  };
  return {
    runsFilter: {},
    runsTotal: null,
    runsPages: {},
    runsError: null,
    runsTicket: 0,

    async setRunsFilter(filter) {
      asked = new Set();
      set({ runsFilter: filter, runsTicket: get().runsTicket + 1, runsPages: {}, runsTotal: null, runsError: null });
      await fetchPage(0);
    },

    async loadRunRows(from, to) {
      const total = get().runsTotal;
      const last = total === null ? to : Math.min(to, total - 1);
      const jobs: Array<Promise<void>> = [];
      for (let p = Math.floor(Math.max(0, from) / RUNS_PAGE); p <= Math.floor(Math.max(0, last) / RUNS_PAGE); p++) {
        if (!get().runsPages[p]) jobs.push(fetchPage(p));
      }
      await Promise.all(jobs);
    },

    async openExperimentTraces(experimentId) {
      get().setView('trace');
      await get().selectExperiment(experimentId);
      const runs = get().runs;
      if (get().selectedExperimentId !== experimentId || runs.status !== 'ready' || runs.data.length === 0) return;
      const pick = runs.data.find((r) => !r.correct) ?? runs.data[0]!;
      await get().selectRun(pick.runId);
    },
  };
}
