import type { NodeId, RoleName, RunId } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { ModelCallRecord, NodeEvent, TraceSink } from '../trace/events.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import type { Graph } from '../workflow/graph.ts';
import {
  admitRun,
  beginPass,
  decideNode,
  finishNode,
  initialRunState,
  nextReady,
  nodeEvent,
  runAnswer,
  settleRun,
  startRun,
  tokenTotals,
  topologyOf,
  type EventOutcome,
  type FinishedNode,
  type NodeState,
} from './algo.ts';
import type { NodeFailure } from './failure.ts';
import { runNode, type NodeContext, type ToolSource } from './runNode.ts';

export interface RunOptions {
  runId: RunId;
  /** Stable key of the task within its experiment (the replay provider looks calls up by it). */
  taskKey: string;
  taskInput: Record<string, unknown>;
  /** Seed of this run; each call's seed derives from it (see seeds.ts). */
  seed: number;
  provider: ModelProvider;
  tools: ToolSource;
  checks?: CheckRegistry;
  sink?: TraceSink;
  signal?: AbortSignal;
  /** Overrides of the graph's limits. */
  concurrency?: number;
  nodeTimeoutMs?: number;
  maxHops?: number;
  hints?: (role: RoleName) => string;
  modelFor?: (role: RoleName) => string;
  /** Overrides every agent node's sampling (see NodeContext.sampling). */
  sampling?: NodeContext['sampling'];
  /** Record the model's token ids of every call (see NodeContext.recordTokens). */
  recordTokens?: boolean;
  /**
   * Nodes already finished before this run starts, with their status and output; the caller
   * recorded their events (the design stage runs its design node first: core/design/run.ts).
   * They are not run or recorded again; their successors read them like any done node.
   */
  done?: ReadonlyMap<NodeId, FinishedNode>;
}

export interface RunOutcome {
  runId: RunId;
  status: 'completed' | 'failed' | 'cancelled';
  /** Output of the answer node (or its field) when it ran ok. */
  answer?: unknown;
  events: NodeEvent[];
  promptTokens: number;
  completionTokens: number;
  startedAt: number;
  endedAt: number;
}

/**
 * Runs a workflow graph on one task to the end and returns its execution trace.
 *
 * Scheduling: a node becomes ready when every forward (non-loop) predecessor is done; ready
 * nodes start in hop order (explicit `hops`, which also forces one node at a time) or document
 * order, up to `concurrency` at once. A node whose required input came from a failed node is
 * recorded as `cascade` (not run); one whose incoming edge is inactive (false condition, skipped
 * source) is `skipped`; optional inputs read `null` instead. A loop edge (`max_iterations`) whose
 * condition holds on its source's output re-enters its target: the target and everything
 * reachable from it run again with attempt + 1, the loop port carrying the source's output.
 * Failures are captured as events, classed wiring / execution / cascade / infrastructure; this
 * function does not throw for node failures. Cancellation (signal) marks unrun nodes skipped.
 *
 * This is the thin async driver: it starts node runs, records events and hands results back;
 * the step functions of core/engine/algo.ts make every decision above (readiness, input
 * gathering, cascade and skip, hop limit, loop re-entry, the answer). Readiness is kept by
 * in-degree counters and a ready queue (core/engine/algo.ts, core/engine/readyQueue.ts): each
 * completion examines only the finished node's successors, so a run costs O(nodes + edges)
 * scheduling work (plus O(log n) per start), not a rescan of the pending nodes per completion.
 */
export async function runWorkflow(graph: Graph, opts: RunOptions): Promise<RunOutcome> {
  const startedAt = Date.now();
  const signal = opts.signal ?? new AbortController().signal;
  const checks = opts.checks ?? new CheckRegistry();
  const concurrency = graph.hops ? 1 : Math.max(1, opts.concurrency ?? graph.limits.concurrency);
  const maxHops = opts.maxHops ?? graph.limits.maxHops;
  const topo = topologyOf(graph);
  const state = initialRunState(graph, opts.done);
  const events: NodeEvent[] = [];
  let running = 0;

  const record = (st: NodeState, attempt: number, outcome: EventOutcome) => {
    const event = nodeEvent(opts.runId, st.node, attempt, events.length, outcome);
    events.push(event);
    opts.sink?.nodeFinished?.(event);
  };

  return await new Promise<RunOutcome>((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      signal.removeEventListener('abort', onAbort);
      const cancelled = signal.aborted;
      if (cancelled) {
        for (const st of state.nodes.values()) {
          if (st.phase === 'pending') {
            const t = Date.now();
            record(st, st.attempt, { inputs: {}, status: 'skipped', message: 'the run was cancelled', calls: [], startedAt: t, endedAt: t });
            finishNode(state, st.node.id, 'skipped');
          }
        }
      }
      const { status, answer } = runAnswer(graph, state, cancelled);
      resolve({ runId: opts.runId, status, answer, events, ...tokenTotals(events), startedAt, endedAt: Date.now() });
    };

    const pump = () => {
      if (signal.aborted) {
        if (running === 0) finish();
        return;
      }
      beginPass(state);
      for (let id: NodeId | undefined; running < concurrency && (id = nextReady(topo, state)) !== undefined;) {
        const st = state.nodes.get(id)!;
        const g = admitRun(decideNode(topo, state, id, opts.taskInput), state.hops, maxHops);
        const t = Date.now();
        if (g.action === 'cascade') {
          record(st, st.attempt, { inputs: {}, status: 'cascade', failureClass: 'cascade', errorCode: 'UPSTREAM_FAILED', message: `not run: input from failed node ${g.causes.join(', ')}`, causes: g.causes, calls: [], startedAt: t, endedAt: t });
          finishNode(state, id, 'cascade');
        } else if (g.action === 'skip') {
          record(st, st.attempt, { inputs: {}, status: 'skipped', message: g.why, calls: [], startedAt: t, endedAt: t });
          finishNode(state, id, 'skipped');
        } else if (g.action === 'wiring') {
          const f = g.failure;
          record(st, st.attempt, { inputs: g.inputs, status: 'failed', failureClass: f.failureClass, errorCode: f.code, message: f.message, calls: [], startedAt: t, endedAt: t });
          finishNode(state, id, 'failed');
        } else {
          running++;
          launch(st, startRun(state, id), g.inputs, t);
        }
      }
      if (running === 0) finish();
    };

    const launch = (st: NodeState, attempt: number, inputs: Record<string, unknown>, t: number) => {
      opts.sink?.nodeStarted?.({ runId: opts.runId, nodeId: st.node.id, attempt, startedAt: t });
      runNode(st.node, inputs, {
        graph,
        provider: opts.provider,
        tools: opts.tools,
        checks,
        taskKey: opts.taskKey,
        taskInput: opts.taskInput,
        runSeed: opts.seed,
        attempt,
        timeoutMs: st.node.timeoutMs ?? opts.nodeTimeoutMs ?? graph.limits.nodeTimeoutMs,
        signal,
        hints: opts.hints,
        modelFor: opts.modelFor,
        sampling: opts.sampling,
        recordTokens: opts.recordTokens,
        strictOutput: graph.limits.strictOutput === true,
      }).then(
        (res) => {
          running--;
          record(st, attempt, { inputs, output: res.output, status: 'ok', calls: res.calls, startedAt: t, endedAt: Date.now() });
          settleRun(state, topo, st.node.id, attempt, { ok: true, output: res.output });
          pump();
        },
        (f: NodeFailure & { calls?: ModelCallRecord[] }) => {
          running--;
          record(st, attempt, { inputs, status: 'failed', failureClass: f.failureClass, errorCode: f.code, message: f.message, calls: f.calls ?? [], startedAt: t, endedAt: Date.now(), simulated: f.simulated || undefined });
          settleRun(state, topo, st.node.id, attempt, { ok: false });
          pump();
        },
      );
    };

    const onAbort = () => { if (running === 0) finish(); };
    signal.addEventListener('abort', onAbort, { once: true });
    pump();
  });
}
