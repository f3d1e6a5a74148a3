/**
 * The run of planned tasks through the pipeline (core/pipeline/index.ts states the flow):
 * task -> engine -> grade -> credit -> ladder -> store, one run per task, each stored whole.
 */
import { setMaxListeners } from 'node:events';
import { asRunId, type ExperimentId, type RoleName, type RunId } from '../ids.ts';
import type { RunOptions, ToolSource } from '../engine/index.ts';
import { runGraph, type DesignFaultHook, type GraphRunOutcome } from '../design/index.ts';
import { deriveSeed } from '../engine/seeds.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { Store } from '../store/index.ts';
import type { PlannedTask } from '../store/types.ts';
import type { Grader, Task } from '../tasks/types.ts';
import type { FailureClass, NodeEvent, TraceSink } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import type { CheckRegistry } from '../workflow/checks.ts';
import type { Graph } from '../workflow/graph.ts';
import { computeCredit, creditGraphOf } from '../blame/credit/index.ts';
import { computeLadder } from '../reward/index.ts';
import { processScheduler, runOrdered } from '../schedule/index.ts';

export interface ExecuteOptions {
  store: Store;
  experimentId: ExperimentId;
  graph: Graph;
  grader: Grader;
  provider: ModelProvider;
  tools: ToolSource;
  checks?: CheckRegistry;
  /** Experiment seed; each run's seed is derived from it and the task index. */
  seed: number;
  signal?: AbortSignal;
  modelFor?: (role: RoleName) => string;
  /** Hint-card text for a role's prompts in a run (see CardInjector in core/distill). */
  hints?: (role: RoleName, runId: RunId) => string;
  /** Ids of the hint cards that reached a run's prompts: recorded as card uses once the run is stored. */
  cardsUsed?: (runId: RunId) => readonly string[];
  /**
   * Awaited before each run is stored (a MASS step waits here for the steps before it to be
   * stored: core/schedule runOrdered's `turn`). A rejection stores nothing and is thrown.
   */
  beforeSave?: () => Promise<void>;
  /** Called after each run is durably stored. */
  onRun?: (run: RunRecord, done: number, total: number) => void;
  /** Awaited after `onRun` (online meta-distillation distils cards here, between tasks). */
  afterRun?: (run: RunRecord, done: number, total: number) => Promise<void> | void;
  sink?: TraceSink;
  /** Fault injection (simulated): the injected fault kind of a node run, to label its event. */
  faultAt?: (taskKey: string, nodeId: string, attempt: number) => string | undefined;
  /**
   * Tasks in flight at once (default 1), through the process's scheduler (core/schedule). Rollout
   * groups use G so a group's trajectories decode together (the provider batches concurrent
   * sequences); runs are still stored one transaction each, in task order.
   */
  parallel?: number;
  /** Sampling that overrides every agent node's (rollouts). */
  sampling?: RunOptions['sampling'];
  /** Record every model call's token ids (on-policy training data; see RunOptions.recordTokens). */
  recordTokens?: boolean;
  /** SIMULATED wiring faults put into designs (core/faults/design.ts; core/design/run.ts). */
  designFault?: DesignFaultHook;
}

/** The id of the run of task `taskIndex` in an experiment: `<experimentId>/<taskIndex>`. */
export const runIdOf = (experimentId: string, taskIndex: number) => asRunId(`${experimentId}/${taskIndex}`);
/** The seed of the run of task `taskIndex` (same on a resume or replay). */
export const runSeedOf = (seed: number, taskIndex: number) => deriveSeed(seed, 'task', taskIndex);

/** The task a planned task stands for, as the dataset made it (its `meta` included: graders read it). */
export function taskOf(p: PlannedTask): Task {
  const task: Task = { id: p.taskId, index: p.taskIndex, input: (p.input ?? {}) as Record<string, unknown>, expected: p.expected ?? '' };
  if (p.meta) task.meta = p.meta;
  return task;
}

/**
 * Runs every planned task of an experiment that has no stored run yet, `parallel` at a time
 * (core/schedule), and stores each run (record, node events, model calls) in one transaction, in
 * task order: a run that ends early waits for the ones before it, so what is stored is the same
 * at any `parallel`.
 * A process killed mid-way loses at most the run in flight; `resume` calls this again and
 * finishes the rest without redoing or duplicating a stored run.
 * Returns the number of runs stored by this call. Cancelled runs are not stored. A model that
 * cannot be found or loaded halts the experiment (`halted` says why) without storing that run.
 */
/** Model failures that would fail every remaining task: the experiment halts instead of storing them. */
const HALTING = new Set(['MODEL_NOT_FOUND', 'MODEL_INVALID', 'MODEL_LOAD_FAILED', 'MODEL_UNKNOWN_REF']);

export async function executePending(opts: ExecuteOptions): Promise<{ stored: number; cancelled: boolean; halted?: string }> {
  const { store, experimentId } = opts;
  const pending = store.pendingTasks(experimentId);
  const total = store.listTasks(experimentId).length;
  let done = total - pending.length;
  let stored = 0;
  /** Runs one task to its graded record; stores nothing (the commit below does, in task order). */
  const runOne = async (planned: PlannedTask): Promise<{ cancelled?: true; halted?: string; run?: RunRecord; events?: NodeEvent[] }> => {
    const task = taskOf(planned);
    const seed = runSeedOf(opts.seed, planned.taskIndex);
    const runId = runIdOf(experimentId, planned.taskIndex);
    const hints = opts.hints;
    const outcome = await runGraph(opts.graph, {
      runId,
      taskKey: String(planned.taskIndex),
      taskInput: task.input,
      seed,
      provider: opts.provider,
      tools: opts.tools,
      checks: opts.checks,
      signal: opts.signal,
      sink: opts.sink,
      modelFor: opts.modelFor,
      hints: hints && ((role) => hints(role, runId)),
      sampling: opts.sampling,
      recordTokens: opts.recordTokens,
      designFault: opts.designFault,
    });
    if (outcome.status === 'cancelled') return { cancelled: true };
    const fatal = outcome.events.find((e) => e.failureClass === 'infrastructure' && HALTING.has(e.errorCode ?? ''));
    if (fatal) {
      // Not stored: the task stays pending, so `resume` runs it once the model is fixed.
      return { halted: `${fatal.errorCode}: ${fatal.message} (task ${planned.taskIndex}, node ${fatal.nodeId}); the experiment stopped and can be resumed` };
    }
    if (opts.faultAt) {
      for (const e of outcome.events) {
        const kind = opts.faultAt(String(planned.taskIndex), e.nodeId, e.attempt);
        if (kind) { e.simulated = true; e.fault = kind; }
      }
    }
    const run = await gradedRun(outcome, task, opts.grader, { runId: outcome.runId, experimentId, taskIndex: planned.taskIndex, taskId: planned.taskId, seed });
    return { run, events: outcome.events };
  };

  // Tasks in flight through the process's one scheduler (core/schedule), stored in task order
  // whatever order they finish in. One at a time, each task starts after the one before it is
  // stored (as before --parallel). Online distillation (afterRun) changes the next task's prompts,
  // so it always runs one at a time.
  const width = opts.afterRun ? 1 : Math.max(1, opts.parallel ?? 1);
  // Each run in flight (and each of its running nodes) listens on the shared cancel signal.
  if (opts.signal && width > 1) setMaxListeners(16 * width, opts.signal);
  let end: { cancelled?: true; halted?: string } = {};
  const lane = processScheduler().lane(experimentId, width);
  try {
    await runOrdered({
      items: pending, lane, signal: opts.signal, ...(width === 1 && { window: 1 }),
      run: runOne,
      commit: async (r) => {
        if (!r.run) {
          end = r;
          return false;
        }
        const run = r.run;
        await opts.beforeSave?.();
        store.saveRun(run, r.events!);
        const used = opts.cardsUsed?.(run.runId) ?? [];
        if (used.length) store.improve.recordUses(run.runId, used);
        stored++;
        done++;
        opts.onRun?.(run, done, total);
        await opts.afterRun?.(run, done, total);
        return true;
      },
    });
  } finally {
    lane.close();
  }
  if (end.halted) return { stored, cancelled: false, halted: end.halted };
  if (end.cancelled || stored < pending.length) return { stored, cancelled: true };
  return { stored, cancelled: false };
}

/**
 * The stored record of one finished run: its answer graded against `task` (only when the run
 * completed), credit and ladder (scoreRun), failures by class (countFailures) and the SIMULATED
 * flag when any node carries an injected fault. Used by the experiment loop and by forks
 * (core/experiments/fork.ts), so both store a run the same way.
 */
export async function gradedRun(
  outcome: GraphRunOutcome,
  task: Task,
  grader: Grader,
  at: Pick<RunRecord, 'runId' | 'experimentId' | 'taskIndex' | 'taskId' | 'seed'>,
): Promise<RunRecord> {
  const grade = outcome.status === 'completed' ? await grader.grade(outcome.answer, task) : undefined;
  const { credit, ladder } = scoreRun(outcome.graph, outcome.events, { completed: outcome.status === 'completed', score: grade?.score ?? 0, correct: grade?.correct ?? false });
  const run: RunRecord = {
    ...at,
    status: outcome.status,
    answer: outcome.answer === undefined ? undefined : typeof outcome.answer === 'string' ? outcome.answer : JSON.stringify(outcome.answer),
    expected: task.expected,
    score: grade?.score ?? 0,
    correct: grade?.correct ?? false,
    promptTokens: outcome.promptTokens,
    completionTokens: outcome.completionTokens,
    startedAt: outcome.startedAt,
    endedAt: outcome.endedAt,
    failures: countFailures(outcome.events),
    credit,
    ladder,
  };
  if (outcome.events.some((e) => e.simulated)) run.simulated = true;
  return run;
}

/** Credit and the reward ladder of one run, from the graph it ran (for a designed run: with its design spliced in), trace and grade (pure). */
export function scoreRun(graph: Graph, events: readonly NodeEvent[], outcome: { completed: boolean; score: number; correct: boolean }) {
  const cg = creditGraphOf(graph);
  const credit = computeCredit(cg, events, { correct: outcome.correct });
  const ladder = computeLadder([...graph.roles.values()], cg.nodes, events, credit, outcome);
  return { credit, ladder };
}

/** Failures of the final attempt of each node, by class (earlier loop attempts are superseded). */
export function countFailures(events: readonly NodeEvent[]): Partial<Record<FailureClass, number>> {
  const last = new Map<string, NodeEvent>();
  for (const e of events) {
    const prev = last.get(e.nodeId);
    if (!prev || e.attempt >= prev.attempt) last.set(e.nodeId, e);
  }
  const out: Partial<Record<FailureClass, number>> = {};
  for (const e of last.values()) if (e.failureClass) out[e.failureClass] = (out[e.failureClass] ?? 0) + 1;
  return out;
}
