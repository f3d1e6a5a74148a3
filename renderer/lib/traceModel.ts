/**
 * What the Trace view draws for one run (pure): each node's state from its final attempt and
 * the run's structure-aware credit, the blamed role of each root failure, ambiguous candidates,
 * and the per-role blame summary. States are told apart by shape, border and a text marker,
 * never by colour alone.
 */
import type { FailureClass, NodeEvent, RootFailure, RunRecord } from '../../core/api/client.ts';
import type { DocGraph, EdgeType, NodeKind } from './workflowGraph.ts';

/**
 * - `ok`: ran cleanly; `root`: a root failure (blamed on a role, the harness, or ambiguous);
 * - `cascade`: failed or not run because an input failed (never blamed);
 * - `skipped`: skipped (e.g. a condition was false) or never reached;
 * - `silent`: the answer node of a silent run: no node failed, yet the answer is wrong.
 */
export type TraceState = 'ok' | 'root' | 'cascade' | 'skipped' | 'silent';

export const STATE_MARKER: Record<TraceState, string> = { ok: '✓', root: '✗', cascade: '↓', skipped: '–', silent: '?' };
export const STATE_TEXT: Record<TraceState, string> = { ok: 'ok', root: 'root failure', cascade: 'cascade', skipped: 'skipped', silent: 'silent: wrong answer' };

export interface TraceNode {
  id: string;
  kind: NodeKind;
  role?: string;
  state: TraceState;
  /** False when the node has no event (never reached). */
  ran: boolean;
  failureClass?: FailureClass;
  errorCode?: string;
  /** Root failures: the blamed role; null for the harness's fault or ambiguous authorship. */
  blamed?: string | null;
  /** Ambiguous roots: every role that could be to blame. */
  candidates?: string[];
  /** Cascades: the root failures above. */
  roots?: string[];
  simulated: boolean;
  fault?: string;
  attempts: number;
  /** Layout order fallback: position in the run (seq of the final attempt). */
  seq: number;
}

export interface TraceEdge {
  id: string;
  from: string;
  to: string;
  type: EdgeType;
  maxIterations?: number;
}

export interface RoleBlame {
  role: string;
  /** Root failures blamed on the role (|F_ρ|). */
  rootFailures: string[];
  /** Nodes the role wired or ran (|V_ρ|). */
  authored: number;
  /** c_ρ = −|F_ρ| / |V_ρ|. */
  credit: number;
}

export interface TraceModel {
  nodes: TraceNode[];
  edges: TraceEdge[];
  /** Per role, from run.credit.byRole (empty when the run has no credit). */
  blame: RoleBlame[];
  ambiguous: Array<{ nodeId: string; candidates: string[]; reason: string }>;
  /** Root failures that are the harness's own (blamed on nobody). */
  infrastructure: string[];
  silent: boolean;
  /** Events grouped per node, in attempt order. */
  attempts: Map<string, NodeEvent[]>;
}

/**
 * Builds the drawable trace of a run: the workflow's nodes and edges (when the workflow parsed)
 * plus any node that only appears in the events.
 */
export function buildTraceModel(graph: DocGraph | null, run: Pick<RunRecord, 'credit' | 'correct' | 'status'>, events: readonly NodeEvent[]): TraceModel {
  const attempts = new Map<string, NodeEvent[]>();
  for (const e of events) {
    const list = attempts.get(e.nodeId);
    if (list) list.push(e);
    else attempts.set(e.nodeId, [e]);
  }
  for (const list of attempts.values()) list.sort((a, b) => a.attempt - b.attempt || a.seq - b.seq);

  const credit = run.credit;
  const roots = new Map<string, RootFailure>();
  for (const r of credit?.roots ?? []) roots.set(r.nodeId, r);
  const cascades = new Map<string, string[]>();
  for (const c of credit?.cascades ?? []) cascades.set(c.nodeId, c.roots);
  const ambiguous = new Map<string, string[]>();
  for (const a of credit?.ambiguous ?? []) ambiguous.set(a.nodeId, a.candidates);
  const silent = Boolean(credit?.silent);

  const shapes: Array<{ id: string; kind: NodeKind; role?: string }> = graph ? graph.nodes.map((n) => ({ id: n.id, kind: n.kind, role: n.role })) : [];
  const known = new Set(shapes.map((s) => s.id));
  for (const e of events) {
    if (!known.has(e.nodeId)) {
      known.add(e.nodeId);
      shapes.push({ id: e.nodeId, kind: e.kind, role: e.role });
    }
  }

  const nodes: TraceNode[] = shapes.map((shape) => {
    const list = attempts.get(shape.id) ?? [];
    const final = list[list.length - 1];
    const node: TraceNode = {
      id: shape.id,
      kind: final?.kind ?? shape.kind,
      role: final?.role ?? shape.role,
      state: 'skipped',
      ran: !!final,
      simulated: list.some((e) => e.simulated),
      fault: [...list].reverse().find((e) => e.fault)?.fault,
      attempts: list.length,
      seq: final?.seq ?? Number.MAX_SAFE_INTEGER,
    };
    if (!final) return node;
    node.failureClass = final.failureClass;
    node.errorCode = final.errorCode;
    const root = roots.get(shape.id);
    if (root) {
      node.state = 'root';
      node.failureClass = root.failureClass;
      node.blamed = root.blamed;
      const candidates = root.candidates ?? ambiguous.get(shape.id);
      if (candidates?.length) node.candidates = candidates;
    } else if (cascades.has(shape.id) || final.status === 'cascade' || final.failureClass === 'cascade') {
      node.state = 'cascade';
      node.roots = cascades.get(shape.id) ?? final.causes;
    } else if (final.status === 'failed') {
      // No credit recorded (older runs): a failure not caused upstream is shown as a root.
      node.state = 'root';
      node.blamed = credit ? null : undefined;
    } else if (final.status === 'skipped') {
      node.state = 'skipped';
    } else {
      node.state = 'ok';
    }
    return node;
  });
  if (silent && graph?.answer) {
    const answer = nodes.find((n) => n.id === graph.answer);
    if (answer && answer.state === 'ok') answer.state = 'silent';
  }

  const edges: TraceEdge[] = (graph?.edges ?? [])
    .filter((e) => known.has(e.from) && known.has(e.to))
    .map((e) => ({ id: e.id, from: e.from, to: e.to, type: e.type, maxIterations: e.maxIterations }));

  const blame: RoleBlame[] = Object.entries(credit?.byRole ?? {}).map(([role, c]) => ({ role, rootFailures: [...c.rootFailures], authored: c.authored.length, credit: c.credit }));
  return {
    nodes,
    edges,
    blame,
    ambiguous: (credit?.ambiguous ?? []).map((a) => ({ nodeId: a.nodeId, candidates: [...a.candidates], reason: a.reason })),
    infrastructure: [...(credit?.infrastructure ?? [])],
    silent,
    attempts,
  };
}

/** The blame line of a root failure: `blamed: solver`, `harness (infrastructure)`, `ambiguous: a | b`. */
export function blameText(node: Pick<TraceNode, 'state' | 'blamed' | 'candidates' | 'failureClass'>): string | null {
  if (node.state !== 'root') return null;
  if (node.blamed) return `blamed: ${node.blamed}`;
  if (node.candidates?.length) return `ambiguous: ${node.candidates.join(' | ')}`;
  if (node.failureClass === 'infrastructure') return 'harness fault (no role blamed)';
  if (node.blamed === null) return 'no role blamed';
  return 'blame not computed';
}

/** Node ids in the order the accessible list shows them: by the run's seq, unrun nodes last. */
export function listOrder(nodes: readonly TraceNode[]): TraceNode[] {
  return [...nodes].sort((a, b) => a.seq - b.seq || a.id.localeCompare(b.id));
}
