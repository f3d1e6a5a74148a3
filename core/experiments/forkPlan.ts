/**
 * The pure routing rule of a fork (core/experiments/fork.ts, docs/fork.md): which node runs are
 * served from the parent's recording, which get the intervention, which run live; and the
 * `node@attempt` references of the CLI.
 */
import type { Graph } from '../workflow/index.ts';
import type { NodeEvent } from '../trace/events.ts';
import { ForkError, type Intervention } from './forkError.ts';

/** Where each node run of a fork is answered from. */
export type ForkSide = 'recorded' | 'intervene' | 'live';

/**
 * The pure routing rule of a fork (see the module comment): from the graph the parent ran, its
 * events and the fork node run, the side each node run is answered from.
 */
export function forkPlan(graph: Graph, events: readonly NodeEvent[], nodeId: string, attempt: number, intervention: Intervention['kind']): (n: string, k: number) => ForkSide {
  const seqOf = new Map(events.map((e) => [`${e.nodeId}#${e.attempt}`, e.seq]));
  const forkSeq = seqOf.get(`${nodeId}#${attempt}`) ?? Infinity;
  const isDesign = graph.designNode === nodeId;
  const reach = reachableFrom(graph, nodeId);
  return (n, k) => {
    if (n === nodeId) return k < attempt ? 'recorded' : k === attempt && intervention === 'output' ? 'intervene' : 'live';
    if (isDesign) return 'live';
    if (!reach.has(n)) return 'recorded';
    const s = seqOf.get(`${n}#${k}`);
    return s !== undefined && s < forkSeq ? 'recorded' : 'live';
  };
}

/** Node ids reachable from `from` along any edge (data, control, loop), `from` excluded unless on a cycle. */
export function reachableFrom(graph: Pick<Graph, 'edges'>, from: string): Set<string> {
  const out = new Map<string, string[]>();
  for (const e of graph.edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  const seen = new Set<string>();
  const stack = [...(out.get(from) ?? [])];
  while (stack.length) {
    const n = stack.pop()!;
    if (seen.has(n)) continue;
    seen.add(n);
    stack.push(...(out.get(n) ?? []));
  }
  return seen;
}

/** `node` or `node@attempt` (the CLI's `--node`). Errors: ForkError BAD_INTERVENTION (field `node`). */
export function parseNodeRef(text: string): { nodeId: string; attempt?: number } {
  const m = /^([^@\s]+)(?:@(\d{1,6}))?$/.exec(text.trim());
  if (!m) throw new ForkError('BAD_INTERVENTION', 'node', `--node "${text}": expected <node-id> or <node-id>@<attempt> (attempts start at 1)`);
  return m[2] === undefined ? { nodeId: m[1]! } : { nodeId: m[1]!, attempt: Number(m[2]) };
}

