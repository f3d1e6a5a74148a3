/**
 * The graph a designed run actually ran: the workflow's own nodes (the design node and any fixed
 * nodes) plus the nodes the designer drew, rebuilt from the design record alone (pure), so stored
 * runs are scored, shown and replayed without the model.
 */
import type { NodeEvent } from '../trace/index.ts';
import type { CheckRegistry, Graph, GraphEdge, GraphNode, ToolLookup } from '../workflow/index.ts';
import { compileDesign, type DesignCompile } from './compileDesign.ts';
import { isDesignRecord, type DesignRecord } from './record.ts';

/**
 * `base` with the design of `record` spliced in: designed nodes and edges added after the design
 * node; fixed nodes that read `design` (or `design.<field>`) read the designed answer instead; the
 * run's answer is the designed answer when the workflow's own answer was the design node. An
 * unusable design leaves `base` as it is (the design node failed; what reads it cascades).
 */
export function effectiveGraph(base: Graph, record: DesignRecord, opts: { tools: ToolLookup; checks?: CheckRegistry }): Graph {
  const compiled = designOf(base, record, opts);
  return compiled ? splice(base, compiled) : base;
}

/** The design compiled again from its record, or undefined when it was unusable. */
export function designOf(base: Graph, record: DesignRecord, opts: { tools: ToolLookup; checks?: CheckRegistry }): DesignCompile | undefined {
  const stage = base.designNode ? base.nodes.find((n) => n.id === base.designNode)?.design : undefined;
  if (!stage || !record.usable || record.document === undefined) return undefined;
  const compiled = compileDesign(stage, record.document, { ...opts, reserved: base.nodes.map((n) => n.id) });
  return compiled.usable ? compiled : undefined;
}

/** `base` with a usable compiled design spliced in (see effectiveGraph). */
export function splice(base: Graph, d: DesignCompile): Graph {
  const designId = base.designNode!;
  const ans = d.answer!;
  const join = (field?: string) => [ans.field, field].filter(Boolean).join('.') || undefined;
  const fixed: GraphNode[] = base.nodes.map((n) =>
    n.id === designId || !n.inputs.some((p) => p.source.kind === 'node' && p.source.node === designId)
      ? n
      : { ...n, inputs: n.inputs.map((p) => (p.source.kind === 'node' && p.source.node === designId ? { ...p, source: { kind: 'node', node: ans.node, field: join(p.source.field) } } : p)) },
  );
  const edges: GraphEdge[] = base.edges.map((e) => (e.from === designId ? { ...e, from: ans.node } : e));
  const at = fixed.findIndex((n) => n.id === designId) + 1;
  return {
    ...base,
    nodes: [...fixed.slice(0, at), ...d.nodes, ...fixed.slice(at)],
    edges: [...d.edges, ...edges],
    answer: base.answer.node === designId ? { node: ans.node, field: join(base.answer.field) } : base.answer,
  };
}

/**
 * The graph one stored run ran: `effectiveGraph` of its design node's record (final attempt), or
 * `base` for a workflow without a design stage (or a run whose design node left no record).
 */
export function runGraphOf(base: Graph, events: readonly NodeEvent[], opts: { tools: ToolLookup; checks?: CheckRegistry }): Graph {
  if (!base.designNode) return base;
  let ev: NodeEvent | undefined;
  for (const e of events) if (e.nodeId === base.designNode && (!ev || e.attempt >= ev.attempt)) ev = e;
  return ev && isDesignRecord(ev.output) ? effectiveGraph(base, ev.output, opts) : base;
}
