/**
 * A design, compiled leniently: the designer's document goes through the same parse, build and
 * validate stages as a hand-written file (core/workflow/compile/), and every issue is then
 * owned by the designed node it is located in. A node with an issue is kept, marked with a
 * wiring fault (it will be recorded as a root failure blamed on the designer, and what it feeds
 * cascades); only an issue no node owns (no nodes, a duplicate id, no answer, over budget) makes
 * the whole design unusable. A step or node list without `answer` answers with its last node. FloWright, "structure-aware credit": the generator owns every node it wired.
 */
import { asNodeId, asRoleName, type NodeId } from '../ids.ts';
import {
  buildWorkflowGraph,
  findCycle,
  parseWorkflowDoc,
  validateWorkflowGraph,
  WorkflowSpec,
  type CheckRegistry,
  type DesignStage,
  type DesignWiringCode,
  type DocPath,
  type GraphEdge,
  type GraphNode,
  type SpecIssue,
  type SpecIssueCode,
  type ToolLookup,
} from '../workflow/index.ts';
import { NOTATION_KEYS } from '../workflow/compile/designStage.ts';
import { formatPath } from '../workflow/errors.ts';
import type { DesignIssue } from './record.ts';

export interface DesignCompile {
  /** False when no node of the design can run: `problem` says why. */
  usable: boolean;
  problem?: string;
  /** Designed nodes (wiredBy = the designer), some with a `wiringFault`, in document order. */
  nodes: GraphNode[];
  /** Designed edges, acyclic without their loop edges (an edge closing an unbounded cycle is dropped). */
  edges: GraphEdge[];
  answer?: { node: NodeId; field?: string };
  issues: DesignIssue[];
}

const WIRING_CODE: Partial<Record<SpecIssueCode, DesignWiringCode>> = {
  UNKNOWN_NODE: 'DANGLING_EDGE',
  DANGLING_EDGE: 'DANGLING_EDGE',
  UNBOUNDED_CYCLE: 'UNBOUNDED_CYCLE',
  SELF_LOOP: 'UNBOUNDED_CYCLE',
  UNKNOWN_TOOL: 'UNKNOWN_TOOL',
  MISSING_PORT: 'MISSING_PORT',
  UNKNOWN_PORT: 'UNKNOWN_PORT',
  PORT_TYPE_MISMATCH: 'PORT_TYPE_MISMATCH',
};

/**
 * Compiles `design` (the parsed JSON object of a JSON notation, or the text of a `code` design)
 * as a workflow document merged with `stage.base`, restricted to the catalogue: only catalogue
 * tools, skills and roles (plus the designer, as the wirer) are known, so anything else is the
 * designer's wiring fault. Budget: more nodes than `max_nodes` or loops than `max_loops` make the
 * design unusable; a loop asking more than `max_iterations` is an INVALID_CONFIG fault of its
 * target. A designed node run by the designer itself is an INVALID_CONFIG fault; one whose id is
 * `reserved` (the workflow's own nodes) makes the design unusable. Pure.
 */
export function compileDesign(stage: DesignStage, design: unknown, opts: { tools: ToolLookup; checks?: CheckRegistry; reserved?: readonly string[] }): DesignCompile {
  const keys: readonly string[] = NOTATION_KEYS[stage.notation];
  const issues: DesignIssue[] = [];
  const unusable = (problem: string, path: DocPath = [], code = 'INVALID_DESIGN'): DesignCompile => {
    issues.push({ code, path: [...path], message: problem });
    return { usable: false, problem: `${path.length ? `at ${formatPath(path)}: ` : ''}${problem}`, nodes: [], edges: [], issues };
  };
  let body: Record<string, unknown>;
  if (stage.notation === 'code') {
    if (typeof design !== 'string') return unusable('a code design must be text');
    body = { code: design };
  } else {
    if (!design || typeof design !== 'object' || Array.isArray(design)) return unusable('the design must be a JSON object');
    body = design as Record<string, unknown>;
    const extra = Object.keys(body).filter((k) => !keys.includes(k));
    if (extra.length) return unusable(`the design has key(s) ${extra.join(', ')}; a ${stage.notation} design writes only ${keys.join(', ')}`, [extra[0]!], 'SCHEMA');
    // A step list or node list without `answer` answers with its last node (a designer's grammar writes none).
    const list = body[stage.notation === 'steps' ? 'steps' : 'nodes'];
    const last = Array.isArray(list) ? (list.at(-1) as { id?: unknown } | undefined)?.id : undefined;
    if ((stage.notation === 'steps' || stage.notation === 'graph') && body.answer === undefined && typeof last === 'string') body = { ...body, answer: last };
  }
  const catalogueRoles = new Set<string>([...stage.catalogue.roles, stage.role]);
  const base = stage.base as { roles: Record<string, unknown>; skills?: Record<string, unknown> };
  const doc = {
    ...stage.base,
    roles: Object.fromEntries(Object.entries(base.roles).filter(([r]) => catalogueRoles.has(r))),
    skills: Object.fromEntries(Object.entries(base.skills ?? {}).filter(([s]) => stage.catalogue.skills.includes(s))),
    wired_by: stage.role,
    ...body,
  };
  const zod = WorkflowSpec.safeParse(doc, { jitless: true });
  if (!zod.success) {
    const first = zod.error.issues[0]!;
    return unusable(first.message, first.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), 'SCHEMA');
  }
  const tools: ToolLookup = {
    get: (name) => (stage.catalogue.tools.includes(name) ? opts.tools.get(name) : undefined),
    list: () => stage.catalogue.tools.map((name) => ({ name })),
  };
  const parse = parseWorkflowDoc(zod.data, { tools, checks: opts.checks });
  if (!parse.parsed) return unusable(parse.issues[0]?.message ?? 'the design has no nodes', parse.issues[0]?.path);
  const parsed = parse.parsed;
  const build = buildWorkflowGraph(parsed);
  const check = validateWorkflowGraph(build.draft, parsed, tools);
  const nodes = build.draft.nodes;
  let edges = build.draft.edges;

  const clash = nodes.find((n) => opts.reserved?.includes(n.id));
  if (clash) return unusable(`node id "${clash.id}" is taken by the workflow's own node of that name`, clash.path, 'DUPLICATE_ID');
  // Budget.
  if (nodes.length > stage.budget.maxNodes) return unusable(`the design draws ${nodes.length} nodes; the budget allows ${stage.budget.maxNodes}`, [], 'OVER_BUDGET');
  const loops = edges.filter((e) => e.maxIterations);
  if (loops.length > stage.budget.maxLoops) return unusable(`the design has ${loops.length} loops; the budget allows ${stage.budget.maxLoops}`, loops[stage.budget.maxLoops]!.path, 'OVER_BUDGET');

  // Every issue to the node that owns it: the node whose path it lies under, or the target of the declared edge it lies on.
  const owner = (path: DocPath): GraphNode | undefined => {
    let best: GraphNode | undefined;
    for (const n of nodes) if (isPrefix(n.path, path) && (!best || n.path.length > best.path.length)) best = n;
    if (best) return best;
    const edge = parsed.declaredEdges.find((e) => isPrefix(e.path, path));
    return edge ? nodes.find((n) => n.id === edge.to) : undefined;
  };
  const fault = (node: GraphNode, code: DesignWiringCode, path: DocPath, message: string) => {
    issues.push({ code, path: [...path], message, nodeId: node.id });
    node.wiringFault ??= { code, message: `at ${formatPath(path)}: ${message}` };
  };
  const designLevel: SpecIssue[] = [];
  for (const i of [...parse.issues, ...build.issues, ...check.issues]) {
    const n = owner(i.path);
    if (n) fault(n, WIRING_CODE[i.code] ?? 'INVALID_CONFIG', i.path, i.message);
    else designLevel.push(i);
  }
  for (const n of nodes) {
    if (n.role === stage.role) fault(n, 'INVALID_CONFIG', [...n.path, 'role'], `the designer "${stage.role}" cannot run a node it draws (roles: ${stage.catalogue.roles.join(', ') || 'none'})`);
  }
  for (const e of loops) {
    const n = nodes.find((x) => x.id === e.to);
    if (n && e.maxIterations! > stage.budget.maxIterations) fault(n, 'INVALID_CONFIG', [...e.path, 'max_iterations'], `loop ${e.from} -> ${e.to} asks ${e.maxIterations} iterations; the budget allows ${stage.budget.maxIterations}`);
  }
  // Unbounded cycles cannot be scheduled: drop the edge that closes each one (its target is already at fault).
  for (let c = findCycle(nodes.map((n) => n.id), edges.filter((e) => !e.maxIterations)); c; c = findCycle(nodes.map((n) => n.id), edges.filter((e) => !e.maxIterations))) {
    const from = c[c.length - 2]!;
    const to = c[c.length - 1]!;
    const dropped = edges.find((e) => !e.maxIterations && e.from === from && e.to === to)!;
    const n = nodes.find((x) => x.id === to)!;
    if (!n.wiringFault) fault(n, 'UNBOUNDED_CYCLE', dropped.path, `cycle ${c.join(' -> ')} has no edge with \`max_iterations\``);
    edges = edges.filter((e) => e !== dropped);
  }
  // An issue no node owns (a duplicate id, a bad answer, ...) leaves nothing to blame a node for: the design cannot run.
  const answer = check.answer;
  if (designLevel.length || !answer) {
    const why = designLevel[0];
    return unusable(why?.message ?? 'the design has no answer node', why?.path ?? [], why?.code);
  }
  for (const n of nodes) {
    n.wiredBy = asRoleName(stage.role);
    n.id = asNodeId(n.id);
  }
  return { usable: true, nodes, edges, answer, issues };
}

function isPrefix(prefix: DocPath, path: DocPath): boolean {
  if (prefix.length > path.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== path[i]) return false;
  return true;
}
