import { HUMAN, type NodeId, type RoleName } from '../ids.ts';
import type { AmbiguousBlame, Cascade, CreditEvent, CreditGraph, CreditResult, RoleCredit, RootFailure } from './types.ts';

/**
 * Structure-aware credit from one run's trace alone: no judge model, no labels, no re-runs
 * (FloWright, BRIEF §1 "Structure-aware credit").
 *
 * - Each node's state is its final attempt's status (loop attempts that were superseded do not count).
 * - A failed node none of whose required inputs came from a failed or cascaded node is a
 *   **root failure**. A node recorded `cascade`, or a failed node with a required input from a
 *   failed/cascaded node, is a **cascade** of the roots above it (transitively) and gets no blame.
 *   Optional inputs never make a cascade: the wiring said the node can run without them.
 * - A root is blamed on its author in the sense of its fault: `wiring` -> the roles that wired
 *   it (`wiredBy`), `execution` -> the role that ran it (`runBy`). `infrastructure` roots are the
 *   harness's and are blamed on nobody. Shared wiring (several `wiredBy`) or an execution fault in
 *   a node no role ran is reported as ambiguous with its candidates and counted for no role.
 * - Per role: F_ρ = unambiguous roots blamed on ρ, V_ρ = nodes ρ wired or ran,
 *   c_ρ = −|F_ρ| / |V_ρ|. `human` appears here too when human wiring is at fault; it is not a
 *   trainable role and has no ladder.
 * - `silent`: no node failed, yet the grade says wrong (structure cannot see it).
 *
 * Complexity O(V + E + Σ roots per cascade): nodes are visited in topological order.
 * @param events any order; several attempts per node allowed (the highest attempt wins).
 * @param grade the grader's verdict, if the run was graded.
 */
export function computeCredit(graph: CreditGraph, events: readonly CreditEvent[], grade?: { correct: boolean }): CreditResult {
  const final = new Map<NodeId, CreditEvent>();
  for (const e of events) {
    const prev = final.get(e.nodeId);
    if (!prev || e.attempt >= prev.attempt) final.set(e.nodeId, e);
  }
  const index = new Map<NodeId, number>();
  graph.nodes.forEach((n, i) => index.set(n.id, i));
  const n = graph.nodes.length;
  const inEdges: Array<Array<{ from: number; optional: boolean }>> = Array.from({ length: n }, () => []);
  const outEdges: number[][] = Array.from({ length: n }, () => []);
  const indeg = new Int32Array(n);
  for (const e of graph.edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    inEdges[b]!.push({ from: a, optional: Boolean(e.optional) });
    outEdges[a]!.push(b);
    indeg[b]!++;
  }
  // Kahn's order; nodes left over (a cycle in a hand-built graph) are appended in given order.
  const order: number[] = [];
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order.push(i);
  for (let k = 0; k < order.length; k++) for (const j of outEdges[order[k]!]!) if (--indeg[j]! === 0) order.push(j);
  if (order.length < n) {
    const seen = new Set(order);
    for (let i = 0; i < n; i++) if (!seen.has(i)) order.push(i);
  }

  const BAD_NONE = 0;
  const bad = new Uint8Array(n); // 1 = failed or cascade
  const rootsOf: Array<NodeId[] | undefined> = new Array(n);
  const roots: RootFailure[] = [];
  const cascades: Cascade[] = [];
  const ambiguous: AmbiguousBlame[] = [];
  const infrastructure: NodeId[] = [];
  const blamedOn = new Map<string, NodeId[]>();
  let anyFailure = false;

  for (const i of order) {
    const node = graph.nodes[i]!;
    const ev = final.get(node.id);
    const status = ev?.status;
    if (status !== 'failed' && status !== 'cascade') continue;
    anyFailure = true;
    bad[i] = 1;
    let upstream: NodeId[] | undefined;
    for (const e of inEdges[i]!) {
      if (e.optional || bad[e.from] === BAD_NONE) continue;
      const r = rootsOf[e.from]!;
      if (!upstream) upstream = r.slice();
      else for (const id of r) if (!upstream.includes(id)) upstream.push(id);
    }
    if (status === 'cascade' || upstream) {
      rootsOf[i] = upstream ?? [];
      cascades.push({ nodeId: node.id, status, roots: rootsOf[i]! });
      continue;
    }
    rootsOf[i] = [node.id];
    const cls = ev!.failureClass === 'wiring' || ev!.failureClass === 'infrastructure' ? ev!.failureClass : 'execution';
    const root: RootFailure = { nodeId: node.id, failureClass: cls, errorCode: ev!.errorCode, blamed: null };
    if (ev!.simulated) root.simulated = true;
    if (cls === 'infrastructure') {
      infrastructure.push(node.id);
    } else {
      let candidates: RoleName[];
      let reason: string;
      if (cls === 'wiring') {
        candidates = [...new Set(node.wiredBy)];
        reason = candidates.length > 1 ? `wiring fault in a node wired by ${candidates.join(' and ')}` : 'wiring fault in a node with no recorded wirer';
      } else if (node.runBy) {
        candidates = [node.runBy];
        reason = '';
      } else {
        const producers = inEdges[i]!.map((e) => graph.nodes[e.from]!.runBy).filter((r): r is RoleName => Boolean(r));
        candidates = [...new Set([...node.wiredBy.filter((r) => r !== HUMAN), ...producers])];
        reason = 'execution fault in a node no role ran (its wirer chose it; its producers fed it)';
      }
      if (candidates.length === 1) {
        root.blamed = candidates[0]!;
        const list = blamedOn.get(root.blamed) ?? [];
        list.push(node.id);
        blamedOn.set(root.blamed, list);
      } else {
        root.candidates = candidates;
        ambiguous.push({ nodeId: node.id, candidates, reason });
      }
    }
    roots.push(root);
  }

  const byRole: Record<string, RoleCredit> = {};
  const entry = (role: string) => (byRole[role] ??= { rootFailures: [], authored: [], credit: 0 });
  for (const node of graph.nodes) {
    const authors = new Set<string>(node.wiredBy);
    if (node.runBy) authors.add(node.runBy);
    for (const a of authors) entry(a).authored.push(node.id);
  }
  for (const [role, ids] of blamedOn) entry(role).rootFailures.push(...ids);
  for (const rc of Object.values(byRole)) rc.credit = rc.authored.length && rc.rootFailures.length ? -rc.rootFailures.length / rc.authored.length : 0;

  return {
    roots,
    cascades,
    byRole,
    ambiguous,
    infrastructure,
    silent: !anyFailure && grade !== undefined && !grade.correct,
  };
}
