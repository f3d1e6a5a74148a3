/**
 * Compile stage 2 of 3 (core/workflow/compile.ts): the edge list, built from the declared edges
 * and the node-sourced input ports, with each data edge wired into a port of its target.
 */
import { asNodeId } from '../../ids.ts';
import { ConditionError, parseCondition } from '../condition.ts';
import type { SpecIssue } from '../errors.ts';
import type { GraphEdge, GraphNode, InputPort } from '../graph.ts';
import { issueList, type GraphDraft, type ParsedWorkflow } from './types.ts';

/**
 * Build stage: turns a `ParsedWorkflow` into a `GraphDraft` (nodes + edges).
 *
 * Declared edges come first, in document order: each gets its condition parsed, default type
 * `data`, and (data edges) the port it feeds: `port`, or the source's id. A data edge into a port
 * the node did not declare adds that port (read from the edge's source); a loop edge
 * (`max_iterations`) makes its port optional and marks it `loop` (absent on the first pass).
 * Then every node-sourced input port without a declared edge gets an implied data edge.
 *
 * Issues: DANGLING_EDGE (an endpoint is not a node; the edge is dropped), BAD_CONDITION (the
 * condition does not parse), UNBOUNDED_CYCLE (a self-loop without `max_iterations`; dropped),
 * PORT_TYPE_MISMATCH (an edge feeds a port that already reads from something else).
 * Pure: `parsed` is not changed; the draft's nodes are copies with their own input lists.
 */
export function buildWorkflowGraph(parsed: ParsedWorkflow): { draft: GraphDraft; issues: SpecIssue[] } {
  const { issues, add: issue } = issueList();
  const nodes: GraphNode[] = parsed.nodes.map((n) => ({ ...n, inputs: n.inputs.map((p) => ({ ...p })) }));
  const byId = new Map<string, GraphNode>(nodes.map((n) => [n.id, n]));

  const edges: GraphEdge[] = [];
  for (const raw of parsed.declaredEdges) {
    let ok = true;
    for (const [endpoint, where] of [[raw.from, raw.fromPath], [raw.to, raw.toPath]] as const) {
      if (!byId.has(endpoint)) {
        ok = false;
        issue('DANGLING_EDGE', where, `edge ${raw.from} -> ${raw.to}: there is no node "${endpoint}"`);
      }
    }
    if (!ok) continue;
    const edge: GraphEdge = { from: asNodeId(raw.from), to: asNodeId(raw.to), type: raw.type ?? 'data', port: raw.port, maxIterations: raw.maxIterations, path: raw.path };
    if (raw.condition) {
      try {
        edge.condition = parseCondition(raw.condition);
      } catch (e) {
        issue('BAD_CONDITION', [...raw.path, 'condition'], `condition "${raw.condition}": ${e instanceof ConditionError ? e.message : String(e)}`);
      }
    }
    if (edge.from === edge.to && !edge.maxIterations) {
      issue('UNBOUNDED_CYCLE', raw.path, `edge ${edge.from} -> ${edge.to} loops a node onto itself without \`max_iterations\``);
      continue;
    }
    const target = byId.get(raw.to)!;
    if (edge.type === 'data') {
      const portName = edge.port ?? edge.from;
      edge.port = portName;
      const existing = target.inputs.find((p) => p.name === portName);
      if (existing) {
        if (existing.source.kind !== 'node' || existing.source.node !== edge.from) {
          issue('PORT_TYPE_MISMATCH', raw.path, `edge ${edge.from} -> ${edge.to} feeds port "${portName}", which already reads from ${describeSource(existing)}`);
        }
        if (edge.maxIterations) { existing.loop = true; existing.optional = true; }
      } else {
        target.inputs.push({
          name: portName,
          source: { kind: 'node', node: edge.from },
          optional: Boolean(edge.maxIterations),
          loop: edge.maxIterations ? true : undefined,
          path: raw.path,
        });
      }
    }
    edges.push(edge);
  }
  for (const node of nodes) {
    for (const port of node.inputs) {
      if (port.source.kind !== 'node') continue;
      const from = port.source.node;
      if (!edges.some((e) => e.from === from && e.to === node.id && e.type === 'data' && e.port === port.name)) {
        edges.push({ from, to: node.id, type: 'data', port: port.name, path: port.path });
      }
    }
  }
  return { draft: { nodes, edges }, issues };
}

/** `task.<field>` or `<node>[.<field>]`: where a port reads from, as the document writes it. */
export function describeSource(p: InputPort): string {
  return p.source.kind === 'task' ? `task.${p.source.field}` : `${p.source.node}${p.source.field ? '.' + p.source.field : ''}`;
}
