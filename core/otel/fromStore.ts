/**
 * The runs to export, read from the store: an experiment's runs (or one run), each with its
 * events and the graph it ran. The graph is the stored workflow compiled with `tools`, with a
 * designed run's own design spliced in (graph.ts `runTraceGraph`); an imported experiment's runs
 * keep the graph they were imported with (its config).
 */
import { StoreError } from '../store/errors.ts';
import type { Annotation, Store } from '../store/index.ts';
import { parseWorkflow, type Graph, type ToolLookup } from '../workflow/index.ts';
import { runTraceGraph } from './graph.ts';
import { importedGraphOf } from './importTraces.ts';
import type { OtelExperiment, OtelRun } from './toSpans.ts';

/**
 * `id`: an experiment id (all its runs, in task order) or a run id (that run). Errors: StoreError
 * `NOT_FOUND` (neither), SpecError (the stored workflow no longer compiles with `tools`).
 */
export function storedRuns(store: Store, id: string, tools: ToolLookup): { experiment: OtelExperiment; runs: OtelRun[] } {
  const found = store.findExperiment(id);
  let run;
  try {
    run = found ? undefined : store.getRun(id);
  } catch (err) {
    // Neither an experiment nor a run: say both were looked for (the run's error said only "no run").
    if (err instanceof StoreError && err.code === 'NOT_FOUND') throw new StoreError('NOT_FOUND', err.message.replace(/no run (\S+)$/, 'no experiment or run $1'), id, { cause: err });
    throw err;
  }
  const exp = found ?? store.getExperiment(run!.experimentId);
  const records = found ? store.listRuns(exp.id) : [run!];
  const inputs = new Map(store.listTasks(exp.id).map((t) => [t.taskIndex, t.input]));
  let base: Graph | undefined;
  const graphOf = (runId: string, events: Parameters<typeof runTraceGraph>[1]) => {
    const imported = exp.kind === 'import' ? importedGraphOf(exp.config, runId) : undefined;
    if (imported) return imported;
    base ??= parseWorkflow(exp.workflowYaml, { tools }).graph;
    return runTraceGraph(base, events, { tools });
  };
  const experiment: OtelExperiment = {
    id: exp.id,
    kind: exp.kind,
    workflowName: exp.workflowName,
    workflowHash: exp.workflowHash,
    ...(exp.workflowYaml ? { workflowYaml: exp.workflowYaml } : {}),
    dataset: exp.dataset,
    split: exp.split,
    seed: exp.seed,
  };
  const notes = new Map<string, Annotation[]>();
  for (const a of store.annotations.list(found ? { experimentId: exp.id } : { runId: id })) notes.set(a.runId, [...(notes.get(a.runId) ?? []), a]);
  const runs = records.map((run): OtelRun => {
    const events = store.getRunEvents(run.runId);
    const annotations = notes.get(run.runId);
    const link = exp.kind === 'fork' ? store.forks.linkOf(run.runId) : undefined;
    const forkOf = link && { parentRunId: link.parentRunId, nodeId: link.nodeId, attempt: link.attempt, intervention: String(link.intervention.kind ?? '') };
    return { run, events, graph: graphOf(run.runId, events), taskInput: inputs.get(run.taskIndex), ...(forkOf && { forkOf }), ...(annotations && { annotations }) };
  });
  return { experiment, runs };
}
