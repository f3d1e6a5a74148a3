/**
 * OTLP/JSON traces into the store as an experiment of kind `import`: each trace is one run
 * (Flowlab's traces read back losslessly, fromFlowlab.ts; other frameworks' mapped, fromForeign.ts),
 * scored on import by structural credit (core/blame/credit `computeCredit`) on the graph the trace gives.
 * The graphs are kept in the experiment's config (`config.import.runs[i].graph`), since an
 * imported run may have no workflow text to compile.
 */
import { z } from 'zod';
import { computeCredit } from '../blame/credit/index.ts';
import { countFailures, runIdOf } from '../pipeline/index.ts';
import { asExperimentId, type ExperimentId } from '../ids.ts';
import type { RunRecord } from '../results/index.ts';
import { computeWorkflowHash, newExperimentId, type Store } from '../store/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import { flowlabRun, isFlowlabTrace } from './fromFlowlab.ts';
import { foreignRun } from './fromForeign.ts';
import { creditGraphOfTrace, type TraceGraph } from './graph.ts';
import { push, type ImportedRun } from './imported.ts';
import { parseOtlpJson, type OtlpSpan } from './otlpJson.ts';
import { checkSpanTree } from './spanTree.ts';

/**
 * Every trace of an OTLP/JSON document as a run, traces in order of first appearance, runs of
 * Flowlab traces by their source experiment and task index. Each trace's parent links are checked
 * first (spanTree.ts); `warn` hears what is kept but odd (a parent not in the file). Errors:
 * OtelError (otlpJson.ts, `BAD_SPAN_TREE` from spanTree.ts, `BAD_FLOWLAB_SPAN` from fromFlowlab.ts).
 */
export function readOtlpTraces(text: string, file?: string, warn?: (message: string) => void): ImportedRun[] {
  const where = file ?? 'the trace file';
  const traces = new Map<string, OtlpSpan[]>();
  for (const s of parseOtlpJson(text, where)) push(traces, s.traceId, s);
  for (const spans of traces.values()) checkSpanTree(spans, where, text, warn);
  const runs = [...traces.values()].map((spans) => (isFlowlabTrace(spans) ? flowlabRun(spans, where) : foreignRun(spans, where)));
  const taskIndex = (r: ImportedRun) => (r.producer === 'flowlab' ? Number(/\/(\d+)$/.exec(r.sourceRunId ?? '')?.[1] ?? NaN) : NaN);
  return runs
    .map((r, i) => ({ r, i }))
    .sort((x, y) => {
      if (x.r.producer !== 'flowlab' || y.r.producer !== 'flowlab' || x.r.sourceExperimentId !== y.r.sourceExperimentId) return x.i - y.i;
      const a = taskIndex(x.r);
      const b = taskIndex(y.r);
      return Number.isNaN(a) || Number.isNaN(b) ? x.i - y.i : a - b;
    })
    .map((x) => x.r);
}

/** The stored record of an imported run: its credit computed on the trace's own graph. */
export function importedRecord(r: ImportedRun, experimentId: ExperimentId, taskIndex: number): { run: RunRecord; events: NodeEvent[] } {
  const runId = runIdOf(experimentId, taskIndex);
  const events = r.events.map((e) => ({ ...e, runId }));
  const { graded, ...fields } = r.run;
  const credit = computeCredit(creditGraphOfTrace(r.graph), events, graded ? { correct: r.run.correct } : undefined);
  return {
    run: { runId, experimentId, taskIndex, taskId: r.task.taskId, ...fields, failures: countFailures(events), credit },
    events,
  };
}

/** What `config.import` of an imported experiment holds. */
export interface ImportConfig {
  file?: string;
  format: 'otlp-json';
  runs: Array<{
    runId: string;
    traceId: string;
    producer: ImportedRun['producer'];
    content: boolean;
    spans: number;
    /** The trace carried a grade (`ImportedRun.run.graded`); false: the run's `correct` is no verdict. */
    graded?: boolean;
    sourceRunId?: string;
    sourceExperimentId?: string;
    graph: TraceGraph;
  }>;
}

/**
 * Stores `runs` as one new experiment of kind `import` (planned tasks, runs, events and calls in
 * one transaction per the store's `saveRuns`), finished `completed`. The experiment's workflow,
 * dataset, split and seed are the runs' own when they all agree (a Flowlab export of one
 * experiment), else `imported traces` / `otlp` / `import` / 0. Errors: StoreError
 * (`EXPERIMENT_EXISTS` for a taken `experimentId`, `INVALID_RECORD`).
 */
export function importRuns(store: Store, runs: readonly ImportedRun[], opts: { experimentId?: string; file?: string } = {}): { experimentId: ExperimentId; runs: RunRecord[]; config: ImportConfig } {
  const same = <T>(f: (r: ImportedRun) => T | undefined): T | undefined => {
    const vals = new Set(runs.map(f));
    return vals.size === 1 ? [...vals][0] : undefined;
  };
  const yaml = same((r) => r.workflowYaml) ?? '';
  const id = asExperimentId(opts.experimentId ?? newExperimentId());
  const batch = runs.map((r, i) => importedRecord(r, id, i));
  const config: ImportConfig = {
    ...(opts.file ? { file: opts.file } : {}),
    format: 'otlp-json',
    runs: runs.map((r, i) => ({
      runId: batch[i]!.run.runId,
      traceId: r.traceId,
      producer: r.producer,
      content: r.content,
      spans: r.spans,
      graded: r.run.graded,
      ...(r.sourceRunId ? { sourceRunId: r.sourceRunId } : {}),
      ...(r.sourceExperimentId ? { sourceExperimentId: r.sourceExperimentId } : {}),
      graph: r.graph,
    })),
  };
  store.createExperiment({
    id,
    kind: 'import',
    workflowName: same((r) => r.workflowName) ?? 'imported traces',
    workflowYaml: yaml,
    workflowHash: computeWorkflowHash(yaml),
    dataset: same((r) => r.dataset) ?? 'otlp',
    split: same((r) => r.split) ?? 'import',
    seed: same((r) => r.experimentSeed) ?? 0,
    config: { import: config },
    tasks: runs.map((r, i) => ({ taskIndex: i, taskId: r.task.taskId, input: r.task.input, ...(r.task.expected !== undefined ? { expected: r.task.expected } : {}) })),
  });
  try {
    store.saveRuns(batch);
  } catch (e) {
    store.finishExperiment(id, 'failed');
    throw e;
  }
  store.finishExperiment(id, 'completed');
  return { experimentId: id, runs: batch.map((b) => b.run), config };
}

/** An entry of `config.import.runs` as stored, decoded (entries of another shape are skipped, as before the codec). */
const importedEntry = z.looseObject({
  runId: z.string(),
  graph: z.custom<TraceGraph>((g) => typeof g === 'object' && g !== null && Array.isArray((g as { nodes?: unknown }).nodes)).optional(),
  graded: z.boolean().optional(),
  producer: z.string().optional(),
});
const importSection = z.looseObject({ import: z.looseObject({ runs: z.array(z.unknown()) }) });

/** The stored entry of imported run `runId` in an experiment's config, or undefined (not an import, or not listed). */
function importedEntryOf(config: unknown, runId: string): z.infer<typeof importedEntry> | undefined {
  const section = importSection.safeParse(config);
  if (!section.success) return undefined;
  for (const raw of section.data.import.runs) {
    const entry = importedEntry.safeParse(raw);
    if (entry.success && entry.data.runId === runId) return entry.data;
  }
  return undefined;
}

/** The graph an imported run was scored on, from its experiment's config (undefined for other experiments). */
export function importedGraphOf(config: unknown, runId: string): TraceGraph | undefined {
  return importedEntryOf(config, runId)?.graph;
}

/**
 * Whether an imported run was graded: `config.import.runs[i].graded`, else (imports stored before
 * that field) true for a Flowlab trace and false for another framework's, whose spans carry no
 * expected answer (fromForeign.ts). Undefined for a run the config does not list (not imported).
 */
export function importedRunGraded(config: unknown, runId: string): boolean | undefined {
  const r = importedEntryOf(config, runId);
  if (!r) return undefined;
  return typeof r.graded === 'boolean' ? r.graded : r.producer === 'flowlab';
}
