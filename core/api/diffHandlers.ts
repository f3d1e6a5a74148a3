/**
 * The store read behind `diffRuns` (diff.ts has the types): both runs' traces with the graphs
 * they ran (runTrace.ts, a designed run's design spliced in), aligned by core/trace `diffRuns`.
 */
import type { Store } from '../store/index.ts';
import { diffRuns, type NodeEvent } from '../trace/index.ts';
import type { RunTrace } from './contract.ts';
import type { RunDiffSide, RunDiffView } from './diff.ts';

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
