/**
 * Graph edits applied to the workflow's YAML text through the `yaml` Document API, so comments
 * and layout survive (see preserveFormatting). An edit is plain data (a diff, as tldraw's RecordsDiff), the
 * answer is the new text or a message saying why the edit cannot apply. Pure, no DOM.
 */
import { isMap, isScalar, isSeq, YAMLSeq, type Document, type Node as YamlNode } from 'yaml';
import { preserveFormatting, toStringOptions } from './preserveFormat.ts';
import { graphOfDocument, parseWorkflowGraph, type DocGraph, type EdgeType, type NodeKind } from './workflowGraph.ts';

export type GraphEdit =
  | { op: 'addNode'; node: { id: string; kind: NodeKind; role?: string; tool?: string; skill?: string } }
  | { op: 'removeNode'; id: string }
  | { op: 'addEdge'; from: string; to: string; type: EdgeType; maxIterations?: number }
  | { op: 'removeEdge'; edgeId: string }
  | { op: 'setRole'; id: string; role: string };

export type EditResult = { ok: true; text: string } | { ok: false; message: string };

const ID = /^[A-Za-z_][\w-]*$/;

/** Applies one edit to the document text. */
export function applyGraphEdit(text: string, edit: GraphEdit): EditResult {
  const parsed = parseWorkflowGraph(text);
  if (!parsed.ok) return fail(`the YAML does not parse (line ${parsed.line ?? '?'}: ${parsed.message}); fix the text first`);
  const { doc, graph } = parsed;
  const options = toStringOptions(text);
  const base = doc.toString(options);
  const problem = editDocument(doc, graph, edit);
  if (problem) return fail(problem);
  return { ok: true, text: preserveFormatting(text, base, doc.toString(options)) };
}

/** Applies the edit in place; returns why it cannot apply, or null. */
function editDocument(doc: Document, graph: DocGraph, edit: GraphEdit): string | null {
  const notation = graph.notation;
  switch (edit.op) {
    case 'addNode': {
      const { id, kind, role, tool, skill } = edit.node;
      if (!ID.test(id)) return `node id "${id}" must start with a letter or _ and use only letters, digits, _ and -`;
      if (graph.nodes.some((n) => n.id === id)) return `there is already a node "${id}"`;
      if (kind !== 'tool' && !role) return `a ${kind} node needs a role`;
      if (kind === 'tool' && !tool) return 'a tool node needs a tool name';
      if (kind === 'skill' && !skill) return 'a skill node needs a skill name';
      const key = notation ?? 'nodes';
      const entry: Record<string, unknown> = { id };
      if (kind === 'tool') entry.tool = tool;
      if (kind === 'skill') entry.skill = skill;
      if (role) entry.role = role;
      const seq = ensureSeq(doc, key);
      const item = doc.createNode(entry);
      // Follow the list's spacing: blank line between entries when the others have one.
      const last = seq.items[seq.items.length - 1] as YamlNode | undefined;
      if (last && seq.items.length > 1 && (seq.items[1] as YamlNode | undefined)?.spaceBefore) item.spaceBefore = true;
      seq.items.push(item);
      return null;
    }
    case 'removeNode': {
      const node = graph.nodes.find((n) => n.id === edit.id);
      if (!node || !notation) return `there is no node "${edit.id}"`;
      // Everything that refers to the node goes with it; paths removed deepest/last first.
      const paths: Array<ReadonlyArray<string | number>> = [];
      const inside = (p: ReadonlyArray<string | number>) => node.path.every((seg, i) => p[i] === seg);
      for (const e of graph.edges) if ((e.from === edit.id || e.to === edit.id) && !inside(e.path)) paths.push(e.path);
      const list = doc.get(notation, true);
      if (isSeq(list)) {
        list.items.forEach((item, i) => {
          if (!isMap(item) || i === node.index) return;
          const inputs = item.get('inputs', true);
          if (!isMap(inputs)) return;
          for (const pair of inputs.items) {
            const v = pair.value;
            const from = isScalar(v) ? v.value : isMap(v) ? v.get('from') : undefined;
            if (typeof from === 'string' && from.split('.')[0] === edit.id) {
              const port = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
              const p = [notation, i, 'inputs', port];
              if (!paths.some((q) => samePath(q, p))) paths.push(p);
            }
          }
        });
      }
      const hops = doc.get('hops', true);
      if (isSeq(hops)) hops.items.forEach((h, i) => isScalar(h) && h.value === edit.id && paths.push(['hops', i]));
      paths.push(node.path);
      deleteAll(doc, paths);
      // Lists the removal emptied go too.
      for (const key of ['edges', 'flows', 'hops']) {
        const seq = doc.get(key, true);
        if (isSeq(seq) && seq.items.length === 0 && paths.some((p) => p[0] === key)) doc.delete(key);
      }
      return null;
    }
    case 'addEdge': {
      const { from, to, type, maxIterations } = edit;
      if (!notation) return 'the workflow has no nodes yet';
      for (const end of [from, to]) if (!graph.nodes.some((n) => n.id === end)) return `there is no node "${end}"`;
      if (from === to && !maxIterations) return 'an edge from a node to itself needs max_iterations (a bounded loop)';
      if (graph.edges.some((e) => e.from === from && e.to === to && e.type === type)) return `there is already a ${type} edge ${from} -> ${to}`;
      if (maxIterations !== undefined && !(Number.isInteger(maxIterations) && maxIterations >= 1 && maxIterations <= 100)) return 'max_iterations must be a whole number from 1 to 100';
      if (notation === 'steps') {
        if (type === 'control' || maxIterations) return 'the steps notation has only data dependencies (depends_on); use the nodes notation for control edges and loops';
        const target = graph.nodes.find((n) => n.id === to)!;
        const deps = doc.getIn(['steps', target.index, 'depends_on'], true);
        if (isSeq(deps)) deps.items.push(doc.createNode(from));
        else doc.setIn(['steps', target.index, 'depends_on'], doc.createNode([from], { flow: true }));
        return null;
      }
      const key = notation === 'nodes' ? 'edges' : 'flows';
      const entry: Record<string, unknown> = notation === 'nodes' ? { from, to } : { source: from, target: to };
      if (type === 'control') entry.type = 'control';
      if (maxIterations) entry.max_iterations = maxIterations;
      ensureSeq(doc, key).items.push(doc.createNode(entry, { flow: true }));
      return null;
    }
    case 'removeEdge': {
      const edge = graph.edges.find((e) => e.id === edit.edgeId);
      if (!edge) return 'that edge is no longer in the document';
      deleteAll(doc, [edge.path]);
      // An emptied `edges:`/`flows:`/`depends_on:` list goes too.
      const parent = edge.path.slice(0, -1);
      const left = doc.getIn(parent, true);
      if (isSeq(left) && left.items.length === 0 && edge.origin !== 'inputs') doc.deleteIn(parent);
      return null;
    }
    case 'setRole': {
      const node = graph.nodes.find((n) => n.id === edit.id);
      if (!node) return `there is no node "${edit.id}"`;
      if (!graph.roles.some((r) => r.name === edit.role)) return `there is no role "${edit.role}" (roles: ${graph.roles.map((r) => r.name).join(', ') || 'none'})`;
      const current = doc.getIn([...node.path, 'role'], true);
      if (isScalar(current)) current.value = edit.role;
      else doc.setIn([...node.path, 'role'], edit.role);
      return null;
    }
  }
  return edit satisfies never;
}

/** The sequence under a top-level key, created (block style) when missing. */
function ensureSeq(doc: Document, key: string): YAMLSeq {
  const existing = doc.get(key, true);
  if (isSeq(existing)) return existing;
  const seq = new YAMLSeq();
  doc.set(key, seq);
  return seq;
}

/** Deletes several paths so earlier deletions do not shift later ones (higher indices first). */
function deleteAll(doc: Document, paths: Array<ReadonlyArray<string | number>>): void {
  const sorted = [...paths].sort(comparePathsDesc);
  for (const p of sorted) doc.deleteIn(p);
}

function comparePathsDesc(a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return y - x;
    return String(y).localeCompare(String(x));
  }
  return b.length - a.length;
}

function samePath(a: ReadonlyArray<string | number>, b: ReadonlyArray<string | number>): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

function fail(message: string): EditResult {
  return { ok: false, message };
}

/** The graph after an edit, for callers that want both (tests, optimistic redraw). */
export function graphOf(text: string): DocGraph | null {
  const p = parseWorkflowGraph(text);
  return p.ok ? graphOfDocument(p.doc, p.lines) : null;
}
