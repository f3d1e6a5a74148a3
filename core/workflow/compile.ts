import { jsonSchemaValidator } from './jsonSchema.ts';
import { asNodeId, asRoleName, HUMAN, type NodeId, type RoleName } from '../ids.ts';
import type { JsonSchema } from '../model/provider.ts';
import { CheckRegistry } from './checks.ts';
import { conditionFields, ConditionError, parseCondition } from './condition.ts';
import type { SpecIssue, SpecIssueCode } from './errors.ts';
import {
  DEFAULT_LIMITS,
  DEFAULT_MAX_TOKENS,
  type Contract,
  type DocPath,
  type Graph,
  type GraphEdge,
  type GraphNode,
  type InputPort,
  type ModelRef,
  type NodeKind,
  type PortType,
  type Role,
  type SkillDef,
} from './graph.ts';
import type { WorkflowDoc } from './spec.ts';
import { templateProblem, templateRefs } from './template.ts';

/** What validation needs to know of a tool: its ports and output schema (see core/tools). */
export interface ToolShape {
  inputs: Record<string, { type: PortType; optional?: boolean }>;
  output: JsonSchema;
}
export interface ToolLookup {
  get(name: string): ToolShape | undefined;
  list?(): Array<{ name: string }>;
}

export interface CompileOptions {
  tools: ToolLookup;
  checks?: CheckRegistry;
}

type RawNode = {
  id?: string;
  name?: string;
  kind?: NodeKind;
  role?: string;
  wired_by?: string | string[];
  tool?: string;
  skill?: string;
  prompt?: string;
  inputs?: Record<string, string | { from: string; type?: PortType; optional?: boolean }>;
  output?: { schema?: Record<string, unknown>; checks?: string[] };
  max_tokens?: number;
  temperature?: number;
  stop?: string[];
  timeout_ms?: number;
  depends_on?: string[];
};
type RawEdge = { from: string; to: string; type?: 'data' | 'control'; port?: string; condition?: string; max_iterations?: number };

const ajv = jsonSchemaValidator;

/**
 * Compiles a zod-valid workflow document into the one internal Graph, collecting every semantic
 * problem (unknown role, dangling edge, duplicate id, unbounded cycle, port type mismatch, unknown
 * tool, ...) as located issues. Returns `graph: null` when any issue was found.
 */
export function compileWorkflow(doc: WorkflowDoc, opts: CompileOptions): { graph: Graph | null; issues: SpecIssue[] } {
  const issues: SpecIssue[] = [];
  const issue = (code: SpecIssueCode, path: DocPath, message: string) => issues.push({ code, path, message });
  const checks = opts.checks ?? new CheckRegistry();

  // Notation.
  const notations = (['nodes', 'steps', 'agents'] as const).filter((k) => doc[k] !== undefined);
  if (notations.length === 0) {
    issue('NO_NODES', [], 'the workflow has no `nodes`, `steps` or `agents`');
    return { graph: null, issues };
  }
  if (notations.length > 1) {
    issue('MIXED_NOTATION', [notations[1]!], `use one notation: found both \`${notations[0]}\` and \`${notations[1]}\``);
    return { graph: null, issues };
  }
  const notation = notations[0]!;
  if (doc.edges && notation !== 'nodes') issue('MIXED_NOTATION', ['edges'], '`edges` belong to the `nodes` notation; use `depends_on` (steps) or `flows` (agents)');
  if (doc.flows && notation !== 'agents') issue('MIXED_NOTATION', ['flows'], '`flows` belong to the `agents` notation');

  // Models and roles.
  const models = new Map<string, ModelRef>();
  for (const [name, m] of Object.entries(doc.models ?? {})) {
    models.set(name, { name, path: m.path, contextSize: m.context_size, threads: m.threads, gpu: m.gpu });
  }
  const roles = new Map<RoleName, Role>();
  for (const [name, r] of Object.entries(doc.roles)) {
    const model = r.model ?? 'default';
    if (model !== 'default' && !models.has(model)) {
      issue('UNKNOWN_MODEL', ['roles', name, 'model'], `role "${name}" names model "${model}", which is not in \`models\` (known: ${['default', ...models.keys()].join(', ')})`);
    }
    roles.set(asRoleName(name), {
      name: asRoleName(name),
      kind: r.kind,
      model,
      instructions: r.instructions ?? '',
      hintSlots: r.hint_slots ?? 0,
      weights: r.weights,
    });
  }
  const docWiredBy = doc.wired_by ?? HUMAN;
  if (docWiredBy !== HUMAN && !roles.has(asRoleName(docWiredBy))) {
    issue('UNKNOWN_ROLE', ['wired_by'], `wired_by "${docWiredBy}" is neither "human" nor a role (roles: ${[...roles.keys()].join(', ')})`);
  }

  const validateContract = (c: { schema?: Record<string, unknown>; checks?: string[] } | undefined, path: DocPath): Contract | undefined => {
    if (!c) return undefined;
    if (c.schema) {
      try {
        ajv.compile(c.schema);
      } catch (e) {
        issue('INVALID_SCHEMA', [...path, 'schema'], `output schema is not a valid JSON Schema: ${(e as Error).message}`);
      }
    }
    for (const [i, name] of (c.checks ?? []).entries()) {
      if (!checks.has(name)) issue('UNKNOWN_CHECK', [...path, 'checks', i], `unknown check "${name}" (known: ${checks.names().join(', ')})`);
    }
    return { schema: c.schema, checks: c.checks ?? [] };
  };

  const skills = new Map<string, SkillDef>();
  for (const [name, s] of Object.entries(doc.skills ?? {})) {
    skills.set(name, { name, prompt: s.prompt, contract: validateContract(s.output, ['skills', name, 'output']) });
  }

  // Nodes.
  const rawNodes = (doc[notation] ?? []) as RawNode[];
  const nodes: GraphNode[] = [];
  const byId = new Map<string, GraphNode>();
  const pendingSources: Array<{ node: GraphNode; port: InputPort; raw: string; path: DocPath }> = [];
  rawNodes.forEach((raw, i) => {
    const path: DocPath = [notation, i];
    const id = raw.id ?? raw.name;
    if (!id) {
      issue('SCHEMA', path, 'an agent needs an `id` or a `name`');
      return;
    }
    if (byId.has(id)) {
      issue('DUPLICATE_ID', [...path, raw.id ? 'id' : 'name'], `duplicate node id "${id}" (first defined at ${notation}[${nodes.indexOf(byId.get(id)!)}])`);
      return;
    }
    const kind: NodeKind = raw.kind ?? (raw.tool ? 'tool' : raw.skill ? 'skill' : 'agent');
    if (kind !== 'tool' && raw.tool) issue('SCHEMA', [...path, 'tool'], `node "${id}" is kind ${kind} but names a tool`);
    if (kind === 'tool' && !raw.tool) issue('SCHEMA', [...path, 'kind'], `tool node "${id}" must name its \`tool\``);
    if (kind === 'skill' && !raw.skill) issue('SCHEMA', [...path, 'kind'], `skill node "${id}" must name its \`skill\``);
    let role: RoleName | undefined;
    if (raw.role !== undefined) {
      if (!roles.has(asRoleName(raw.role))) issue('UNKNOWN_ROLE', [...path, 'role'], `node "${id}" names role "${raw.role}", which is not defined (roles: ${[...roles.keys()].join(', ') || 'none'})`);
      role = asRoleName(raw.role);
    } else if (kind !== 'tool') {
      issue('MISSING_ROLE', path, `${kind} node "${id}" needs a \`role\` to run it`);
    }
    const wirers = raw.wired_by === undefined ? [docWiredBy] : Array.isArray(raw.wired_by) ? raw.wired_by : [raw.wired_by];
    for (const w of wirers) {
      if (raw.wired_by && w !== HUMAN && !roles.has(asRoleName(w))) {
        issue('UNKNOWN_ROLE', [...path, 'wired_by'], `wired_by "${w}" is neither "human" nor a role`);
      }
    }
    const wiredBy = wirers[0]!;
    if (raw.tool && !opts.tools.get(raw.tool)) {
      const known = opts.tools.list?.().map((t) => t.name).join(', ');
      issue('UNKNOWN_TOOL', [...path, 'tool'], `unknown tool "${raw.tool}"${known ? ` (known: ${known})` : ''}`);
    }
    const skill = raw.skill ? skills.get(raw.skill) : undefined;
    if (raw.skill && !skill) issue('UNKNOWN_SKILL', [...path, 'skill'], `unknown skill "${raw.skill}" (define it under \`skills\`)`);
    const node: GraphNode = {
      id: asNodeId(id),
      kind,
      role,
      wiredBy: asRoleName(wiredBy),
      sharedWiredBy: wirers.length > 1 ? wirers.slice(1).map(asRoleName) : undefined,
      tool: raw.tool,
      skill: raw.skill,
      prompt: raw.prompt ?? skill?.prompt,
      inputs: [],
      contract: validateContract(raw.output, [...path, 'output']) ?? skill?.contract,
      maxTokens: raw.max_tokens ?? DEFAULT_MAX_TOKENS,
      temperature: raw.temperature ?? 0,
      stop: raw.stop,
      timeoutMs: raw.timeout_ms,
      path,
    };
    for (const [portName, spec] of Object.entries(raw.inputs ?? {})) {
      const s = typeof spec === 'string' ? { from: spec } : spec;
      const port: InputPort = { name: portName, source: { kind: 'task', field: '' }, type: s.type, optional: s.optional ?? false, path: [...path, 'inputs', portName] };
      node.inputs.push(port);
      pendingSources.push({ node, port, raw: s.from, path: port.path });
    }
    nodes.push(node);
    byId.set(id, node);
  });

  // Resolve input sources now that every id is known.
  for (const { node, port, raw, path } of pendingSources) {
    const [head, ...rest] = raw.split('.');
    if (head === 'task') {
      if (rest.length !== 1 || !rest[0]) issue('UNKNOWN_NODE', path, `input "${port.name}" of "${node.id}": task inputs are written \`task.<field>\`, got "${raw}"`);
      port.source = { kind: 'task', field: rest.join('.') };
    } else if (head && byId.has(head)) {
      port.source = { kind: 'node', node: asNodeId(head), field: rest.length ? rest.join('.') : undefined };
    } else {
      issue('UNKNOWN_NODE', path, `input "${port.name}" of "${node.id}" reads from "${raw}", but there is no node "${head}" (nodes: ${[...byId.keys()].join(', ')})`);
    }
  }

  // Edges: declared ones, then those implied by node-sourced inputs.
  const edges: GraphEdge[] = [];
  const declared: Array<{ raw: RawEdge; path: DocPath }> = [];
  if (notation === 'nodes') (doc.edges ?? []).forEach((e, i) => declared.push({ raw: e, path: ['edges', i] }));
  if (notation === 'agents') (doc.flows ?? []).forEach((f, i) => declared.push({ raw: { ...f, from: f.source, to: f.target }, path: ['flows', i] }));
  if (notation === 'steps') {
    (rawNodes as RawNode[]).forEach((s, i) => (s.depends_on ?? []).forEach((dep, j) => {
      declared.push({ raw: { from: dep, to: s.id ?? '', type: 'data' }, path: ['steps', i, 'depends_on', j] });
    }));
  }
  for (const { raw, path } of declared) {
    const ends = (notation === 'agents' ? ['source', 'target'] : notation === 'steps' ? [null, null] : ['from', 'to']) as Array<string | null>;
    let ok = true;
    for (const [k, endpoint] of [raw.from, raw.to].entries()) {
      if (!byId.has(endpoint)) {
        ok = false;
        issue('DANGLING_EDGE', ends[k] ? [...path, ends[k]!] : path, `edge ${raw.from} -> ${raw.to}: there is no node "${endpoint}"`);
      }
    }
    if (!ok) continue;
    const edge: GraphEdge = { from: asNodeId(raw.from), to: asNodeId(raw.to), type: raw.type ?? 'data', port: raw.port, maxIterations: raw.max_iterations, path };
    if (raw.condition) {
      try {
        edge.condition = parseCondition(raw.condition);
      } catch (e) {
        issue('BAD_CONDITION', [...path, 'condition'], `condition "${raw.condition}": ${e instanceof ConditionError ? e.message : String(e)}`);
      }
    }
    if (edge.from === edge.to && !edge.maxIterations) {
      issue('UNBOUNDED_CYCLE', path, `edge ${edge.from} -> ${edge.to} loops a node onto itself without \`max_iterations\``);
      continue;
    }
    const target = byId.get(raw.to)!;
    if (edge.type === 'data') {
      const portName = edge.port ?? edge.from;
      edge.port = portName;
      const existing = target.inputs.find((p) => p.name === portName);
      if (existing) {
        if (existing.source.kind !== 'node' || existing.source.node !== edge.from) {
          issue('PORT_TYPE_MISMATCH', path, `edge ${edge.from} -> ${edge.to} feeds port "${portName}", which already reads from ${describeSource(existing)}`);
        }
        if (edge.maxIterations) { existing.loop = true; existing.optional = true; }
      } else {
        target.inputs.push({
          name: portName,
          source: { kind: 'node', node: edge.from },
          optional: Boolean(edge.maxIterations),
          loop: edge.maxIterations ? true : undefined,
          path,
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

  // Conditions must read fields the source produces (when its output schema says what it produces).
  for (const e of edges) {
    if (!e.condition) continue;
    const src = byId.get(e.from)!;
    const schema = (src.contract?.schema ?? (src.tool ? opts.tools.get(src.tool)?.output : undefined)) as { properties?: Record<string, { enum?: unknown[] }> } | undefined;
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
  const cycle = findCycle(nodes.map((n) => n.id), edges.filter((e) => !e.maxIterations));
  if (cycle) {
    const e = edges.find((x) => !x.maxIterations && x.from === cycle[cycle.length - 2] && x.to === cycle[cycle.length - 1]);
    issue('UNBOUNDED_CYCLE', e?.path ?? [], `cycle ${cycle.join(' -> ')} has no edge with \`max_iterations\`; bound the loop`);
  }
  // A loop edge must close a loop: its target must reach its source along forward edges.
  for (const e of edges.filter((x) => x.maxIterations && x.from !== x.to)) {
    if (!reaches(e.to, e.from, edges.filter((x) => !x.maxIterations))) {
      issue('UNBOUNDED_CYCLE', [...e.path, 'max_iterations'], `edge ${e.from} -> ${e.to} has max_iterations but ${e.to} does not lead back to ${e.from}: it is not a loop`);
    }
  }

  // Ports against tools, templates and upstream contracts.
  for (const node of nodes) {
    const tool = node.tool ? opts.tools.get(node.tool) : undefined;
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
      const produced = src ? outputType(src, port.source.field, opts.tools) : undefined;
      const wanted = port.type ?? (tool?.inputs[port.name]?.type);
      if (produced && wanted && !typesCompatible(produced, wanted)) {
        issue('PORT_TYPE_MISMATCH', port.path, `port "${port.name}" of "${node.id}" wants ${wanted} but ${port.source.node}${port.source.field ? '.' + port.source.field : ''} produces ${produced}`);
      }
    }
    if (node.prompt !== undefined) {
      const problem = templateProblem(node.prompt);
      if (problem) issue('BAD_TEMPLATE', [...node.path, 'prompt'], `prompt of "${node.id}": ${problem}`);
      for (const ref of templateRefs(node.prompt)) {
        if (ref.root === 'task' || ref.root === 'hints') continue;
        if (!node.inputs.some((p) => p.name === ref.root)) {
          issue('BAD_TEMPLATE', [...node.path, 'prompt'], `prompt of "${node.id}" uses {{${[ref.root, ...ref.path].join('.')}}} but the node has no input port "${ref.root}" (ports: ${node.inputs.map((p) => p.name).join(', ') || 'none'})`);
        }
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
    for (const e of edges) {
      if (e.maxIterations) continue;
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
    else answer = { node: asNodeId(head), field: rest.length ? rest.join('.') : undefined };
  } else if (nodes.length && !cycle) {
    const sinks = nodes.filter((n) => !edges.some((e) => e.from === n.id && !e.maxIterations));
    if (sinks.length === 1) answer = { node: sinks[0]!.id };
    else issue('BAD_ANSWER', [], `the workflow has ${sinks.length} final nodes (${sinks.map((s) => s.id).join(', ')}); set \`answer: <node>\``);
  }

  if (issues.length || !answer) return { graph: null, issues };
  const graph: Graph = {
    name: doc.name,
    description: doc.description,
    notation: notation === 'nodes' ? 'graph' : notation,
    roles,
    models,
    skills,
    nodes,
    edges,
    hops,
    answer,
    limits: {
      maxHops: doc.limits?.max_hops ?? DEFAULT_LIMITS.maxHops,
      concurrency: doc.limits?.concurrency ?? DEFAULT_LIMITS.concurrency,
      nodeTimeoutMs: doc.limits?.node_timeout_ms ?? DEFAULT_LIMITS.nodeTimeoutMs,
    },
  };
  return { graph, issues };
}

function describeSource(p: InputPort): string {
  return p.source.kind === 'task' ? `task.${p.source.field}` : `${p.source.node}${p.source.field ? '.' + p.source.field : ''}`;
}

function typesCompatible(a: PortType, b: PortType): boolean {
  return a === 'any' || b === 'any' || a === b;
}

function schemaType(schema: unknown): PortType | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  const t = (schema as { type?: unknown }).type;
  if (t === 'integer' || t === 'number') return 'number';
  if (t === 'string' || t === 'boolean' || t === 'object' || t === 'array') return t;
  return undefined;
}

/** The type a node produces (or a field of it), from its contract schema or tool output schema. */
function outputType(node: GraphNode, field: string | undefined, tools: ToolLookup): PortType | undefined {
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

/** Returns a cycle as [a, b, ..., a] or null (iterative DFS, white/grey/black). */
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

function reaches(from: NodeId, to: NodeId, edges: Array<{ from: NodeId; to: NodeId }>): boolean {
  const seen = new Set<NodeId>([from]);
  const queue = [from];
  while (queue.length) {
    const x = queue.shift()!;
    if (x === to) return true;
    for (const e of edges) if (e.from === x && !seen.has(e.to)) { seen.add(e.to); queue.push(e.to); }
  }
  return false;
}
