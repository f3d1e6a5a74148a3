import type { NodeId } from '../../ids.ts';
import type { Graph, GraphNode } from '../../workflow/graph.ts';
import type { CreditGraph } from './types.ts';

/**
 * The one node that wrote a role-less tool node's whole argument, or undefined: every required
 * (non-loop) input port reads the same node, that node is run by a role, no required port reads
 * a task field, and the tool has a single wirer. Several producers, a task input or shared wiring
 * leave it unknown (credit then reports an execution fault there as ambiguous).
 */
function argumentAuthor(node: GraphNode, byId: ReadonlyMap<string, GraphNode>): NodeId | undefined {
  if (node.kind !== 'tool' || node.role || node.sharedWiredBy?.length) return undefined;
  let from: NodeId | undefined;
  for (const p of node.inputs) {
    if (p.optional || p.loop) continue;
    if (p.source.kind !== 'node') return undefined;
    if (from !== undefined && p.source.node !== from) return undefined;
    from = p.source.node;
  }
  return from !== undefined && byId.get(from)?.role ? from : undefined;
}

/**
 * The credit view of a workflow graph: authors per node (`wiredBy` plus any shared wirers,
 * `runBy` = the node's role, `argumentFrom` = the one agent or skill node that wrote a role-less
 * tool node's whole argument: see `argumentAuthor`) and forward edges, an edge being optional
 * when it feeds an optional input port. Loop back edges are left out (credit reads final attempts).
 */
export function creditGraphOf(graph: Graph): CreditGraph {
  const optional = new Set<string>();
  for (const n of graph.nodes) for (const p of n.inputs) if (p.optional) optional.add(`${n.id}\u0000${p.name}`);
  const byId = new Map(graph.nodes.map((n) => [n.id as string, n]));
  return {
    nodes: graph.nodes.map((n) => {
      const node: CreditGraph['nodes'][number] = { id: n.id, wiredBy: [n.wiredBy, ...(n.sharedWiredBy ?? [])], runBy: n.role };
      const author = argumentAuthor(n, byId);
      if (author !== undefined) node.argumentFrom = author;
      return node;
    }),
    edges: graph.edges
      .filter((e) => !e.maxIterations)
      .map((e) => ({ from: e.from, to: e.to, optional: e.type === 'data' && e.port !== undefined && optional.has(`${e.to}\u0000${e.port}`) })),
  };
}
