/**
 * What the Trace view draws for one run (pure): each node's state from its final attempt and
 * the run's structure-aware credit, the blamed role of each root failure, ambiguous candidates,
 * and the per-role blame summary. States are told apart by shape, border and a text marker,
 * never by colour alone.
 */
import type { FailureClass, NodeEvent, NodeOrigin, RootFailure, RunRecord } from '../../core/api/client.ts';
import type { EdgeType, NodeKind } from './workflowGraph.ts';

/**
 * The graph a trace is drawn on: the run's own graph from the API (`RunTrace.graph`, a designed
 * run's design spliced in), or the outline of the workflow text (`DocGraph`) when the host could
 * not compile it. Author fields are known only from the first.
 */
export interface TraceGraph {
  nodes: ReadonlyArray<{ id: string; kind: NodeKind; role?: string; tool?: string; skill?: string; wiredBy?: string; runBy?: string; origin?: NodeOrigin; wiringFault?: { code: string; message: string } }>;
  edges: ReadonlyArray<{ id: string; from: string; to: string; type: EdgeType; maxIterations?: number }>;
  answer?: string;
  /** The design stage of a designed workflow: its node and the designer role. */
  design?: { nodeId: string; role: string };
}

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
  tool?: string;
  skill?: string;
  /** Who wired the node in (`human` for a hand-written workflow's nodes) and who ran it. */
  wiredBy?: string;
  runBy?: string;
  /** Where the node comes from (known from the run's graph): the workflow, the design stage, or the designer's design. */
  origin?: NodeOrigin;
  /** A designed node the validator rejected before it could run (a wiring root failure). */
  wiringFault?: { code: string; message: string };
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
  /** Set for a designed workflow's run: its design node and the designer role. */
  design?: { nodeId: string; role: string };
}

/**
 * Builds the drawable trace of a run: the workflow's nodes and edges (when the workflow parsed)
 * plus any node that only appears in the events.
 */
export function buildTraceModel(graph: TraceGraph | null, run: Pick<RunRecord, 'credit' | 'correct' | 'status'>, events: readonly NodeEvent[]): TraceModel {
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

  type Shape = TraceGraph['nodes'][number];
  const shapes: Shape[] = graph ? [...graph.nodes] : [];
  const known = new Set(shapes.map((s) => s.id));
  for (const e of events) {
    if (!known.has(e.nodeId)) {
      known.add(e.nodeId);
      shapes.push({ id: e.nodeId, kind: e.kind, role: e.role });
    }
  }
  const design = graph?.design;

  const nodes: TraceNode[] = shapes.map((shape) => {
    const list = attempts.get(shape.id) ?? [];
    const final = list[list.length - 1];
    const node: TraceNode = {
      id: shape.id,
      kind: final?.kind ?? shape.kind,
      role: final?.role ?? shape.role,
      ...(shape.tool ? { tool: shape.tool } : {}),
      ...(shape.skill ? { skill: shape.skill } : {}),
      ...((final?.wiredBy ?? shape.wiredBy) ? { wiredBy: final?.wiredBy ?? shape.wiredBy } : {}),
      ...((final ? final.runBy : shape.runBy) ? { runBy: final ? final.runBy : shape.runBy } : {}),
      ...(shape.origin ? { origin: shape.origin } : design && shape.id === design.nodeId ? { origin: 'design' as const } : {}),
      ...(shape.wiringFault ? { wiringFault: shape.wiringFault } : {}),
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
    ...(design ? { design: { ...design } } : {}),
  };
}

/** One author mark of a node: told apart by its text and symbol, not by colour. */
export interface AuthorBadge {
  /** `design`: the design node (the designer's own); `wired`: drawn and wired by the designer; `human`: hand-written wiring; `run`: the role that ran it. */
  kind: 'design' | 'wired' | 'human' | 'run';
  text: string;
}

/**
 * The author marks of a node in a designed run (none for a hand-written workflow's run, whose
 * every node is wired by a human): the design node is the designer's; a designed node is wired
 * by the designer and run by its role (FloWright: the generator owns every node it wired, the
 * executor the nodes it ran; docs/credit.md).
 */
export function authorBadges(node: Pick<TraceNode, 'id' | 'origin' | 'wiredBy' | 'runBy'>, design: TraceModel['design']): AuthorBadge[] {
  if (!design) return [];
  if (node.origin === 'design' || node.id === design.nodeId) return [{ kind: 'design', text: `✎ design node, run by ${design.role}` }];
  const out: AuthorBadge[] = [];
  const wirer = node.wiredBy ?? (node.origin === 'designed' ? design.role : undefined);
  if (wirer === design.role) out.push({ kind: 'wired', text: `✎ wired by ${wirer}` });
  else if (wirer) out.push({ kind: 'human', text: `wired by ${wirer}` });
  if (node.runBy) out.push({ kind: 'run', text: `▶ run by ${node.runBy}` });
  return out;
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

/**
 * A row of the blame-per-role table in words. Every role is itself, except `human`: the author
 * of the hand-written workflow (nodes wired in the YAML, not by a designer role), which no model
 * plays, so its credit is a finding about the file, not a reward anyone is trained on.
 */
export function blameRoleLabel(role: string): { name: string; note?: string } {
  if (role !== 'human') return { name: role };
  return { name: 'the workflow file (wired by hand)', note: 'failures here are in the YAML as written: fix the file; no model is trained on this row' };
}
