/** Graph searches the compile stages use on `{from, to}` edge lists. */
import type { NodeId } from '../../ids.ts';

/**
 * Returns a cycle as [a, b, ..., a], or null when the graph is acyclic. Iterative depth-first
 * search with white/grey/black colouring (Cormen et al., Introduction to Algorithms, 3rd ed.,
 * §22.3: a grey successor closes a back edge). Edges whose `from` is not in `ids` are ignored.
 */
export function findCycle(ids: NodeId[], edges: Array<{ from: NodeId; to: NodeId }>): NodeId[] | null {
  const out = new Map<NodeId, NodeId[]>(ids.map((id) => [id, []]));
  for (const e of edges) out.get(e.from)?.push(e.to);
  const color = new Map<NodeId, 0 | 1 | 2>();
  const parent = new Map<NodeId, NodeId>();
  for (const start of ids) {
    if (color.get(start)) continue;
    const stack: Array<{ id: NodeId; i: number }> = [{ id: start, i: 0 }];
    color.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1]!;
      const next = out.get(top.id)?.[top.i++];
      if (next === undefined) {
        color.set(top.id, 2);
        stack.pop();
        continue;
      }
      const c = color.get(next) ?? 0;
      if (c === 1) {
        const cyc = [next];
        for (let x: NodeId | undefined = top.id; x !== undefined && x !== next; x = parent.get(x)) cyc.push(x);
        cyc.push(next);
        return cyc.reverse();
      }
      if (c === 0) {
        color.set(next, 1);
        parent.set(next, top.id);
        stack.push({ id: next, i: 0 });
      }
    }
  }
  return null;
}

/** Whether `to` can be reached from `from` along `edges` (breadth-first search; `from` reaches itself). */
export function reaches(from: NodeId, to: NodeId, edges: Array<{ from: NodeId; to: NodeId }>): boolean {
  const seen = new Set<NodeId>([from]);
  const queue = [from];
  while (queue.length) {
    const x = queue.shift()!;
    if (x === to) return true;
    for (const e of edges) if (e.from === x && !seen.has(e.to)) { seen.add(e.to); queue.push(e.to); }
  }
  return false;
}
