/** The handlers of the fork methods (fork.ts has the types): `listForks` reads the store, `forkRun` goes to the lab host. */
import type { Store } from '../store/index.ts';
import { ApiError } from './errors.ts';
import type { ForkRunRequest, ForkSummary, RunForks } from './fork.ts';
import type { ApiMethod } from './channels.ts';
import type { LabHost } from './lab.ts';

/** One stored fork link as a summary (the fork's run read for its status). */
export function forkSummary(store: Store, link: { runId: string; experimentId: string; parentRunId: string; nodeId: string; attempt: number; intervention: Record<string, unknown>; createdAt?: number }): ForkSummary {
  const run = store.getRun(link.runId);
  return {
    runId: link.runId, experimentId: link.experimentId, parentRunId: link.parentRunId, nodeId: link.nodeId, attempt: link.attempt,
    intervention: String(link.intervention.kind ?? ''), status: run.status, correct: run.correct,
    ...(run.answer !== undefined && { answer: run.answer }), ...(link.createdAt !== undefined && { createdAt: link.createdAt }),
  };
}

/** A run's parent link and its forks. Errors: StoreError NOT_FOUND (no run). */
export function listForks(store: Store, runId: string): RunForks {
  store.getRun(runId);
  const parent = store.forks.linkOf(runId);
  return { runId, ...(parent && { parent: forkSummary(store, parent) }), forks: store.forks.forksOf(runId).map((l) => forkSummary(store, l)) };
}

/** `forkRun` and `listForks` for `createHandlers`. */
export function forkHandlers(store: Store, lab: (method: ApiMethod) => LabHost) {
  return {
    listForks: ({ runId }: { runId: string }) => listForks(store, runId),
    forkRun: async (payload: ForkRunRequest) => {
      store.getRun(payload.runId); // NOT_FOUND for an unknown run
      const host = lab('forkRun');
      if (!host.forkRun) throw new ApiError('UNAVAILABLE', 'forkRun: this host cannot load models to fork runs', 'forkRun');
      return host.forkRun(payload);
    },
  };
}
