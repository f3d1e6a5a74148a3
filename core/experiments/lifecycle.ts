/**
 * Executing a prepared experiment (core/experiments/service.ts): its pending tasks through
 * executePending with progress events, then halt / cancel / finish, rollout advantages and
 * blame scoring. The provider is disposed before `done` resolves.
 */
import { finishExperimentRecord } from '../repro/experiment.ts';
import type { ToolSource } from '../engine/index.ts';
import { errorMessage } from '../errors.ts';
import type { FaultSpec } from '../faults/inject.ts';
import { labelClassOf } from '../guards/index.ts';
import type { RoleName } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import { storeAdvantages, type RolloutsConfig } from '../rollouts/store.ts';
import type { Store } from '../store/index.ts';
import type { ExperimentRow } from '../store/types.ts';
import type { Grader } from '../tasks/types.ts';
import type { TraceSink } from '../trace/events.ts';
import type { Graph } from '../workflow/graph.ts';
import { blameReportOf, buildDesignInjector, buildInjector } from '../faults/experimentFaults.ts';
import { executePending, type ExecuteOptions } from '../pipeline/index.ts';
import type { ExperimentEvent, ExperimentOutcome, ExperimentStatusEnd } from './spec.ts';
import { summarizeRuns } from './summary.ts';
import { describeDecisions } from '../schedule/index.ts';

/** An experiment ready to run: created or claimed, its provider loaded. */
export interface Prepared {
  exp: ExperimentRow;
  graph: Graph;
  grader: Grader;
  provider: ModelProvider;
  tools: ToolSource;
  modelFor: (role: RoleName) => string;
  resumed: boolean;
  /** blame-eval: the checked fault specs and their text. */
  faults?: { specs: FaultSpec[]; inject: string[] };
  rollouts?: RolloutsConfig;
  parallel?: number;
  sampling?: ExecuteOptions['sampling'];
  recordTokens?: boolean;
  cards?: Pick<ExecuteOptions, 'hints' | 'cardsUsed' | 'afterRun'>;
}

/**
 * Runs the pending tasks of `p` and ends the experiment: `completed`, `cancelled` (the signal
 * aborted; the run in flight is dropped and reported as a `run` event with status cancelled),
 * or `failed` (halted by a model that could not be found or loaded, or an error thrown). Emits
 * node and run events while it runs, then `halted` (when it halted) and `finished`.
 */
export async function executeExperiment(p: Prepared, store: Store, signal: AbortSignal, emit: (e: ExperimentEvent) => void): Promise<ExperimentOutcome> {
  const t0 = performance.now();
  const experimentId = p.exp.id;
  const total = store.listTasks(experimentId).length;
  let done = total - store.pendingTasks(experimentId).length;
  let correctRuns = store.listRuns(experimentId).filter((r) => r.correct).length;
  const injector = p.faults ? buildInjector(p.graph, p.faults.specs, p.exp.seed) : undefined;
  const faultAt = injector ? (k: string, n: string, a: number) => injector.faultAt(k, n, a) : undefined;
  // SIMULATED wiring faults put into designs (a design role's design kinds), recorded on the design node.
  const designFaults = p.faults ? buildDesignInjector(p.faults.specs, p.exp.seed, p.tools) : undefined;
  const taskIndexOf = (runId: string) => Number(runId.slice(experimentId.length + 1));
  /** The runs whose nodes are running and that are not stored yet (several with `parallel`). */
  const inFlight = new Map<string, number>();
  const sink: TraceSink = {
    nodeStarted: ({ runId, nodeId, attempt }) => {
      inFlight.set(runId, taskIndexOf(runId));
      emit({ type: 'node', experimentId, runId, nodeId, attempt, phase: 'started' });
    },
    nodeFinished: (e) => {
      const event: Extract<ExperimentEvent, { type: 'node' }> = { type: 'node', experimentId, runId: e.runId, nodeId: e.nodeId, attempt: e.attempt, phase: 'finished', status: e.status };
      if (e.failureClass) event.failureClass = e.failureClass;
      if (e.simulated || faultAt?.(String(taskIndexOf(e.runId)), e.nodeId, e.attempt)) event.simulated = true;
      emit(event);
    },
  };

  let status: ExperimentStatusEnd = 'completed';
  let message: string | undefined;
  let halted = false;
  let error: unknown;
  try {
    const res = await executePending({
      store,
      experimentId,
      graph: p.graph,
      grader: p.grader,
      provider: injector ? injector.wrapProvider(p.provider) : p.provider,
      tools: injector ? injector.wrapTools(p.tools) : p.tools,
      seed: p.exp.seed,
      signal,
      modelFor: p.modelFor,
      sink,
      faultAt,
      designFault: designFaults?.hook,
      parallel: p.parallel,
      sampling: p.sampling,
      recordTokens: p.recordTokens,
      ...p.cards,
      onRun: (run, d) => {
        done = d;
        inFlight.delete(run.runId);
        if (run.correct) correctRuns++;
        emit({ type: 'run', experimentId, runId: run.runId, taskIndex: run.taskIndex, done: d, total, status: run.status === 'completed' ? 'completed' : 'failed', correct: run.correct, correctRuns });
      },
    });
    if (res.cancelled) status = 'cancelled';
    else if (res.halted) {
      // A model that cannot be found or loaded: the task stays pending; `resume` finishes it.
      status = 'failed';
      halted = true;
      message = res.halted;
    }
  } catch (err) {
    status = 'failed';
    error = err;
    message = errorMessage(err);
  }
  recordEndpointDecisions(p.provider, store, experimentId, emit);
  await p.provider.dispose().catch(() => {});
  if (status === 'cancelled') {
    for (const [runId, taskIndex] of [...inFlight].sort((a, b) => a[1] - b[1])) emit({ type: 'run', experimentId, runId, taskIndex, done, total, status: 'cancelled', correct: false, correctRuns });
  }
  if (halted) emit({ type: 'halted', experimentId, message: message! });
  try {
    store.finishExperiment(experimentId, status);
    if (status === 'completed') finishExperimentRecord(store, experimentId);
  } catch (err) {
    if (status !== 'failed') message = `could not record the end of the experiment: ${errorMessage(err)}`;
    error ??= err;
    status = 'failed';
  }
  const outcome: ExperimentOutcome = {
    experimentId,
    kind: p.exp.kind,
    status,
    report: summarizeRuns(experimentId, store.listRuns(experimentId), { tasksPlanned: total, wallSeconds: (performance.now() - t0) / 1000, status, classOf: labelClassOf(p.exp.dataset) }),
  };
  if (message !== undefined) outcome.message = message;
  if (halted) outcome.halted = true;
  if (error !== undefined) outcome.error = error;
  try {
    if (p.rollouts && !halted && error === undefined) outcome.rollouts = { config: p.rollouts, summary: storeAdvantages(store, experimentId, p.rollouts) };
    if (p.faults && !halted && error === undefined) outcome.blame = { inject: p.faults.inject, report: blameReportOf(store, experimentId, p.graph, p.tools) };
  } catch (err) {
    outcome.error ??= err;
    outcome.message ??= errorMessage(err);
  }
  const end: ExperimentEvent = { type: 'finished', experimentId, status, done, total };
  if (message !== undefined) end.message = message;
  emit(end);
  return outcome;
}

/** Stores the provider's endpoint decisions (backpressure, failover) on the experiment and says so in a note; a store error is noted, not thrown. */
function recordEndpointDecisions(provider: ModelProvider, store: Store, experimentId: string, emit: (e: ExperimentEvent) => void): void {
  const decisions = provider.endpointDecisions?.() ?? [];
  if (decisions.length === 0) return;
  try {
    store.endpointDecisions.add(experimentId, decisions);
    emit({ type: 'note', experimentId, message: describeDecisions(decisions) });
  } catch (err) {
    emit({ type: 'note', experimentId, message: `could not record ${decisions.length} endpoint decision(s): ${errorMessage(err)}` });
  }
}
