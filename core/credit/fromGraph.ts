import type { Graph } from '../workflow/graph.ts';
import type { CreditGraph } from './types.ts';

/**
 * The credit view of a workflow graph: authors per node (`wiredBy` plus any shared wirers,
 * `runBy` = the node's role) and forward edges, an edge being optional when it feeds an
 * optional input port. Loop back edges are left out (credit reads final attempts).
 */
export function creditGraphOf(graph: Graph): CreditGraph {
  const optional = new Set<string>();
  for (const n of graph.nodes) for (const p of n.inputs) if (p.optional) optional.add(`${n.id}\u0000${p.name}`);
  return {
    nodes: graph.nodes.map((n) => ({ id: n.id, wiredBy: [n.wiredBy, ...(n.sharedWiredBy ?? [])], runBy: n.role })),
    edges: graph.edges
      .filter((e) => !e.maxIterations)
      .map((e) => ({ from: e.from, to: e.to, optional: e.type === 'data' && e.port !== undefined && optional.has(`${e.to}\u0000${e.port}`) })),
  };
}
