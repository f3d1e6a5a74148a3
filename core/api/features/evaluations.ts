/**
 * The evaluations feature (issue 29, "every evaluation the CLI prints, in the window"):
 * `getBlameEval` answers a stored blame evaluation's report as `flowlab blame-eval --json` prints
 * it when the evaluation ends — precision and recall per role and per fault kind, the faults
 * structure cannot see, the cascades and the model's own failures — scored again from the stored
 * runs by the same function (core/faults `blameReportOf`, core/blame `scoreBlame`; docs/credit.md,
 * "Fault injection (simulated) and blame evaluation"). A store read, answered in-process.
 */
import * as z from 'zod';
import type { BlameReport } from '../../blame/index.ts';
import { errorMessage } from '../../errors.ts';
import { blameReportOf } from '../../faults/experimentFaults.ts';
import type { RoleTrendRow, Store } from '../../store/index.ts';
import { defaultTools } from '../../tools/index.ts';
import { parseWorkflow, type ToolLookup } from '../../workflow/index.ts';
import { ApiError } from '../errors.ts';
import { defineFeature } from '../feature.ts';
import { Id, NoPayload } from '../fields.ts';

export type { BlameRate, BlameReport } from '../../blame/index.ts';

/** `getBlameEval`'s payload. */
export interface GetBlameEvalPayload {
  experimentId: string;
}

/**
 * A blame evaluation's report: the same object `flowlab blame-eval --json` prints
 * (`experimentId`, `simulated: true`, the `inject` specs as given, then the BlameReport's fields).
 */
export type BlameEvalView = { experimentId: string; simulated: true; inject: string[] } & BlameReport;

/** An experiment as the trends name it: by workflow, kind, date and id (so two of one workflow stay apart). */
export interface TrendExperiment {
  id: string;
  kind: string;
  workflowName: string;
  dataset: string;
  split: string;
  /** Epoch ms. */
  createdAt: number;
}

/** One role's figures in one experiment (core/store roleTrends.ts). */
export type RoleTrendPoint = Omit<RoleTrendRow, 'role'>;

/**
 * `getRoleTrends`' answer: the experiments with a ladder or a blame, oldest first, and per role
 * its point in each experiment where it has one (in the same order).
 */
export interface RoleTrends {
  experiments: TrendExperiment[];
  roles: Record<string, RoleTrendPoint[]>;
}

/** The evaluations methods (store reads, synchronous on the host). */
export interface EvaluationsApi {
  /**
   * Per role, across experiments (oldest first): the mean reward ladder h_ρ and the runs blamed on
   * the role, the figures `flowlab show <experiment-id>` prints per role (its ladder table's `h
   * reward` and `blamed` columns).
   */
  getRoleTrends(payload?: Record<string, never>): RoleTrends;
  /**
   * A stored blame evaluation scored against its SIMULATED ground truth, as `flowlab blame-eval
   * --json` prints it. Errors: `NOT_FOUND` (no such experiment), `BAD_REQUEST` (the experiment is
   * not a blame evaluation, or its stored workflow no longer compiles with this host's tools).
   */
  getBlameEval(payload: GetBlameEvalPayload): BlameEvalView;
}

export const evaluationsFeature = defineFeature<EvaluationsApi>()({
  name: 'evaluations',
  payloads: {
    getBlameEval: z.strictObject({ experimentId: Id }),
    getRoleTrends: NoPayload,
  },
  handlers: ({ store, tools }: { store: Store; tools?: ToolLookup | undefined }) => ({
    getBlameEval: ({ experimentId }) => blameEvalOf(store, experimentId, tools ?? defaultTools()),
    getRoleTrends: () => roleTrendsOf(store),
  }),
});

/**
 * `getBlameEval`: the stored experiment's workflow compiled with `tools`, its runs scored by
 * `blameReportOf` (what `flowlab blame-eval` prints at the end of the evaluation, from the same
 * stored runs). Errors: NOT_FOUND (the store's), BAD_REQUEST as above.
 */
export function blameEvalOf(store: Store, experimentId: string, tools: ToolLookup): BlameEvalView {
  const exp = store.getExperiment(experimentId); // NOT_FOUND when absent
  if (exp.kind !== 'blame-eval') {
    throw new ApiError('BAD_REQUEST', `getBlameEval: experiment ${experimentId} is a ${exp.kind} experiment, not a blame evaluation (start one with flowlab blame-eval, or Run with a SIMULATED fault)`, 'getBlameEval', 'experimentId');
  }
  let graph;
  try {
    graph = parseWorkflow(exp.workflowYaml, { tools }).graph;
  } catch (err) {
    throw new ApiError('BAD_REQUEST', `getBlameEval: the stored workflow of ${experimentId} does not compile with this host's tools: ${errorMessage(err)}`, 'getBlameEval', 'experimentId', { cause: err });
  }
  return { experimentId: exp.id, simulated: true, inject: [...(exp.config?.inject ?? [])], ...blameReportOf(store, exp.id, graph, tools) };
}

/** `getRoleTrends`: the store's rows grouped by role, with the experiments they come from. */
export function roleTrendsOf(store: Store): RoleTrends {
  const rows = store.roleTrends();
  const byId = new Map(store.listExperiments().map((e) => [e.id as string, e]));
  const experiments: TrendExperiment[] = [];
  const seen = new Set<string>();
  const roles: Record<string, RoleTrendPoint[]> = {};
  for (const { role, ...point } of rows) {
    const e = byId.get(point.experimentId);
    if (!e) continue;
    if (!seen.has(e.id)) {
      seen.add(e.id);
      experiments.push({ id: e.id, kind: e.kind, workflowName: e.workflowName, dataset: e.dataset, split: e.split, createdAt: e.createdAt });
    }
    (roles[role] ??= []).push(point);
  }
  return { experiments, roles };
}
