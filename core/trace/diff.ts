/**
 * Run diff: two runs of one workflow aligned node run by node run, every difference named, and
 * the FIRST divergence found — the node run where the two runs stop doing the same thing, and
 * what about it differed first. Pure: plain data in, plain data out.
 *
 * Alignment. A node run is keyed by (node id, attempt); keys present in one run only (a loop
 * taken in one run only, or nodes of a different design) are aligned with nothing.
 *
 * What is compared, in the order data flows through a node run (`DIFF_ASPECTS`):
 *   input (each port) -> per model call i: prompt (system, prompt text, JSON schema of the
 *   grammar), sampling (seed, sampling parameters, model), completion (sampled text, error,
 *   stop reason) -> output (a tool's result, an agent's parsed output) -> status (status,
 *   failure class, error code, message).
 * A node run's differences are listed in that order, so its first difference is what diverged
 * first in it. Timings, token counts and token ids are not compared (they follow from the text
 * or from the machine), nor the SIMULATED-fault labels (a replay does not set them; what a fault
 * did shows in the calls, output and status). `sampling` is a setting, not behaviour: `firstBehaviour` skips it.
 *
 * Order, and "first". Node runs are ordered by (depth, rank, attempt, node id):
 *  - depth: the causal depth of the node run in the run that ran it, the smaller of the two
 *    when both ran it. In one run, walking its events in completion order (`seq`), a node run's
 *    depth is 1 + the largest depth among its node's previous attempt and, for every node with
 *    an edge into its node (data, control and loop edges of that run's graph), that node's
 *    latest run finished before it; 0 without any. So every node run comes after the runs
 *    whose results it could have read. Without a graph, depth is the position in completion order.
 *  - rank: the node's position in a topological order (Kahn, "Topological sorting of large
 *    networks", CACM 5(11), 1962) of the forward (non-loop) edges of both runs' graphs, ties in
 *    document order (run a's graph, then run b's); nodes in neither graph come last.
 * The first divergence is the first node run in this order with a difference. Ordering by
 * (rank, attempt) alone would be wrong with loops: the second attempt of a node re-entered by a
 * loop would come before the first run of the verifier that sent the loop back, so the
 * difference that caused the loop (the verifier's verdict) would not be named first.
 */
import type { NodeEvent, NodeStatus } from './events.ts';

/** The part of a graph the diff reads: node ids (document order) and edges (loop back edges carry `maxIterations`). */
export interface DiffGraph {
  nodes: ReadonlyArray<{ id: string }>;
  edges: ReadonlyArray<{ from: string; to: string; maxIterations?: number }>;
}

/** One run as `diffRuns` reads it. */
export interface DiffSide {
  /** Its node events, any order (`seq` gives the completion order). */
  events: readonly NodeEvent[];
  /** The graph the run ran (a designed run: with its design spliced in); absent: the other side's, else completion order only. */
  graph?: DiffGraph;
}

/** What about a node run differs, in data-flow order (see the module comment). */
export type DiffAspect = 'presence' | 'input' | 'prompt' | 'sampling' | 'completion' | 'output' | 'status';

/** The aspects in data-flow order through a node run. */
export const DIFF_ASPECTS: readonly DiffAspect[] = ['presence', 'input', 'prompt', 'sampling', 'completion', 'output', 'status'];

/** Each aspect as people read it (the CLI's table and the lab's diff panel). */
export const DIFF_ASPECT_LABEL: Readonly<Record<DiffAspect, string>> = {
  presence: 'ran in one run only',
  input: 'input',
  prompt: 'prompt',
  sampling: 'sampling',
  completion: 'sampled text',
  output: 'output',
  status: 'status',
};

/** What differs in an aligned node run, grouped by aspect: `input (plan) · prompt (call 0 prompt)`; '' when nothing does. */
export function differsText(n: AlignedNode): string {
  if (n.in !== 'both') return `ran in ${n.in.toUpperCase()} only`;
  const groups = new Map<DiffAspect, string[]>();
  for (const d of n.differences) groups.set(d.aspect, [...(groups.get(d.aspect) ?? []), d.at.replace(/^input /, '')]);
  return [...groups].map(([aspect, at]) => (aspect === 'output' ? 'output' : `${DIFF_ASPECT_LABEL[aspect]} (${at.join(', ')})`)).join(' · ');
}

/** One difference of an aligned node run. */
export interface Difference {
  aspect: DiffAspect;
  /** Where in the node run: `ran`, `input <port>`, `call <i>`, `call <i> prompt|system|schema|seed|params|model|completion|error|stop`, `output`, `status`, `failure class`, `error code`, `message`. */
  at: string;
  /** The value in run a (text as is, anything else as canonical JSON); absent when run a has none. */
  a?: string;
  /** The value in run b; absent when run b has none. */
  b?: string;
  /** For two texts: the 0-based index of the first character where they differ. */
  offset?: number;
}

/** One aligned node run. */
export interface AlignedNode {
  nodeId: string;
  attempt: number;
  kind: NodeEvent['kind'];
  role?: string;
  /** Which runs ran it. */
  in: 'both' | 'a' | 'b';
  /** Causal depth (module comment), the smaller of the two runs'. */
  depth: number;
  /** Topological rank of the node in both graphs (module comment). */
  rank: number;
  a?: { seq: number; status: NodeStatus };
  b?: { seq: number; status: NodeStatus };
  /** In data-flow order; empty when the two node runs are the same. */
  differences: Difference[];
}

/** The first divergence: the node run, and its first difference. */
export interface Divergence {
  /** Index into `RunDiff.nodes`. */
  index: number;
  nodeId: string;
  attempt: number;
  aspect: DiffAspect;
  difference: Difference;
}

/** `diffRuns`' answer. */
export interface RunDiff {
  /** Every node run of either run, in diff order (module comment). */
  nodes: AlignedNode[];
  /** The first node run with any difference; absent when the runs are the same. */
  first?: Divergence;
  /** The first difference that is not a sampling setting (what the runs did); absent when they behaved the same. */
  firstBehaviour?: Divergence;
  counts: {
    /** Node runs aligned (of either run). */
    nodes: number;
    /** Node runs with a difference (only-in-one included). */
    differing: number;
    onlyA: number;
    onlyB: number;
  };
  /** True when no node run differs in anything compared. */
  same: boolean;
}

/**
 * Aligns two runs node run by node run and names every difference and the first divergence
 * (see the module comment for what is compared and what "first" means).
 * Shapes: `a`, `b` are `DiffSide`s; values in differences are strings (canonical JSON for
 * non-text). Never throws for well-formed events; two events of one run with the same
 * (node, attempt) keep the later one (by seq).
 */
export function diffRuns(a: DiffSide, b: DiffSide): RunDiff {
  const ga = a.graph ?? b.graph;
  const gb = b.graph ?? a.graph;
  const evA = byKey(a.events);
  const evB = byKey(b.events);
  const depthA = depths(a.events, ga);
  const depthB = depths(b.events, gb);
  const rank = ranks([ga, gb], [a.events, b.events]);

  const keys = new Set([...evA.keys(), ...evB.keys()]);
  const nodes: AlignedNode[] = [];
  for (const k of keys) {
    const x = evA.get(k);
    const y = evB.get(k);
    const e = (x ?? y)!;
    const depth = Math.min(depthA.get(k) ?? Infinity, depthB.get(k) ?? Infinity);
    nodes.push({
      nodeId: e.nodeId,
      attempt: e.attempt,
      kind: e.kind,
      ...(e.role ? { role: e.role } : {}),
      in: x && y ? 'both' : x ? 'a' : 'b',
      depth,
      rank: rank.get(e.nodeId) ?? Number.MAX_SAFE_INTEGER,
      ...(x ? { a: { seq: x.seq, status: x.status } } : {}),
      ...(y ? { b: { seq: y.seq, status: y.status } } : {}),
      differences: x && y ? compareEvents(x, y) : [{ aspect: 'presence', at: 'ran', ...(x ? { a: x.status } : {}), ...(y ? { b: y.status } : {}) }],
    });
  }
  nodes.sort((p, q) => p.depth - q.depth || p.rank - q.rank || p.attempt - q.attempt || (p.nodeId < q.nodeId ? -1 : p.nodeId > q.nodeId ? 1 : 0));

  let first: Divergence | undefined;
  let firstBehaviour: Divergence | undefined;
  nodes.forEach((n, index) => {
    if (!first && n.differences.length) first = divergence(n, index, n.differences[0]!);
    const behaviour = n.differences.find((d) => d.aspect !== 'sampling');
    if (!firstBehaviour && behaviour) firstBehaviour = divergence(n, index, behaviour);
  });
  const differing = nodes.filter((n) => n.differences.length).length;
  return {
    nodes,
    ...(first ? { first } : {}),
    ...(firstBehaviour ? { firstBehaviour } : {}),
    counts: { nodes: nodes.length, differing, onlyA: nodes.filter((n) => n.in === 'a').length, onlyB: nodes.filter((n) => n.in === 'b').length },
    same: differing === 0,
  };
}

const divergence = (n: AlignedNode, index: number, d: Difference): Divergence => ({ index, nodeId: n.nodeId, attempt: n.attempt, aspect: d.aspect, difference: d });

const keyOf = (e: { nodeId: string; attempt: number }) => `${e.nodeId}#${e.attempt}`;

function bySeq(events: readonly NodeEvent[]): NodeEvent[] {
  return [...events].sort((x, y) => x.seq - y.seq);
}

function byKey(events: readonly NodeEvent[]): Map<string, NodeEvent> {
  const out = new Map<string, NodeEvent>();
  for (const e of bySeq(events)) out.set(keyOf(e), e);
  return out;
}

/** Causal depth of each node run of one run (module comment). */
function depths(events: readonly NodeEvent[], graph: DiffGraph | undefined): Map<string, number> {
  const out = new Map<string, number>();
  const ordered = bySeq(events);
  if (!graph) {
    ordered.forEach((e, i) => out.set(keyOf(e), i));
    return out;
  }
  const known = new Set(graph.nodes.map((n) => n.id));
  const preds = new Map<string, string[]>();
  for (const e of graph.edges) preds.set(e.to, [...(preds.get(e.to) ?? []), e.from]);
  const latest = new Map<string, number>();
  let deepest = -1;
  for (const e of ordered) {
    let d = latest.get(e.nodeId) ?? -1;
    // A node the graph does not name may have read anything before it.
    if (!known.has(e.nodeId)) d = Math.max(d, deepest);
    for (const p of preds.get(e.nodeId) ?? []) d = Math.max(d, latest.get(p) ?? -1);
    latest.set(e.nodeId, d + 1);
    deepest = Math.max(deepest, d + 1);
    out.set(keyOf(e), d + 1);
  }
  return out;
}

/** Topological rank of every node of the graphs (Kahn, ties in document order), then nodes only the events name. */
function ranks(graphs: ReadonlyArray<DiffGraph | undefined>, runs: ReadonlyArray<readonly NodeEvent[]>): Map<string, number> {
  const order: string[] = [];
  const index = new Map<string, number>();
  const add = (id: string) => {
    if (!index.has(id)) index.set(id, order.push(id) - 1);
  };
  for (const g of graphs) for (const n of g?.nodes ?? []) add(n.id);
  const indegree = order.map(() => 0);
  const out = order.map((): number[] => []);
  const seen = new Set<string>();
  for (const g of graphs) {
    for (const e of g?.edges ?? []) {
      const from = index.get(e.from);
      const to = index.get(e.to);
      const k = `${e.from}\u0000${e.to}`;
      if (e.maxIterations || from === undefined || to === undefined || from === to || seen.has(k)) continue;
      seen.add(k);
      out[from]!.push(to);
      indegree[to]!++;
    }
  }
  const ready = new MinHeap();
  indegree.forEach((d, i) => d === 0 && ready.push(i));
  const rank = new Map<string, number>();
  for (let i = ready.pop(); i !== undefined; i = ready.pop()) {
    rank.set(order[i]!, rank.size);
    for (const j of out[i]!) if (--indegree[j]! === 0) ready.push(j);
  }
  // A cycle across the two graphs (a -> b in one, b -> a in the other): the rest in document order.
  for (const id of order) if (!rank.has(id)) rank.set(id, rank.size);
  for (const events of runs) for (const e of bySeq(events)) if (!rank.has(e.nodeId)) rank.set(e.nodeId, rank.size);
  return rank;
}

/** A binary min-heap of numbers (Williams, "Algorithm 232: Heapsort", CACM 7(6), 1964). */
class MinHeap {
  private readonly a: number[] = [];
  push(x: number): void {
    const a = this.a;
    let i = a.push(x) - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= x) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = x;
  }
  pop(): number | undefined {
    const a = this.a;
    if (!a.length) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= a.length) break;
        const c = l + 1 < a.length && a[l + 1]! < a[l]! ? l + 1 : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/** The differences of two runs of one node run, in data-flow order (module comment). */
export function compareEvents(x: NodeEvent, y: NodeEvent): Difference[] {
  const out: Difference[] = [];
  const ports = [...new Set([...Object.keys(x.inputs ?? {}), ...Object.keys(y.inputs ?? {})])].sort();
  for (const p of ports) value(out, 'input', `input ${p}`, x.inputs?.[p], y.inputs?.[p], Object.hasOwn(x.inputs ?? {}, p), Object.hasOwn(y.inputs ?? {}, p));
  const calls = Math.max(x.calls.length, y.calls.length);
  for (let i = 0; i < calls; i++) {
    const c = x.calls[i];
    const d = y.calls[i];
    if (!c || !d) {
      out.push({ aspect: 'prompt', at: `call ${i}`, ...(c ? { a: c.prompt } : {}), ...(d ? { b: d.prompt } : {}) });
      continue;
    }
    text(out, 'prompt', `call ${i} system`, c.system, d.system);
    text(out, 'prompt', `call ${i} prompt`, c.prompt, d.prompt);
    value(out, 'prompt', `call ${i} schema`, c.jsonSchema, d.jsonSchema);
    value(out, 'sampling', `call ${i} seed`, c.seed, d.seed);
    value(out, 'sampling', `call ${i} params`, c.params, d.params);
    text(out, 'sampling', `call ${i} model`, c.model, d.model);
    text(out, 'completion', `call ${i} completion`, c.completion, d.completion);
    text(out, 'completion', `call ${i} error`, c.error, d.error);
    text(out, 'completion', `call ${i} stop`, c.stopReason, d.stopReason);
  }
  if (typeof x.output === 'string' && typeof y.output === 'string') text(out, 'output', 'output', x.output, y.output);
  else value(out, 'output', 'output', x.output, y.output);
  text(out, 'status', 'status', x.status, y.status);
  text(out, 'status', 'failure class', x.failureClass, y.failureClass);
  text(out, 'status', 'error code', x.errorCode, y.errorCode);
  text(out, 'status', 'message', x.message, y.message);
  return out;
}

function text(out: Difference[], aspect: DiffAspect, at: string, a: string | undefined, b: string | undefined): void {
  if (a === b) return;
  const d: Difference = { aspect, at, ...(a === undefined ? {} : { a }), ...(b === undefined ? {} : { b }) };
  if (a !== undefined && b !== undefined) d.offset = firstDifference(a, b);
  out.push(d);
}

function value(out: Difference[], aspect: DiffAspect, at: string, a: unknown, b: unknown, hasA = a !== undefined, hasB = b !== undefined): void {
  const ca = canonicalJson(a);
  const cb = canonicalJson(b);
  if (ca === cb && hasA === hasB) return;
  out.push({ aspect, at, ...(hasA ? { a: ca } : {}), ...(hasB ? { b: cb } : {}) });
}

/** The 0-based index of the first character where `a` and `b` differ (the shorter's length when one is a prefix of the other). */
export function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** JSON with object keys sorted (the same form as core/experiments/replay.ts `canonical`); undefined -> ''. */
export function canonicalJson(v: unknown): string {
  if (v === undefined) return '';
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([p], [q]) => (p < q ? -1 : p > q ? 1 : 0)))
      : x,
  ) ?? '';
}
