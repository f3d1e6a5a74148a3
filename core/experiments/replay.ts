import type { ExperimentId, RoleName, RunId } from '../ids.ts';
import type { ToolSource } from '../engine/index.ts';
import { runGraph, type DesignFaultHook, type GraphRunOutcome } from '../design/index.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { RunRecord } from '../results/index.ts';
import { StoreError, type Store } from '../store/index.ts';
import type { PlannedTask } from '../store/types.ts';
import type { NodeEvent } from '../trace/events.ts';
import type { CheckRegistry } from '../workflow/checks.ts';
import type { Graph } from '../workflow/graph.ts';
import { runIdOf, taskOf } from '../pipeline/index.ts';

export interface NodeMismatch {
  runId: string;
  nodeId: string;
  attempt: number;
  /** What differs: `status`, `output`, `error`, `missing` (recorded, not replayed) or `extra`. */
  what: string;
  recorded?: string;
  replayed?: string;
}

export interface ReplayReport {
  experimentId: string;
  runs: number;
  /** Node runs compared (recorded events plus any extra replayed ones). */
  nodes: number;
  matched: number;
  mismatched: number;
  mismatches: NodeMismatch[];
  wallSeconds: number;
  modelsLoaded: number;
}

/** What a replay needs besides the store: the graph, the provider serving recorded calls, the tools and the run's context. */
export interface ReplayOptions {
  store: Store;
  experimentId: ExperimentId;
  graph: Graph;
  provider: ModelProvider;
  tools: ToolSource;
  checks?: CheckRegistry;
  /** The hint-card text each run's prompts carried (experiments run with cards). */
  hints?: (role: RoleName, runId: RunId) => string;
  /** The SIMULATED design faults a blame evaluation put into its designs (replayDesignFaultsFor). */
  designFault?: DesignFaultHook;
}

/**
 * Re-runs one stored run through the engine with `opts.provider` (normally the replay provider,
 * so no model is loaded), with the run's own task input, seed, hints and design faults, under
 * the same run id. Returns the engine's outcome (events and the graph the run ran); writes
 * nothing. Errors: StoreError `NOT_FOUND` when the run's task is not planned in the experiment.
 */
export async function replayRun(opts: ReplayOptions & { run: RunRecord; planned?: PlannedTask }): Promise<GraphRunOutcome> {
  const { run, experimentId } = opts;
  const planned = opts.planned ?? opts.store.listTasks(experimentId).find((t) => t.taskIndex === run.taskIndex);
  if (!planned) throw new StoreError('NOT_FOUND', `experiment ${experimentId} plans no task ${run.taskIndex} (run ${run.runId})`, run.runId);
  const runId = runIdOf(experimentId, run.taskIndex);
  const hints = opts.hints;
  return runGraph(opts.graph, {
    runId,
    taskKey: String(run.taskIndex),
    taskInput: taskOf(planned).input,
    seed: run.seed,
    provider: opts.provider,
    tools: opts.tools,
    checks: opts.checks,
    hints: hints && ((role) => hints(role, runId)),
    designFault: opts.designFault,
  });
}

/**
 * Re-runs every stored run of an experiment through the engine with `provider` (normally the
 * replay provider serving the recorded calls, so no model is loaded) and compares each node
 * run with the recorded one: same status, same error code, same output (canonical JSON).
 * Writes nothing to the store.
 */
export async function replayExperiment(opts: ReplayOptions): Promise<ReplayReport> {
  const t0 = performance.now();
  const { store, experimentId } = opts;
  const tasks = new Map(store.listTasks(experimentId).map((t) => [t.taskIndex, t]));
  const runs = store.listRuns(experimentId);
  const mismatches: NodeMismatch[] = [];
  let nodes = 0;
  let matched = 0;
  for (const run of runs) {
    const planned = tasks.get(run.taskIndex);
    if (!planned) continue;
    const recorded = store.getRunEvents(run.runId);
    const outcome = await replayRun({ ...opts, run, planned });
    const key = (e: NodeEvent) => `${e.nodeId}#${e.attempt}`;
    const replayed = new Map(outcome.events.map((e) => [key(e), e]));
    for (const rec of recorded) {
      nodes++;
      const rep = replayed.get(key(rec));
      replayed.delete(key(rec));
      const base = { runId: run.runId, nodeId: rec.nodeId, attempt: rec.attempt };
      if (!rep) mismatches.push({ ...base, what: 'missing', recorded: rec.status });
      else if (rep.status !== rec.status) mismatches.push({ ...base, what: 'status', recorded: rec.status, replayed: rep.status });
      else if ((rep.errorCode ?? '') !== (rec.errorCode ?? '')) mismatches.push({ ...base, what: 'error', recorded: rec.errorCode, replayed: rep.errorCode });
      else if (canonical(rep.output) !== canonical(rec.output)) mismatches.push({ ...base, what: 'output', recorded: canonical(rec.output), replayed: canonical(rep.output) });
      else matched++;
    }
    for (const extra of replayed.values()) {
      nodes++;
      mismatches.push({ runId: run.runId, nodeId: extra.nodeId, attempt: extra.attempt, what: 'extra', replayed: extra.status });
    }
  }
  return {
    experimentId,
    runs: runs.length,
    nodes,
    matched,
    mismatched: mismatches.length,
    mismatches,
    wallSeconds: (performance.now() - t0) / 1000,
    modelsLoaded: opts.provider.modelsLoaded(),
  };
}

/** JSON with sorted keys; undefined -> ''. */
export function canonical(v: unknown): string {
  if (v === undefined) return '';
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}
