import type { NodeId, RoleName, RunId } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { ModelCallRecord, NodeEvent, NodeStatus, TraceSink } from '../trace/events.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import { evalCondition } from '../workflow/condition.ts';
import type { Graph, GraphEdge, GraphNode } from '../workflow/graph.ts';
import { NodeFailure, wiring } from './failure.ts';
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

type State = {
  node: GraphNode;
  phase: 'pending' | 'running' | 'done';
  attempt: number;
  status?: NodeStatus;
  output?: unknown;
  /** Set when a loop re-entered this node while it was running: its result is superseded. */
  stale?: boolean;
};

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
 */
export async function runWorkflow(graph: Graph, opts: RunOptions): Promise<RunOutcome> {
  const startedAt = Date.now();
  const signal = opts.signal ?? new AbortController().signal;
  const checks = opts.checks ?? new CheckRegistry();
  const concurrency = graph.hops ? 1 : Math.max(1, opts.concurrency ?? graph.limits.concurrency);
  const maxHops = opts.maxHops ?? graph.limits.maxHops;
  const order = graph.hops ?? graph.nodes.map((n) => n.id);
  const states = new Map<NodeId, State>(graph.nodes.map((n) => [n.id, { node: n, phase: 'pending', attempt: 1 }]));
  const forwardIn = new Map<NodeId, GraphEdge[]>(graph.nodes.map((n) => [n.id, []]));
  const forwardOut = new Map<NodeId, GraphEdge[]>(graph.nodes.map((n) => [n.id, []]));
  const loopOut = new Map<NodeId, GraphEdge[]>(graph.nodes.map((n) => [n.id, []]));
  for (const e of graph.edges) {
    if (e.maxIterations) loopOut.get(e.from)!.push(e);
    else {
      forwardIn.get(e.to)!.push(e);
      forwardOut.get(e.from)!.push(e);
    }
  }
  const loopCount = new Map<GraphEdge, number>();
  const loopValues = new Map<NodeId, Map<string, unknown>>(); // target -> port -> value
  const events: NodeEvent[] = [];
  let hops = 0;
  let running = 0;

  const record = (st: State, e: Omit<NodeEvent, 'runId' | 'nodeId' | 'attempt' | 'seq' | 'kind' | 'role' | 'wiredBy' | 'runBy'>) => {
    const n = st.node;
    const event: NodeEvent = {
      runId: opts.runId,
      nodeId: n.id,
      attempt: st.attempt,
      seq: events.length,
      kind: n.kind,
      role: n.role,
      wiredBy: n.wiredBy,
      runBy: n.role,
      ...e,
    };
    events.push(event);
    opts.sink?.nodeFinished?.(event);
    return event;
  };

  /** Decides what to do with a pending node whose predecessors are all done. */
  const gather = (st: State): { action: 'run'; inputs: Record<string, unknown> } | { action: 'cascade'; causes: NodeId[] } | { action: 'skip'; why: string } | { action: 'wiring'; failure: NodeFailure; inputs: Record<string, unknown> } => {
    const causes: NodeId[] = [];
    const inactive: string[] = [];
    const optionalPorts = new Set(st.node.inputs.filter((p) => p.optional).map((p) => p.name));
    const nullPorts = new Set<string>();
    for (const e of forwardIn.get(st.node.id)!) {
      const src = states.get(e.from)!;
      const optional = e.type === 'data' && e.port !== undefined && optionalPorts.has(e.port);
      if (src.status === 'failed' || src.status === 'cascade') {
        if (optional) nullPorts.add(e.port!);
        else causes.push(e.from);
      } else if (src.status === 'skipped' || (e.condition && !evalCondition(e.condition, src.output))) {
        if (optional) nullPorts.add(e.port!);
        else inactive.push(`${e.from}${e.condition ? ' (condition false)' : ' (skipped)'}`);
      }
    }
    if (causes.length) return { action: 'cascade', causes: [...new Set(causes)] };
    if (inactive.length) return { action: 'skip', why: `inactive input from ${inactive.join(', ')}` };
    const inputs: Record<string, unknown> = {};
    for (const port of st.node.inputs) {
      if (port.loop) {
        inputs[port.name] = loopValues.get(st.node.id)?.get(port.name) ?? null;
        continue;
      }
      if (nullPorts.has(port.name)) {
        inputs[port.name] = null;
        continue;
      }
      if (port.source.kind === 'task') {
        const v = opts.taskInput[port.source.field];
        if (v === undefined && !port.optional) {
          return { action: 'wiring', inputs, failure: wiring('MISSING_INPUT', `input "${port.name}" reads task.${port.source.field}, which this task does not have (task fields: ${Object.keys(opts.taskInput).join(', ')})`) };
        }
        inputs[port.name] = v ?? null;
      } else {
        const src = states.get(port.source.node)!;
        let v: unknown = src.output;
        if (port.source.field) {
          for (const f of port.source.field.split('.')) {
            v = v !== null && typeof v === 'object' && Object.hasOwn(v, f) ? (v as Record<string, unknown>)[f] : undefined;
          }
          if (v === undefined && !port.optional) {
            return { action: 'wiring', inputs, failure: wiring('MISSING_FIELD', `input "${port.name}" reads ${port.source.node}.${port.source.field}, but that output has no field "${port.source.field}"`) };
          }
        }
        inputs[port.name] = v ?? null;
      }
    }
    return { action: 'run', inputs };
  };

  const ready = (st: State) =>
    st.phase === 'pending' && forwardIn.get(st.node.id)!.every((e) => states.get(e.from)!.phase === 'done');

  /** Re-enters a loop: the target and all nodes reachable from it become pending again. */
  const reenter = (edge: GraphEdge, value: unknown) => {
    if (!loopValues.has(edge.to)) loopValues.set(edge.to, new Map());
    loopValues.get(edge.to)!.set(edge.port ?? edge.from, edge.type === 'data' ? value : true);
    const seen = new Set<NodeId>([edge.to]);
    const queue = [edge.to];
    while (queue.length) {
      const id = queue.shift()!;
      for (const e of forwardOut.get(id)!) if (!seen.has(e.to)) { seen.add(e.to); queue.push(e.to); }
    }
    for (const id of seen) {
      const st = states.get(id)!;
      if (st.phase === 'running') st.stale = true;
      if (st.phase === 'done') st.attempt++;
      st.phase = 'pending';
      st.status = undefined;
      st.output = undefined;
    }
  };

  return await new Promise<RunOutcome>((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      signal.removeEventListener('abort', onAbort);
      const cancelled = signal.aborted;
      if (cancelled) {
        for (const st of states.values()) {
          if (st.phase === 'pending') {
            const t = Date.now();
            record(st, { inputs: {}, status: 'skipped', message: 'the run was cancelled', calls: [], startedAt: t, endedAt: t });
            st.phase = 'done';
            st.status = 'skipped';
          }
        }
      }
      const ans = states.get(graph.answer.node)!;
      let answer: unknown = ans.status === 'ok' ? ans.output : undefined;
      if (answer !== undefined && graph.answer.field) {
        for (const f of graph.answer.field.split('.')) {
          answer = answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>)[f] : undefined;
        }
      }
      let promptTokens = 0;
      let completionTokens = 0;
      for (const ev of events) for (const c of ev.calls) { promptTokens += c.promptTokens; completionTokens += c.completionTokens; }
      resolve({
        runId: opts.runId,
        status: cancelled ? 'cancelled' : ans.status === 'ok' && answer !== undefined ? 'completed' : 'failed',
        answer,
        events,
        promptTokens,
        completionTokens,
        startedAt,
        endedAt: Date.now(),
      });
    };

    const pump = () => {
      if (signal.aborted) {
        if (running === 0) finish();
        return;
      }
      let progressed = true;
      while (progressed) {
        progressed = false;
        for (const id of order) {
          if (running >= concurrency) break;
          const st = states.get(id)!;
          if (!ready(st)) continue;
          progressed = true;
          const g = gather(st);
          const t = Date.now();
          if (g.action === 'cascade') {
            record(st, { inputs: {}, status: 'cascade', failureClass: 'cascade', errorCode: 'UPSTREAM_FAILED', message: `not run: input from failed node ${g.causes.join(', ')}`, causes: g.causes, calls: [], startedAt: t, endedAt: t });
            st.phase = 'done';
            st.status = 'cascade';
            continue;
          }
          if (g.action === 'skip') {
            record(st, { inputs: {}, status: 'skipped', message: g.why, calls: [], startedAt: t, endedAt: t });
            st.phase = 'done';
            st.status = 'skipped';
            continue;
          }
          if (g.action === 'wiring' || hops >= maxHops) {
            const failure = g.action === 'wiring' ? g.failure : wiring('HOP_LIMIT', `hop limit reached: ${maxHops} node runs in this task run`);
            record(st, { inputs: g.inputs, status: 'failed', failureClass: failure.failureClass, errorCode: failure.code, message: failure.message, calls: [], startedAt: t, endedAt: t });
            st.phase = 'done';
            st.status = 'failed';
            continue;
          }
          hops++;
          running++;
          st.phase = 'running';
          const attempt = st.attempt;
          opts.sink?.nodeStarted?.({ runId: opts.runId, nodeId: st.node.id, attempt, startedAt: t });
          runNode(st.node, g.inputs, {
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
          }).then(
            (res) => settle(st, attempt, g.inputs, t, { ok: true, output: res.output, calls: res.calls }),
            (err: NodeFailure & { calls?: ModelCallRecord[] }) => settle(st, attempt, g.inputs, t, { ok: false, failure: err, calls: err.calls ?? [] }),
          );
        }
      }
      if (running === 0) finish();
    };

    const settle = (
      st: State,
      attempt: number,
      inputs: Record<string, unknown>,
      started: number,
      r: { ok: true; output: unknown; calls: ModelCallRecord[] } | { ok: false; failure: NodeFailure; calls: ModelCallRecord[] },
    ) => {
      running--;
      const saved = { attempt: st.attempt };
      st.attempt = attempt;
      if (r.ok) {
        record(st, { inputs, output: r.output, status: 'ok', calls: r.calls, startedAt: started, endedAt: Date.now() });
      } else {
        const f = r.failure;
        record(st, { inputs, status: 'failed', failureClass: f.failureClass, errorCode: f.code, message: f.message, calls: r.calls, startedAt: started, endedAt: Date.now(), simulated: f.simulated || undefined });
      }
      st.attempt = saved.attempt;
      if (st.stale) {
        // A loop re-entered this node while it ran: its result is superseded; it runs again.
        st.stale = false;
        st.attempt = attempt + 1;
      } else {
        st.phase = 'done';
        st.status = r.ok ? 'ok' : 'failed';
        st.output = r.ok ? r.output : undefined;
        if (r.ok) {
          for (const e of loopOut.get(st.node.id)!) {
            const n = loopCount.get(e) ?? 0;
            if (n < e.maxIterations! && (!e.condition || evalCondition(e.condition, r.output))) {
              loopCount.set(e, n + 1);
              reenter(e, r.output);
              break;
            }
          }
        }
      }
      pump();
    };

    const onAbort = () => { if (running === 0) finish(); };
    signal.addEventListener('abort', onAbort, { once: true });
    pump();
  });
}
