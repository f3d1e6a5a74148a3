/**
 * The engine's step algebra: what a run of a workflow graph does next, as functions of plain
 * data with no I/O, no clock and no promises. core/engine/runWorkflow.ts is the thin async loop
 * over them: it starts the node runs these functions admit, records events, and feeds each
 * result back through `settleRun`. (The same split as LangGraph.js's `pregel/algo.ts`, the pure
 * part, under `pregel/loop.ts`, the driver.)
 *
 * Decisions (`isReady`, `edgeInput`, `decideNode`, `admitRun`, `loopToTake`, `reentrySet`,
 * `runAnswer`, `tokenTotals`) are pure. Transitions (`startRun`, `finishNode`, `reenterLoop`,
 * `settleRun`) change only the `RunState` they are given, deterministically: the state is kept
 * in place because copying it per node would cost O(nodes) per step.
 *
 * Readiness is kept incrementally (Kahn, "Topological sorting of large networks", CACM 5(11),
 * 1962: in-degree counters and a queue of nodes whose count is zero): each node counts its
 * forward in-edges whose source is not done, every phase change goes through the transitions,
 * which update the counts of the node's successors only and queue those that become ready
 * (core/engine/readyQueue.ts). Finishing a node therefore costs O(its out-degree + log n), not
 * a rescan of every pending node. The state must only be changed through the transitions.
 */
import type { NodeId } from '../ids.ts';
import type { NodeEvent, NodeStatus } from '../trace/events.ts';
import { evalCondition } from '../workflow/condition.ts';
import type { Graph, GraphEdge, GraphNode } from '../workflow/graph.ts';
import { wiring, type NodeFailure } from './failure.ts';
import { beginPass as beginQueuePass, enqueue, newReadyQueue, takeReady, type ReadyQueue } from './readyQueue.ts';

/** Where one node of a run stands. */
export interface NodeState {
  node: GraphNode;
  /** pending: not started (or re-entered by a loop); running: its run is in flight; done: it has a status. */
  phase: 'pending' | 'running' | 'done';
  /** 1-based; each loop re-entry of a done node adds one. */
  attempt: number;
  status?: NodeStatus;
  output?: unknown;
  /** Set when a loop re-entered this node while it was running: its result is superseded. */
  stale?: boolean;
  /** Forward (non-loop) in-edges whose source is not done; the node is ready at 0 while pending. */
  waiting: number;
}

/** The graph's edges indexed for scheduling: forward (non-loop) edges in and out, loop edges out. */
export interface Topology {
  /** The order ready nodes start in: explicit `hops`, else document order. */
  order: NodeId[];
  forwardIn: Map<NodeId, GraphEdge[]>;
  forwardOut: Map<NodeId, GraphEdge[]>;
  loopOut: Map<NodeId, GraphEdge[]>;
}

/** Everything a run's next step depends on, besides the graph and the task. */
export interface RunState {
  nodes: Map<NodeId, NodeState>;
  /** Times each loop edge has re-entered its target. */
  loopCount: Map<GraphEdge, number>;
  /** Values carried by loop edges: target -> port -> value (read by the target's loop ports). */
  loopValues: Map<NodeId, Map<string, unknown>>;
  /** Node runs started so far (loops included); bounded by the hop limit. */
  hops: number;
  /** Each node's forward successors, one entry per forward edge (whose `waiting` it counts in). */
  successors: ReadonlyMap<NodeId, readonly NodeState[]>;
  /** Nodes that became ready, in start order (see core/engine/readyQueue.ts). */
  ready: ReadyQueue;
}

/** A node already finished before the run starts (its event recorded by the caller): see RunOptions.done. */
export interface FinishedNode {
  status: NodeStatus;
  output?: unknown;
  attempt?: number;
}

/** What to do with a pending node whose forward predecessors are all done. */
export type NodeDecision =
  | { action: 'run'; inputs: Record<string, unknown> }
  | { action: 'cascade'; causes: NodeId[] }
  | { action: 'skip'; why: string }
  | { action: 'wiring'; failure: NodeFailure; inputs: Record<string, unknown> };

/** A finished node run, as the loop hands it back. */
export type RunResult = { ok: true; output: unknown } | { ok: false };

export function topologyOf(graph: Graph): Topology {
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
  return { order: graph.hops ?? graph.nodes.map((n) => n.id), forwardIn, forwardOut, loopOut };
}

/**
 * Every node pending at attempt 1, waiting on each of its forward in-edges; no loop taken, no
 * hop used; the nodes without forward in-edges queued as ready, in start order.
 */
export function initialRunState(graph: Graph, done?: ReadonlyMap<NodeId, FinishedNode>): RunState {
  const nodes = new Map<NodeId, NodeState>(graph.nodes.map((n) => [n.id, { node: n, phase: 'pending', attempt: 1, waiting: 0 }]));
  const successors = new Map<NodeId, NodeState[]>(graph.nodes.map((n) => [n.id, []]));
  if (done) {
    for (const [id, f] of done) {
      const st = nodes.get(id);
      if (st) Object.assign(st, { phase: 'done', status: f.status, output: f.output, attempt: f.attempt ?? 1 });
    }
  }
  for (const e of graph.edges) {
    if (e.maxIterations) continue;
    const to = nodes.get(e.to)!;
    if (nodes.get(e.from)!.phase !== 'done') to.waiting++;
    successors.get(e.from)!.push(to);
  }
  const state: RunState = { nodes, loopCount: new Map(), loopValues: new Map(), hops: 0, successors, ready: newReadyQueue(graph.hops ?? graph.nodes.map((n) => n.id)) };
  for (const st of nodes.values()) if (st.waiting === 0 && st.phase === 'pending') enqueue(state.ready, st.node.id);
  return state;
}

/**
 * A node is ready when it is pending and every forward predecessor is done (its `waiting`
 * count, kept by the transitions, is 0). O(1).
 */
export function isReady(_topo: Topology, state: RunState, id: NodeId): boolean {
  const st = state.nodes.get(id)!;
  return st.phase === 'pending' && st.waiting === 0;
}

/** Transition: a scheduling pass begins at the first place of the start order. */
export function beginPass(state: RunState): void {
  beginQueuePass(state.ready);
}

/**
 * Transition: the next ready node a scheduling pass over the start order meets (see
 * core/engine/readyQueue.ts for the pass), or undefined when none is ready. The caller then
 * decides it and moves it out of pending (`startRun` or `finishNode`).
 */
export function nextReady(topo: Topology, state: RunState): NodeId | undefined {
  return takeReady(state.ready, (id) => isReady(topo, state, id));
}

/**
 * Moves a node to `phase`, keeping readiness: leaving done makes each forward successor wait
 * once more; becoming done releases them, queueing those left with nothing to wait on;
 * becoming pending with nothing to wait on queues the node itself. O(out-degree + log n).
 */
function setPhase(state: RunState, st: NodeState, phase: NodeState['phase']): void {
  const was = st.phase;
  if (was === phase) return;
  st.phase = phase;
  if (was === 'done') for (const s of state.successors.get(st.node.id)!) s.waiting++;
  if (phase === 'done') {
    for (const s of state.successors.get(st.node.id)!) if (--s.waiting === 0 && s.phase === 'pending') enqueue(state.ready, s.node.id);
  } else if (phase === 'pending' && st.waiting === 0) enqueue(state.ready, st.node.id);
}

/**
 * What an edge hands its target, given its (done) source: `failed` when the source failed or
 * cascaded, `inactive` when the source was skipped or the edge's condition is false on the
 * source's output, else `active`.
 */
export function edgeInput(edge: GraphEdge, src: NodeState): 'active' | 'failed' | 'inactive' {
  if (src.status === 'failed' || src.status === 'cascade') return 'failed';
  if (src.status === 'skipped' || (edge.condition && !evalCondition(edge.condition, src.output))) return 'inactive';
  return 'active';
}

/** `value.a.b` along own properties; undefined where a step is missing or not an object. */
export function readField(value: unknown, field: string): unknown {
  let v = value;
  for (const f of field.split('.')) {
    v = v !== null && typeof v === 'object' && Object.hasOwn(v, f) ? (v as Record<string, unknown>)[f] : undefined;
  }
  return v;
}

/**
 * Decides a ready node: `cascade` when a required input's edge comes from a failed node (the
 * causes, deduplicated), else `skip` when a required input's edge is inactive, else `run` with
 * its inputs gathered: loop ports read the value their loop edge carried (null on the first
 * pass), ports of failed or inactive optional edges read null, task ports read the task's field,
 * node ports the source's output (or its field `a.b`). A missing task field or output field on
 * a required port is a `wiring` failure (MISSING_INPUT, MISSING_FIELD) of the node. A node the
 * validator rejected (`wiringFault`, a designed node: core/design) is that wiring failure at once.
 */
export function decideNode(topo: Topology, state: RunState, id: NodeId, taskInput: Record<string, unknown>): NodeDecision {
  const node = state.nodes.get(id)!.node;
  if (node.wiringFault) return { action: 'wiring', inputs: {}, failure: wiring(node.wiringFault.code, node.wiringFault.message) };
  const causes: NodeId[] = [];
  const inactive: string[] = [];
  // Built only once an edge is not active: on the common path (every input active) a node
  // allocates neither set.
  let optionalPorts: Set<string> | undefined;
  let nullPorts: Set<string> | undefined;
  for (const e of topo.forwardIn.get(id)!) {
    const verdict = edgeInput(e, state.nodes.get(e.from)!);
    if (verdict === 'active') continue;
    optionalPorts ??= new Set(node.inputs.filter((p) => p.optional).map((p) => p.name));
    if (e.type === 'data' && e.port !== undefined && optionalPorts.has(e.port)) (nullPorts ??= new Set()).add(e.port);
    else if (verdict === 'failed') causes.push(e.from);
    else inactive.push(`${e.from}${e.condition ? ' (condition false)' : ' (skipped)'}`);
  }
  if (causes.length) return { action: 'cascade', causes: [...new Set(causes)] };
  if (inactive.length) return { action: 'skip', why: `inactive input from ${inactive.join(', ')}` };
  const inputs: Record<string, unknown> = {};
  for (const port of node.inputs) {
    if (port.loop) {
      inputs[port.name] = state.loopValues.get(id)?.get(port.name) ?? null;
      continue;
    }
    if (nullPorts?.has(port.name)) {
      inputs[port.name] = null;
      continue;
    }
    if (port.source.kind === 'task') {
      const v = taskInput[port.source.field];
      if (v === undefined && !port.optional) {
        return { action: 'wiring', inputs, failure: wiring('MISSING_INPUT', `input "${port.name}" reads task.${port.source.field}, which this task does not have (task fields: ${Object.keys(taskInput).join(', ')})`) };
      }
      inputs[port.name] = v ?? null;
    } else {
      const src = state.nodes.get(port.source.node)!;
      let v: unknown = src.output;
      if (port.source.field) {
        v = readField(v, port.source.field);
        if (v === undefined && !port.optional) {
          return { action: 'wiring', inputs, failure: wiring('MISSING_FIELD', `input "${port.name}" reads ${port.source.node}.${port.source.field}, but that output has no field "${port.source.field}"`) };
        }
      }
      inputs[port.name] = v ?? null;
    }
  }
  return { action: 'run', inputs };
}

/**
 * Hop-limit accounting: a `run` decision once `hops` node runs have started and the limit is
 * `maxHops` becomes a wiring failure HOP_LIMIT (the graph's fault: it looped or fanned out too
 * far); every other decision passes unchanged.
 */
export function admitRun(decision: NodeDecision, hops: number, maxHops: number): NodeDecision {
  if (decision.action !== 'run' || hops < maxHops) return decision;
  return { action: 'wiring', inputs: decision.inputs, failure: wiring('HOP_LIMIT', `hop limit reached: ${maxHops} node runs in this task run`) };
}

/**
 * The loop edge a node's ok output takes, if any: the first of its loop edges (document order)
 * that has re-entered fewer than `max_iterations` times and whose condition holds on `output`.
 */
export function loopToTake(loops: readonly GraphEdge[], loopCount: ReadonlyMap<GraphEdge, number>, output: unknown): GraphEdge | undefined {
  for (const e of loops) {
    if ((loopCount.get(e) ?? 0) < e.maxIterations! && (!e.condition || evalCondition(e.condition, output))) return e;
  }
  return undefined;
}

/** The nodes a loop re-entry into `target` runs again: `target` and all it reaches by forward edges (breadth-first). */
export function reentrySet(topo: Topology, target: NodeId): NodeId[] {
  const seen = new Set<NodeId>([target]);
  const queue = [target];
  for (let i = 0; i < queue.length; i++) {
    const id = queue[i]!;
    for (const e of topo.forwardOut.get(id)!) if (!seen.has(e.to)) { seen.add(e.to); queue.push(e.to); }
  }
  return [...seen];
}

/** Transition: a node run starts (one hop used). Returns the attempt it runs as. */
export function startRun(state: RunState, id: NodeId): number {
  const st = state.nodes.get(id)!;
  state.hops++;
  setPhase(state, st, 'running');
  return st.attempt;
}

/** Transition: a node is done with `status` (and its output when ok). */
export function finishNode(state: RunState, id: NodeId, status: NodeStatus, output?: unknown): void {
  const st = state.nodes.get(id)!;
  setPhase(state, st, 'done');
  st.status = status;
  st.output = output;
}

/**
 * Transition: takes loop edge `edge` with its source's output `value`. Counts the iteration,
 * stores the value for the target's loop port (`true` on a control edge), and makes the
 * re-entry set pending again: done nodes move to the next attempt, running ones are marked
 * stale (their result will be superseded), statuses and outputs are cleared.
 */
export function reenterLoop(state: RunState, topo: Topology, edge: GraphEdge, value: unknown): void {
  state.loopCount.set(edge, (state.loopCount.get(edge) ?? 0) + 1);
  if (!state.loopValues.has(edge.to)) state.loopValues.set(edge.to, new Map());
  state.loopValues.get(edge.to)!.set(edge.port ?? edge.from, edge.type === 'data' ? value : true);
  for (const id of reentrySet(topo, edge.to)) {
    const st = state.nodes.get(id)!;
    if (st.phase === 'running') st.stale = true;
    if (st.phase === 'done') st.attempt++;
    setPhase(state, st, 'pending');
    st.status = undefined;
    st.output = undefined;
  }
}

/**
 * Transition: the run of `id` that started as `attempt` finished with `result`. A stale node
 * (re-entered while it ran) stays pending as `attempt + 1` and its result counts for nothing:
 * `rerun`. Otherwise the node is done (ok or failed); an ok output then takes the first open
 * loop edge (`loopToTake`), re-entering its target: `done` with `loop` set.
 */
export function settleRun(state: RunState, topo: Topology, id: NodeId, attempt: number, result: RunResult): { next: 'rerun' } | { next: 'done'; loop?: GraphEdge } {
  const st = state.nodes.get(id)!;
  if (st.stale) {
    st.stale = false;
    st.attempt = attempt + 1;
    return { next: 'rerun' };
  }
  finishNode(state, id, result.ok ? 'ok' : 'failed', result.ok ? result.output : undefined);
  if (!result.ok) return { next: 'done' };
  const loop = loopToTake(topo.loopOut.get(id)!, state.loopCount, result.output);
  if (loop) reenterLoop(state, topo, loop, result.output);
  return { next: 'done', loop };
}

/** The fields of a NodeEvent that describe the node, not its outcome. */
export type EventOutcome = Omit<NodeEvent, 'runId' | 'nodeId' | 'attempt' | 'seq' | 'kind' | 'role' | 'wiredBy' | 'runBy'>;

/** The trace event of one node outcome: `seq` is its place in the run's completion order; `runBy` is the node's role. */
export function nodeEvent(runId: NodeEvent['runId'], node: GraphNode, attempt: number, seq: number, outcome: EventOutcome): NodeEvent {
  return { runId, nodeId: node.id, attempt, seq, kind: node.kind, role: node.role, wiredBy: node.wiredBy, runBy: node.role, ...outcome };
}

/**
 * The run's answer: the answer node's output (or its field `a.b`) when that node is ok, else
 * undefined. The run is `completed` when the answer is defined, else `failed` (or `cancelled`).
 */
export function runAnswer(graph: Graph, state: RunState, cancelled: boolean): { status: 'completed' | 'failed' | 'cancelled'; answer: unknown } {
  const ans = state.nodes.get(graph.answer.node)!;
  let answer: unknown = ans.status === 'ok' ? ans.output : undefined;
  if (answer !== undefined && graph.answer.field) {
    for (const f of graph.answer.field.split('.')) {
      answer = answer !== null && typeof answer === 'object' ? (answer as Record<string, unknown>)[f] : undefined;
    }
  }
  return { status: cancelled ? 'cancelled' : ans.status === 'ok' && answer !== undefined ? 'completed' : 'failed', answer };
}

/** Prompt and completion tokens summed over every model call of `events`. */
export function tokenTotals(events: readonly NodeEvent[]): { promptTokens: number; completionTokens: number } {
  let promptTokens = 0;
  let completionTokens = 0;
  for (const ev of events) for (const c of ev.calls) { promptTokens += c.promptTokens; completionTokens += c.completionTokens; }
  return { promptTokens, completionTokens };
}
