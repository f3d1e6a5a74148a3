/**
 * The workflow's graph as the renderer draws it, read straight from the YAML document (pure, no
 * DOM). It mirrors core/workflow/compile.ts's edge rules (declared edges, `depends_on`, `flows`,
 * then node-sourced `inputs`) but is lenient: it reads what it can from an invalid document, so
 * the editor can draw the graph while validation reports issues, and it keeps each element's
 * document path so graph edits can rewrite the YAML in place. Validation stays the host's job
 * (`validateWorkflow`).
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';

export type Notation = 'nodes' | 'steps' | 'agents';
export type NodeKind = 'agent' | 'tool' | 'skill';
export type EdgeType = 'data' | 'control';
export type DocPath = ReadonlyArray<string | number>;

export interface DocNode {
  id: string;
  kind: NodeKind;
  role?: string;
  tool?: string;
  skill?: string;
  /** Position in the notation's list (`nodes[index]`, `steps[index]`, `agents[index]`). */
  index: number;
  path: DocPath;
  /** 1-based line of the node's entry in the text. */
  line?: number;
}

/** Where an edge is written in the document, so it can be removed from there. */
export type EdgeOrigin = 'edges' | 'flows' | 'depends_on' | 'inputs';

export interface DocEdge {
  /** Stable within one parse: `<origin>:<path>`. */
  id: string;
  from: string;
  to: string;
  type: EdgeType;
  /** Data edges: the input port on `to`. */
  port?: string;
  condition?: string;
  /** Set on loop back edges (bounded loops). */
  maxIterations?: number;
  origin: EdgeOrigin;
  path: DocPath;
  line?: number;
}

export interface DocGraph {
  name?: string;
  notation: Notation | null;
  /** Role names in document order, with their kind as written. */
  roles: Array<{ name: string; kind?: string }>;
  nodes: DocNode[];
  edges: DocEdge[];
  /** The answer node: `answer`'s head, or the only sink. */
  answer?: string;
}

export type ParsedGraph = { ok: true; graph: DocGraph; doc: Document; lines: LineCounter } | { ok: false; message: string; line?: number; column?: number };

const NOTATIONS: readonly Notation[] = ['nodes', 'steps', 'agents'];

/** Parses YAML text into the drawable graph; `ok: false` only when the text is not YAML at all. */
export function parseWorkflowGraph(text: string): ParsedGraph {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: false });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const pos = e.linePos?.[0];
    return { ok: false, message: e.message.split('\n')[0]!, line: pos?.line, column: pos?.col };
  }
  return { ok: true, graph: graphOfDocument(doc, lines), doc, lines };
}

/** The drawable graph of a parsed document (any shape; unknown parts are skipped). */
export function graphOfDocument(doc: Document, lines?: LineCounter): DocGraph {
  const root = doc.contents;
  const lineOf = (node: unknown): number | undefined => {
    const range = (node as { range?: [number, number, number] } | null)?.range;
    return range && lines ? lines.linePos(range[0]).line : undefined;
  };
  const graph: DocGraph = { notation: null, roles: [], nodes: [], edges: [] };
  if (!isMap(root)) return graph;
  const name = root.get('name');
  if (typeof name === 'string') graph.name = name;

  const roles = root.get('roles');
  if (isMap(roles)) {
    for (const pair of roles.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const kind = isMap(pair.value) ? pair.value.get('kind') : undefined;
      graph.roles.push({ name: key, kind: typeof kind === 'string' ? kind : undefined });
    }
  }

  const notation = NOTATIONS.find((n) => root.has(n)) ?? null;
  graph.notation = notation;
  if (!notation) return graph;
  const list = root.get(notation, true);
  const ids = new Set<string>();
  if (isSeq(list)) {
    list.items.forEach((item, index) => {
      if (!isMap(item)) return;
      const id = str(item.get('id')) ?? (notation === 'agents' ? str(item.get('name')) : undefined);
      if (!id || ids.has(id)) return;
      ids.add(id);
      const tool = str(item.get('tool'));
      const skill = str(item.get('skill'));
      const kindRaw = str(item.get('kind'));
      const kind: NodeKind = kindRaw === 'agent' || kindRaw === 'tool' || kindRaw === 'skill' ? kindRaw : tool ? 'tool' : skill ? 'skill' : 'agent';
      graph.nodes.push({ id, kind, role: str(item.get('role')), tool, skill, index, path: [notation, index], line: lineOf(item) });
    });
  }

  // Declared edges, in compile.ts's order.
  const declared: DocEdge[] = [];
  const pushDeclared = (origin: EdgeOrigin, path: DocPath, raw: { from?: string; to?: string; type?: unknown; port?: unknown; condition?: unknown; max_iterations?: unknown }, line?: number) => {
    if (!raw.from || !raw.to || !ids.has(raw.from) || !ids.has(raw.to)) return;
    const type: EdgeType = raw.type === 'control' ? 'control' : 'data';
    const maxIterations = typeof raw.max_iterations === 'number' ? raw.max_iterations : undefined;
    declared.push({
      id: `${origin}:${path.join('.')}`,
      from: raw.from,
      to: raw.to,
      type,
      port: type === 'data' ? (str(raw.port) ?? raw.from) : str(raw.port),
      condition: str(raw.condition),
      maxIterations,
      origin,
      path,
      line,
    });
  };
  if (notation === 'nodes' || notation === 'agents') {
    const key = notation === 'nodes' ? 'edges' : 'flows';
    const seq = root.get(key, true);
    if (isSeq(seq)) {
      seq.items.forEach((item, i) => {
        if (!isMap(item)) return;
        const from = str(item.get(notation === 'nodes' ? 'from' : 'source'));
        const to = str(item.get(notation === 'nodes' ? 'to' : 'target'));
        pushDeclared(key, [key, i], { from, to, type: item.get('type'), port: item.get('port'), condition: item.get('condition'), max_iterations: item.get('max_iterations') }, lineOf(item));
      });
    }
  }
  if (notation === 'steps' && isSeq(list)) {
    list.items.forEach((item, i) => {
      if (!isMap(item)) return;
      const to = str(item.get('id'));
      const deps = item.get('depends_on', true);
      if (!to || !isSeq(deps)) return;
      deps.items.forEach((dep, j) => {
        const from = isScalar(dep) ? str(dep.value) : undefined;
        pushDeclared('depends_on', ['steps', i, 'depends_on', j], { from, to, type: 'data' }, lineOf(dep));
      });
    });
  }

  // Edges implied by node-sourced inputs (skipped when a declared data edge already feeds the port).
  const implied: DocEdge[] = [];
  if (isSeq(list)) {
    list.items.forEach((item, index) => {
      if (!isMap(item)) return;
      const to = str(item.get('id')) ?? (notation === 'agents' ? str(item.get('name')) : undefined);
      const inputs = item.get('inputs', true);
      if (!to || !isMap(inputs)) return;
      for (const pair of inputs.items) {
        const port = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        const v = pair.value;
        const source = isScalar(v) ? str(v.value) : isMap(v) ? str(v.get('from')) : undefined;
        if (!source) continue;
        const head = source.split('.')[0]!;
        if (head === 'task' || !ids.has(head)) continue;
        if (declared.some((e) => e.type === 'data' && e.from === head && e.to === to && e.port === port)) continue;
        const path = [notation, index, 'inputs', port];
        implied.push({ id: `inputs:${path.join('.')}`, from: head, to, type: 'data', port, origin: 'inputs', path, line: lineOf(pair.key) });
      }
    });
  }
  graph.edges = [...declared, ...implied];

  const answer = str(root.get('answer'));
  if (answer) {
    const head = answer.split('.')[0]!;
    if (ids.has(head)) graph.answer = head;
  } else {
    const sinks = graph.nodes.filter((n) => !graph.edges.some((e) => e.from === n.id && !e.maxIterations));
    if (sinks.length === 1) graph.answer = sinks[0]!.id;
  }
  return graph;
}

/** The node whose document entry contains `path` (e.g. `['nodes', 2, 'role']` -> nodes[2]). */
export function nodeAtPath(graph: DocGraph, path: DocPath): DocNode | undefined {
  if (path.length < 2 || path[0] !== graph.notation || typeof path[1] !== 'number') return undefined;
  return graph.nodes.find((n) => n.index === path[1]);
}

/** The edge written at or under `path` (e.g. `['edges', 0, 'condition']`). */
export function edgeAtPath(graph: DocGraph, path: DocPath): DocEdge | undefined {
  return graph.edges.find((e) => e.path.length <= path.length && e.path.every((seg, i) => path[i] === seg));
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v.length ? v : undefined;
  if (typeof v === 'number') return String(v);
  return undefined;
}
