/**
 * The run diff feature: `diffRuns` aligns two stored runs node run by node run and names the
 * first divergence (core/trace/diff.ts `diffRuns`; what is compared and what "first" means are
 * documented there). Both runs' traces are read with the graphs they ran (runTrace.ts, a designed
 * run's design spliced in). A store read; plain, JSON-safe data.
 */
import * as z from 'zod';
import type { RunRecord } from '../../results/index.ts';
import type { Store } from '../../store/index.ts';
import { defaultTools } from '../../tools/index.ts';
import { diffRuns, type NodeEvent, type RunDiff } from '../../trace/index.ts';
import type { ToolLookup } from '../../workflow/index.ts';
import { defineFeature } from '../feature.ts';
import { Id } from '../fields.ts';
import { createRunTraceReader, type RunTrace } from './runTrace.ts';

/** `diffRuns`' payload: the two run ids, A then B. */
export interface DiffRunsPayload {
  a: string;
  b: string;
}

/** One side of a run diff: the run and the workflow it ran. */
export interface RunDiffSide {
  runId: string;
  experimentId: string;
  workflowName: string;
  /** sha256 of the workflow text the experiment ran. */
  workflowHash: string;
  taskIndex: number;
  taskId: string;
  seed: number;
  status: RunRecord['status'];
  answer?: string;
  correct: boolean;
}

/** `diffRuns`' answer. */
export interface RunDiffView {
  a: RunDiffSide;
  b: RunDiffSide;
  /** Both experiments ran the same workflow text. */
  sameWorkflow: boolean;
  /** Both workflows have the same name (different texts of one workflow are compared as usual). */
  sameWorkflowName: boolean;
  /** What the reader should know: different workflow texts or names, a workflow that does not compile here. */
  notes: string[];
  /** Every call of both runs decoded with temperature 0 (greedy: the seed changes nothing). */
  greedy: boolean;
  diff: RunDiff;
}

/** The run-diff method (a store read, synchronous on the host). */
export interface RunDiffApi {
  /**
   * Two stored runs aligned node by node with their first divergence. Runs of differently named
   * workflows are diffed too, with a note. Errors: `NOT_FOUND` (either run), `BAD_REQUEST`.
   */
  diffRuns(payload: DiffRunsPayload): RunDiffView;
}

export const runDiffFeature = defineFeature<RunDiffApi>()({
  name: 'runDiff',
  payloads: { diffRuns: z.strictObject({ a: Id, b: Id }) },
  handlers: ({ store, tools }: { store: Store; tools?: ToolLookup | undefined }) => {
    const runTrace = createRunTraceReader(store, tools ?? defaultTools());
    return { diffRuns: ({ a, b }) => buildRunDiff(store, runTrace, a, b) };
  },
});

/**
 * Diffs runs `a` and `b` read through `trace` (createRunTraceReader). Throws what the store
 * throws (StoreError `NOT_FOUND` for an unknown run).
 */
export function buildRunDiff(store: Store, trace: (runId: string) => RunTrace, a: string, b: string): RunDiffView {
  const ta = trace(a);
  const tb = trace(b);
  const ea = store.getExperiment(ta.run.experimentId);
  const eb = store.getExperiment(tb.run.experimentId);
  const side = (t: RunTrace, e: typeof ea): RunDiffSide => ({
    runId: t.run.runId,
    experimentId: e.id,
    workflowName: e.workflowName,
    workflowHash: e.workflowHash,
    taskIndex: t.run.taskIndex,
    taskId: t.run.taskId,
    seed: t.run.seed,
    status: t.run.status,
    ...(t.run.answer === undefined ? {} : { answer: t.run.answer }),
    correct: t.run.correct,
  });
  const notes: string[] = [];
  const sameWorkflow = ea.workflowHash === eb.workflowHash;
  const sameWorkflowName = ea.workflowName === eb.workflowName;
  if (!sameWorkflowName) notes.push(`The runs ran different workflows ("${ea.workflowName}" and "${eb.workflowName}"): nodes are aligned by id only.`);
  else if (!sameWorkflow) notes.push(`The runs ran two texts of workflow "${ea.workflowName}": nodes are aligned by id.`);
  for (const [t, id] of [[ta, a], [tb, b]] as const) if (t.graphProblem) notes.push(`${id}: ${t.graphProblem}; its nodes are ordered by completion only.`);
  const diff = diffRuns({ events: ta.events, ...(ta.graph ? { graph: ta.graph } : {}) }, { events: tb.events, ...(tb.graph ? { graph: tb.graph } : {}) });
  return { a: side(ta, ea), b: side(tb, eb), sameWorkflow, sameWorkflowName, notes, greedy: greedy(ta.events) && greedy(tb.events), diff };
}

function greedy(events: readonly NodeEvent[]): boolean {
  const calls = events.flatMap((e) => e.calls);
  return calls.length > 0 && calls.every((c) => c.params.temperature === 0);
}
