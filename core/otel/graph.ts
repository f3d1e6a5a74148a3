/**
 * The graph a run ran, as plain JSON that travels inside a trace (the `flowlab.graph` attribute
 * of a run's root span) and that an import stores with the run: each node with its kind, tool or
 * skill and authors, each edge with whether credit reads it. It is exactly what structural credit
 * needs (core/blame/credit `CreditGraph`) plus what span names and views need (tool and skill names,
 * loop edges), so credit computed on an imported trace equals credit computed on the original.
 */
import type { CreditGraph } from '../blame/credit/index.ts';
import { creditGraphOf } from '../blame/credit/index.ts';
import { runGraphOf } from '../design/index.ts';
import type { NodeId, RoleName } from '../ids.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { CheckRegistry, Graph, ToolLookup } from '../workflow/index.ts';

export interface TraceGraphNode {
  id: NodeId;
  kind: 'agent' | 'tool' | 'skill';
  /** The node's role (agent and skill nodes; a tool node a role calls). */
  role?: RoleName;
  tool?: string;
  skill?: string;
  /** Who wired the node in: first the node's own wirer, then any shared wirers (credit's `wiredBy`). */
  wiredBy: RoleName[];
  /** The role that ran it, as credit reads it (core/blame/credit/fromGraph.ts: the node's role). */
  runBy?: RoleName;
  /** A role-less tool's argument author (credit's `argumentFrom`): its execution fault is that node's role's. */
  argumentFrom?: NodeId;
}

export interface TraceGraphEdge {
  from: NodeId;
  to: NodeId;
  /** The target can run without this input (an optional port): never a cascade. */
  optional?: boolean;
  /** A loop back edge (credit leaves it out: it reads final attempts). */
  loop?: boolean;
}

export interface TraceGraph {
  nodes: TraceGraphNode[];
  edges: TraceGraphEdge[];
}

/** The trace graph of a compiled workflow graph (authors and edges as `creditGraphOf` reads them). */
export function traceGraphOf(graph: Graph): TraceGraph {
  const credit = creditGraphOf(graph);
  let forward = 0; // credit.edges are graph.edges without the loop edges, in order
  return {
    nodes: graph.nodes.map((n, i) => ({
      id: n.id,
      kind: n.kind,
      ...(n.role ? { role: n.role } : {}),
      ...(n.tool ? { tool: n.tool } : {}),
      ...(n.skill ? { skill: n.skill } : {}),
      wiredBy: [...credit.nodes[i]!.wiredBy],
      ...(credit.nodes[i]!.runBy ? { runBy: credit.nodes[i]!.runBy } : {}),
      ...(credit.nodes[i]!.argumentFrom ? { argumentFrom: credit.nodes[i]!.argumentFrom } : {}),
    })),
    edges: graph.edges.map((e) =>
      e.maxIterations
        ? { from: e.from, to: e.to, loop: true }
        : { from: e.from, to: e.to, ...(credit.edges[forward++]!.optional ? { optional: true } : {}) },
    ),
  };
}

/**
 * The trace graph of one stored run: its workflow's graph with the run's own design spliced in
 * (core/design `runGraphOf`: a designed run's graph is rebuilt from its design node's record).
 */
export function runTraceGraph(base: Graph, events: readonly NodeEvent[], opts: { tools: ToolLookup; checks?: CheckRegistry }): TraceGraph {
  return traceGraphOf(runGraphOf(base, events, opts));
}

/** What structural credit reads of a trace graph: authors per node, forward edges (core/blame/credit). */
export function creditGraphOfTrace(g: TraceGraph): CreditGraph {
  return {
    nodes: g.nodes.map((n) => ({ id: n.id, wiredBy: [...n.wiredBy], ...(n.runBy ? { runBy: n.runBy } : {}), ...(n.argumentFrom ? { argumentFrom: n.argumentFrom } : {}) })),
    edges: g.edges.filter((e) => !e.loop).map((e) => ({ from: e.from, to: e.to, ...(e.optional ? { optional: true } : {}) })),
  };
}
