/**
 * Compile stage 3 of 3 (core/workflow/compile.ts): checks of the whole graph, and the document's
 * `hops` and `answer` resolved against it.
 */
import { asNodeId, type NodeId } from '../../ids.ts';
import { conditionFields } from '../condition.ts';
import type { SpecIssue } from '../errors.ts';
import type { Graph, GraphNode, PortType } from '../graph.ts';
import { templateProblem, templateRefs } from '../template.ts';
import { findCycle, reaches } from './cycles.ts';
import { issueList, type GraphDraft, type ToolLookup } from './types.ts';

/**
 * Validate stage: checks a `GraphDraft` as a whole and resolves the run order and the answer.
 *
 * In order: edge conditions against the fields their source's output schema declares (and enum
 * values compared with); the graph without loop edges must be acyclic; each loop edge must close
 * a loop (its target leads back to its source); tool ports (required ones wired, no unknown
 * ones, declared types compatible); port types against the upstream contract or tool output;
 * prompt templates (well formed, every `{{port}}` an input port); `hops` (every node once, no
 * dependency reversed); `answer` (`<node>[.<field>]`, or else the only sink of forward edges).
 *
 * Issues: BAD_CONDITION, UNBOUNDED_CYCLE, MISSING_PORT, UNKNOWN_PORT, PORT_TYPE_MISMATCH,
 * BAD_TEMPLATE, BAD_HOPS, BAD_ANSWER. `answer` is undefined when it cannot be resolved (always
 * with a BAD_ANSWER issue, or while a cycle is reported). Pure: reads `draft` and `tools` only.
 */
export function validateWorkflowGraph(
  draft: GraphDraft,
  doc: { hops?: readonly string[]; answer?: string },
  tools: ToolLookup,
): { hops?: NodeId[]; answer?: Graph['answer']; issues: SpecIssue[] } {
  const { issues, add: issue } = issueList();
  const { nodes, edges } = draft;
  const byId = new Map<string, GraphNode>(nodes.map((n) => [n.id, n]));

  // Conditions must read fields the source produces (when its output schema says what it produces).
  for (const e of edges) {
    if (!e.condition) continue;
    const src = byId.get(e.from)!;
    const schema = (src.contract?.schema ?? (src.tool ? tools.get(src.tool)?.output : undefined)) as { properties?: Record<string, { enum?: unknown[] }> } | undefined;
    const props = schema?.properties;
    if (!props) continue;
    for (const f of conditionFields(e.condition)) {
      const head = f.path[0];
      if (head === undefined) continue;
      if (!Object.hasOwn(props, head)) {
        issue('BAD_CONDITION', [...e.path, 'condition'], `condition reads field "${head}", but ${e.from} outputs only ${Object.keys(props).join(', ')}`);
      } else if (f.path.length === 1 && f.equals !== undefined && Array.isArray(props[head]!.enum) && !props[head]!.enum!.includes(f.equals)) {
        issue('BAD_CONDITION', [...e.path, 'condition'], `condition compares ${head} with ${JSON.stringify(f.equals)}, which is not one of its values (${props[head]!.enum!.map((v) => JSON.stringify(v)).join(', ')})`);
      }
    }
  }

  // Unbounded cycles: the graph without loop (max_iterations) edges must be acyclic.
  const forward = edges.filter((e) => !e.maxIterations);
  const cycle = findCycle(nodes.map((n) => n.id), forward);
  if (cycle) {
    const e = edges.find((x) => !x.maxIterations && x.from === cycle[cycle.length - 2] && x.to === cycle[cycle.length - 1]);
    issue('UNBOUNDED_CYCLE', e?.path ?? [], `cycle ${cycle.join(' -> ')} has no edge with \`max_iterations\`; bound the loop`);
  }
  // A loop edge must close a loop: its target must reach its source along forward edges.
  for (const e of edges.filter((x) => x.maxIterations && x.from !== x.to)) {
    if (!reaches(e.to, e.from, forward)) {
      issue('UNBOUNDED_CYCLE', [...e.path, 'max_iterations'], `edge ${e.from} -> ${e.to} has max_iterations but ${e.to} does not lead back to ${e.from}: it is not a loop`);
    }
  }

  // Ports against tools, templates and upstream contracts.
  for (const node of nodes) {
    const tool = node.tool ? tools.get(node.tool) : undefined;
    if (tool) {
      for (const [name, def] of Object.entries(tool.inputs)) {
        if (!def.optional && !node.inputs.some((p) => p.name === name)) {
          issue('MISSING_PORT', [...node.path, 'inputs'], `tool "${node.tool}" needs input port "${name}" (${def.type}), which node "${node.id}" does not wire`);
        }
      }
      for (const port of node.inputs) {
        const def = tool.inputs[port.name];
        if (!def) {
          issue('UNKNOWN_PORT', port.path, `tool "${node.tool}" has no input port "${port.name}" (ports: ${Object.keys(tool.inputs).join(', ')})`);
        } else if (port.type && !typesCompatible(port.type, def.type)) {
          issue('PORT_TYPE_MISMATCH', port.path, `port "${port.name}" is declared ${port.type} but tool "${node.tool}" takes ${def.type}`);
        }
      }
    }
    for (const port of node.inputs) {
      if (port.source.kind !== 'node') continue;
      const src = byId.get(port.source.node);
      const produced = src ? outputType(src, port.source.field, tools) : undefined;
      const wanted = port.type ?? (tool?.inputs[port.name]?.type);
      if (produced && wanted && !typesCompatible(produced, wanted)) {
        issue('PORT_TYPE_MISMATCH', port.path, `port "${port.name}" of "${node.id}" wants ${wanted} but ${port.source.node}${port.source.field ? '.' + port.source.field : ''} produces ${produced}`);
      }
      // A tool port that accepts only some values, fed by a contract that names its values.
      const accepts = tool?.inputs[port.name]?.enum;
      const values = src && accepts ? outputEnum(src, port.source.field) : undefined;
      const foreign = values?.filter((v) => !accepts!.includes(v as string));
      if (foreign?.length) {
        issue('PORT_TYPE_MISMATCH', port.path, `port "${port.name}" of tool "${node.tool}" accepts ${accepts!.join('|')}, but ${port.source.node}${port.source.field ? '.' + port.source.field : ''} hands back ${values!.join('|')} (${foreign.join(', ')} not accepted)`);
      }
    }
    if (node.prompt !== undefined) {
      const problem = templateProblem(node.prompt);
      if (problem) issue('BAD_TEMPLATE', [...node.path, 'prompt'], `prompt of "${node.id}": ${problem}`);
      // One issue per missing port, naming every use of it ({{feedback}} and {{feedback.reason}} are one problem).
      const missing = new Map<string, string[]>();
      for (const ref of templateRefs(node.prompt)) {
        // `{{instructions}}`: the role's instructions, placed in the prompt (core/engine/runNode.ts assemblePrompt).
        if (ref.root === 'task' || ref.root === 'hints' || ref.root === 'instructions') continue;
        if (node.inputs.some((p) => p.name === ref.root)) continue;
        const uses = missing.get(ref.root) ?? [];
        const use = `{{${[ref.root, ...ref.path].join('.')}}}`;
        if (!uses.includes(use)) uses.push(use);
        missing.set(ref.root, uses);
      }
      for (const [root, uses] of missing) {
        issue('BAD_TEMPLATE', [...node.path, 'prompt'], `prompt of "${node.id}" uses ${uses.join(', ')} but the node has no input port "${root}" (ports: ${node.inputs.map((p) => p.name).join(', ') || 'none'})`);
      }
    }
  }

  // Hops.
  let hops: NodeId[] | undefined;
  if (doc.hops) {
    const seen = new Set<string>();
    doc.hops.forEach((h, i) => {
      if (!byId.has(h)) issue('BAD_HOPS', ['hops', i], `hop "${h}" is not a node`);
      else if (seen.has(h)) issue('BAD_HOPS', ['hops', i], `hop "${h}" appears twice`);
      seen.add(h);
    });
    const missing = nodes.filter((n) => !seen.has(n.id)).map((n) => n.id);
    if (missing.length) issue('BAD_HOPS', ['hops'], `hops leave out node(s): ${missing.join(', ')}`);
    const pos = new Map(doc.hops.map((h, i) => [h, i]));
    for (const e of forward) {
      if ((pos.get(e.from) ?? -1) > (pos.get(e.to) ?? Infinity)) {
        issue('BAD_HOPS', ['hops'], `hops put "${e.to}" before "${e.from}", but ${e.to} depends on ${e.from}`);
      }
    }
    hops = doc.hops.map(asNodeId);
  }

  // Answer.
  let answer: Graph['answer'] | undefined;
  if (doc.answer) {
    const [head, ...rest] = doc.answer.split('.');
    if (!head || !byId.has(head)) issue('BAD_ANSWER', ['answer'], `answer "${doc.answer}" names no node`);
    else {
      const problem = rest.length ? answerFieldProblem(byId.get(head)!, rest, tools) : null;
      if (problem) issue('BAD_ANSWER', ['answer'], `answer "${doc.answer}": ${problem}`);
      else answer = { node: asNodeId(head), field: rest.length ? rest.join('.') : undefined };
    }
  } else if (nodes.length && !cycle) {
    const sinks = nodes.filter((n) => !forward.some((e) => e.from === n.id));
    if (sinks.length === 1) answer = { node: sinks[0]!.id };
    else issue('BAD_ANSWER', [], `the workflow has ${sinks.length} final nodes (${sinks.map((s) => s.id).join(', ')}); set \`answer: <node>\``);
  }
  return { hops, answer, issues };
}

/** The values a node's output (or its field) is limited to by its contract schema's `enum`, if any. */
function outputEnum(node: GraphNode, field: string | undefined): unknown[] | undefined {
  let s: unknown = node.contract?.schema;
  for (const f of field ? field.split('.') : []) s = (s as { properties?: Record<string, unknown> } | undefined)?.properties?.[f];
  const e = (s as { enum?: unknown } | undefined)?.enum;
  return Array.isArray(e) ? e : undefined;
}

/** Port types agree when either is `any` or both are the same. */
export function typesCompatible(a: PortType, b: PortType): boolean {
  return a === 'any' || b === 'any' || a === b;
}

function schemaType(schema: unknown): PortType | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const t = (schema as { type?: unknown }).type;
  if (t === 'integer' || t === 'number') return 'number';
  if (t === 'string' || t === 'boolean' || t === 'object' || t === 'array') return t;
  return undefined;
}

/**
 * Why `node`'s output has no field at `path` (null: it has, or its output is not known here): an
 * agent or skill node without a contract schema writes text; a schema with `properties` lists
 * what it outputs (a run reading another field would end with no answer and no failed node).
 */
function answerFieldProblem(node: GraphNode, path: readonly string[], tools: ToolLookup): string | null {
  let s: unknown = node.contract?.schema ?? (node.tool ? tools.get(node.tool)?.output : undefined);
  if (s === undefined) return node.kind === 'agent' || node.kind === 'skill' ? `${node.id} writes text (no contract schema), which has no field "${path.join('.')}"` : null;
  let at: string = node.id;
  for (const f of path) {
    const props = (s as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (!props) return null;
    if (!Object.hasOwn(props, f)) return `${at} outputs only ${Object.keys(props).join(', ') || 'no field'}, not "${f}"`;
    at = `${at}.${f}`;
    s = props[f];
  }
  return null;
}

/**
 * The type a node produces (or a field of it, `a.b`), from its contract schema or its tool's
 * output schema; an agent or skill node without a schema produces a string. Undefined: unknown.
 */
export function outputType(node: GraphNode, field: string | undefined, tools: ToolLookup): PortType | undefined {
  const schema = node.contract?.schema ?? (node.tool ? tools.get(node.tool)?.output : undefined);
  if (!schema) return field ? undefined : node.kind === 'agent' || node.kind === 'skill' ? 'string' : undefined;
  if (!field) return schemaType(schema);
  let s: unknown = schema;
  for (const f of field.split('.')) {
    const props = (s as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (!props || !(f in props)) return undefined;
    s = props[f];
  }
  return schemaType(s);
}
