/**
 * Credit benchmark: computeCredit over a 100,000-node trace, and the ratio of its time to a
 * 10,000-node trace of the same shape (linear scaling gives about 10). Prints nothing.
 */
import { asNodeId, asRoleName, type NodeId } from '../core/ids.ts';
import { computeCredit, type CreditEvent, type CreditGraph } from '../core/blame/index.ts';

/** A layered DAG (each node reads its predecessor and, every 5th, one 50 back); 1% of nodes fail. */
export function creditFixture(n: number): { graph: CreditGraph; events: CreditEvent[] } {
  const roles = ['planner', 'solver', 'verifier', 'answerer'].map(asRoleName);
  const ids: NodeId[] = Array.from({ length: n }, (_, i) => asNodeId(`n${i}`));
  const graph: CreditGraph = { nodes: ids.map((id, i) => ({ id, wiredBy: [roles[(i * 7) % 4]!], runBy: roles[i % 4]! })), edges: [] };
  for (let i = 1; i < n; i++) {
    graph.edges.push({ from: ids[i - 1]!, to: ids[i]!, optional: i % 3 === 0 });
    if (i % 5 === 0 && i >= 50) graph.edges.push({ from: ids[i - 50]!, to: ids[i]!, optional: true });
  }
  // Failures every 100th node; the node after each failure cascades unless its edge is optional.
  const events: CreditEvent[] = ids.map((id, i) => {
    if (i % 100 === 7) return { nodeId: id, attempt: 1, status: 'failed', failureClass: i % 200 === 7 ? 'execution' : 'wiring', errorCode: 'X' };
    if (i % 100 === 8 && i % 3 !== 0) return { nodeId: id, attempt: 1, status: 'cascade', failureClass: 'cascade' };
    return { nodeId: id, attempt: 1, status: 'ok' };
  });
  return { graph, events };
}

function best(fn: () => void, repeats: number): number {
  let t = Infinity;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    fn();
    t = Math.min(t, performance.now() - t0);
  }
  return t;
}

export function benchCredit(): { ms100k: number; ms10k: number; ratio: number; roots: number } {
  const big = creditFixture(100_000);
  const small = creditFixture(10_000);
  let roots = 0;
  for (let w = 0; w < 3; w++) { computeCredit(small.graph, small.events); computeCredit(big.graph, big.events); } // warm up the JIT on both
  const ms10k = best(() => computeCredit(small.graph, small.events), 20);
  const ms100k = best(() => { roots = computeCredit(big.graph, big.events).roots.length; }, 5);
  return { ms100k, ms10k, ratio: ms100k / ms10k, roots };
}
