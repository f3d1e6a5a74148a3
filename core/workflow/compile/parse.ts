/**
 * Compile stage 1 of 3 (core/workflow/compile.ts): the document's entities read into the
 * graph's types, each checked against the names it refers to.
 */
import { jsonSchemaValidator } from '../jsonSchema.ts';
import { EndpointRefError, isEndpointRef, parseEndpointRef } from '../../model/endpoint.ts';
import { schemaProblems } from '../schemaSupport.ts';
import { asNodeId, asRoleName, HUMAN, type RoleName } from '../../ids.ts';
import { CheckRegistry } from '../checks.ts';
import { formatPath, type SpecIssue } from '../errors.ts';
import { DEFAULT_MAX_TOKENS, type Contract, type DocPath, type GraphNode, type InputPort, type ModelRef, type NodeKind, type Role, type SkillDef } from '../graph.ts';
import type { WorkflowDoc } from '../spec.ts';
import { placeInCode, readCode } from './notations/code.ts';
import { readStates } from './notations/states.ts';
import { issueList, type CompileOptions, type DeclaredEdge, type DocNotation, type NotationSource, type ParsedWorkflow, type RawNode } from './types.ts';

/** The notations' document keys, in the order a mixed document names them. */
const NOTATIONS = ['nodes', 'steps', 'agents', 'states', 'code'] as const;
/** Keys that belong to one notation only, and what the others use instead. */
const NOTATION_KEYS: Array<{ key: 'edges' | 'flows' | 'transitions' | 'start' | 'terminal'; owner: DocNotation; message: (n: DocNotation) => string }> = [
  { key: 'edges', owner: 'nodes', message: (n) => (n === 'states' ? '`edges` belong to the `nodes` notation; a state machine uses `transitions`' : n === 'code' ? '`edges` belong to the `nodes` notation; code wires through names and loop(...)' : '`edges` belong to the `nodes` notation; use `depends_on` (steps) or `flows` (agents)') },
  { key: 'flows', owner: 'agents', message: () => '`flows` belong to the `agents` notation' },
  { key: 'transitions', owner: 'states', message: () => '`transitions` belong to the `states` notation' },
  { key: 'start', owner: 'states', message: () => '`start` belongs to the `states` notation' },
  { key: 'terminal', owner: 'states', message: () => '`terminal` belongs to the `states` notation' },
];

const ajv = jsonSchemaValidator;

/**
 * Parse stage: reads a zod-valid document into a `ParsedWorkflow`.
 *
 * Picks the notation (exactly one of `nodes`, `steps`, `agents`, `states`, `code`), reads models,
 * roles, skills and nodes (defaults applied: kind from tool/skill, `wired_by` from the document,
 * max tokens, temperature 0), resolves each input port's `from` (`task.<field>`, `<node>`,
 * `<node>.<field>`) against the node ids, and lists the declared edges in one shape for all
 * notations. A state machine is read by notations/states.ts, a code block by notations/code.ts
 * (their own issues join these; each issue under `code` gets its line:column in the code).
 *
 * Issues (located by document path): NO_NODES and MIXED_NOTATION (then `parsed` is null: nothing
 * else can be read; likewise a code block that does not parse), MIXED_NOTATION for `edges`,
 * `flows`, `transitions`, `start`, `terminal` of another notation, BAD_ANSWER (`answer:` beside
 * a code block's `return`), UNKNOWN_MODEL,
 * UNKNOWN_ROLE, MISSING_ROLE, SCHEMA (node without id, kind/tool/skill disagreeing),
 * DUPLICATE_ID, UNKNOWN_TOOL, UNKNOWN_SKILL, INVALID_SCHEMA, UNKNOWN_CHECK, UNKNOWN_NODE.
 * Entities with issues are still returned where they could be read, so later stages report
 * their own problems too. Reads `opts.tools` and `opts.checks`; changes nothing.
 */
export function parseWorkflowDoc(doc: WorkflowDoc, opts: CompileOptions): { parsed: ParsedWorkflow | null; issues: SpecIssue[] } {
  const { issues, add: issue } = issueList();
  const checks = opts.checks ?? new CheckRegistry();

  const notations = NOTATIONS.filter((k) => doc[k] !== undefined);
  if (notations.length === 0) {
    issue('NO_NODES', [], 'the workflow has no `nodes`, `steps` or `agents`');
    return { parsed: null, issues };
  }
  if (notations.length > 1) {
    issue('MIXED_NOTATION', [notations[1]!], `use one notation: found both \`${notations[0]}\` and \`${notations[1]}\``);
    return { parsed: null, issues };
  }
  const notation: DocNotation = notations[0]!;
  for (const { key, owner, message } of NOTATION_KEYS) if (doc[key] !== undefined && notation !== owner) issue('MIXED_NOTATION', [key], message(notation));
  const source = readNotation(doc, notation);
  issues.push(...source.issues);
  if (source.fatal) return { parsed: null, issues };

  // Models and roles.
  const models = new Map<string, ModelRef>();
  for (const [name, m] of Object.entries(doc.models ?? {})) {
    models.set(name, { name, path: m.path, contextSize: m.context_size, threads: m.threads, gpu: m.gpu });
    const endpointProblem = m.path !== undefined && isEndpointRef(m.path) ? endpointRefProblem(m.path) : undefined;
    if (endpointProblem) issue('BAD_ENDPOINT', ['models', name, 'path'], endpointProblem);
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

  const readContract = (c: RawNode['output'], path: DocPath): Contract | undefined => {
    if (!c) return undefined;
    if (c.schema) {
      try {
        ajv.compile(c.schema);
        // Valid JSON Schema; now what the decoding grammar can enforce, and self-contradictions.
        for (const p of schemaProblems(c.schema)) issue('INVALID_SCHEMA', [...path, 'schema', ...p.path], `output schema: ${p.message}`);
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
    skills.set(name, { name, prompt: s.prompt, contract: readContract(s.output, ['skills', name, 'output']) });
  }

  // Nodes.
  const nodes: GraphNode[] = [];
  const byId = new Map<string, GraphNode>();
  const pendingSources: Array<{ node: GraphNode; port: InputPort; raw: string }> = [];
  source.entries.forEach(({ raw, path }) => {
    const id = raw.id ?? raw.name;
    if (!id) {
      issue('SCHEMA', path, 'an agent needs an `id` or a `name`');
      return;
    }
    if (byId.has(id)) {
      issue('DUPLICATE_ID', [...path, raw.id ? 'id' : 'name'], `duplicate node id "${id}" (first defined at ${formatPath(byId.get(id)!.path)})`);
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
      wiredBy: asRoleName(wirers[0]!),
      sharedWiredBy: wirers.length > 1 ? wirers.slice(1).map(asRoleName) : undefined,
      tool: raw.tool,
      skill: raw.skill,
      prompt: raw.prompt ?? skill?.prompt,
      inputs: [],
      contract: readContract(raw.output, [...path, 'output']) ?? skill?.contract,
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
      pendingSources.push({ node, port, raw: s.from });
    }
    nodes.push(node);
    byId.set(id, node);
  });

  // Input sources, now that every id is known.
  for (const { node, port, raw } of pendingSources) {
    const [head, ...rest] = raw.split('.');
    if (head === 'task') {
      if (rest.length !== 1 || !rest[0]) issue('UNKNOWN_NODE', port.path, `input "${port.name}" of "${node.id}": task inputs are written \`task.<field>\`, got "${raw}"`);
      port.source = { kind: 'task', field: rest.join('.') };
    } else if (head && byId.has(head)) {
      port.source = { kind: 'node', node: asNodeId(head), field: rest.length ? rest.join('.') : undefined };
    } else {
      issue('UNKNOWN_NODE', port.path, `input "${port.name}" of "${node.id}" reads from "${raw}", but there is no node "${head}" (nodes: ${[...byId.keys()].join(', ')})`);
    }
  }

  if (notation === 'code' && doc.answer !== undefined && source.answer !== undefined) {
    issue('BAD_ANSWER', ['answer'], 'the code gives its answer by `return`: drop `answer:` or the `return`');
  }

  return {
    parsed: {
      name: doc.name,
      description: doc.description,
      notation,
      roles,
      models,
      skills,
      nodes,
      declaredEdges: source.edges,
      hops: doc.hops,
      answer: source.answer ?? doc.answer,
      codePositions: source.positions,
    },
    issues: placeInCode(issues, source.positions),
  };
}

/** The nodes (each with its document path) and the declared edges of the document's notation. */
function readNotation(doc: WorkflowDoc, notation: DocNotation): NotationSource {
  if (notation === 'states') return readStates(doc);
  if (notation === 'code') return readCode(doc.code!);
  const rawNodes = (doc[notation] ?? []) as RawNode[];
  return { entries: rawNodes.map((raw, i) => ({ raw, path: [notation, i] })), edges: declaredEdges(doc, notation, rawNodes), issues: [] };
}

/**
 * The edges a document declares, in document order: `edges`, `flows`, or each step's
 * `depends_on` (a name, or `{ from, port?, condition?, max_iterations? }` for a conditional
 * dependency or a loop back edge).
 */
function declaredEdges(doc: WorkflowDoc, notation: 'nodes' | 'steps' | 'agents', rawNodes: readonly RawNode[]): DeclaredEdge[] {
  const out: DeclaredEdge[] = [];
  if (notation === 'nodes') {
    (doc.edges ?? []).forEach((e, i) => {
      const path: DocPath = ['edges', i];
      out.push({ from: e.from, to: e.to, type: e.type, port: e.port, condition: e.condition, maxIterations: e.max_iterations, path, fromPath: [...path, 'from'], toPath: [...path, 'to'] });
    });
  } else if (notation === 'agents') {
    (doc.flows ?? []).forEach((f, i) => {
      const path: DocPath = ['flows', i];
      out.push({ from: f.source, to: f.target, type: f.type, port: f.port, condition: f.condition, maxIterations: f.max_iterations, path, fromPath: [...path, 'source'], toPath: [...path, 'target'] });
    });
  } else {
    rawNodes.forEach((s, i) => (s.depends_on ?? []).forEach((dep, j) => {
      const path: DocPath = ['steps', i, 'depends_on', j];
      if (typeof dep === 'string') out.push({ from: dep, to: s.id ?? '', type: 'data', path, fromPath: path, toPath: path });
      else out.push({ from: dep.from, to: s.id ?? '', type: 'data', port: dep.port, condition: dep.condition, maxIterations: dep.max_iterations, path, fromPath: [...path, 'from'], toPath: path });
    }));
  }
  return out;
}

/** Why an `openai:` model path is not a valid endpoint reference (core/model/endpoint.ts), or undefined. */
function endpointRefProblem(ref: string): string | undefined {
  try {
    parseEndpointRef(ref);
    return undefined;
  } catch (e) {
    if (e instanceof EndpointRefError) return `not a valid endpoint reference: ${e.message}`;
    throw e;
  }
}
