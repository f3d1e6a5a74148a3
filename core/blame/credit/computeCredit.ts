import { type NodeId, type RoleName } from '../../ids.ts';
import type { AmbiguousBlame, Cascade, CreditEvent, CreditGraph, CreditResult, RoleCredit, RootFailure } from './types.ts';

/**
 * Structure-aware credit from one run's trace alone: no judge model, no labels, no re-runs
 * (FloWright, "structure-aware credit"; docs/credit.md).
 *
 * - Each node's state is its final attempt's status (loop attempts that were superseded do not count).
 * - A failed node none of whose required inputs came from a failed or cascaded node is a
 *   **root failure**. A node recorded `cascade`, or a failed node with a required input from a
 *   failed/cascaded node, is a **cascade** of the roots above it (transitively) and gets no blame.
 *   Optional inputs never make a cascade: the wiring said the node can run without them.
 *   Except: a node that failed as `wiring` is a root even below a failure. The engine fails a
 *   node the validator rejected before it reads any input (a designed node: core/design), and a
 *   run-time wiring failure happens only when every required input arrived; either way the fault
 *   is in the node's own wiring, whatever its inputs were.
 * - A root is blamed on its author in the sense of its fault: `wiring` -> the roles that wired
 *   it (`wiredBy`), `execution` -> the role that ran it (`runBy`). `infrastructure` roots are the
 *   harness's and are blamed on nobody. An execution fault in a node no role ran (a tool or a
 *   terminal) whose argument's author is recorded (`argumentFrom`: a node a role ran, feeding it
 *   by a required edge) and that has at most one wirer is blamed on that author, the root
 *   naming the author's node (`authorNode`): the executor only carried out what the author wrote
 *   (FloWright: a fault is the author's; Who&When: the decisive step of a failed code run is the
 *   message that wrote the code). Shared wiring (several `wiredBy`), or an execution fault in a
 *   node no role ran with no recorded author, is reported as ambiguous with its candidates and
 *   counted for no role.
 * - Per role: F_ρ = unambiguous roots blamed on ρ, V_ρ = nodes ρ wired or ran (or, through a
 *   read `argumentFrom`, wrote the argument of),
 *   c_ρ = −|F_ρ| / |V_ρ|. `human` appears here too when human wiring is at fault; it is not a
 *   trainable role and has no ladder.
 * - `silent`: no node failed, yet the grade says wrong (structure cannot see it).
 *
 * Complexity O(V + E + Σ roots per cascade): nodes are visited in topological order.
 * @param events any order; several attempts per node allowed (the highest attempt wins).
 * @param grade the grader's verdict, if the run was graded.
 */
export function computeCredit(graph: CreditGraph, events: readonly CreditEvent[], grade?: { correct: boolean }): CreditResult {
  const n = graph.nodes.length;
  const index = new Map<NodeId, number>();
  for (let i = 0; i < n; i++) index.set(graph.nodes[i]!.id, i);
  // Final attempt of each node.
  const final: Array<CreditEvent | undefined> = new Array(n);
  for (const e of events) {
    const i = index.get(e.nodeId);
    if (i === undefined) continue;
    const prev = final[i];
    if (!prev || e.attempt >= prev.attempt) final[i] = e;
  }
  // Edges in compressed-sparse-row form (no per-node arrays: this runs on 100k-node traces).
  const m = graph.edges.length;
  const eFrom = new Int32Array(m);
  const eTo = new Int32Array(m);
  const indeg = new Int32Array(n);
  const outdeg = new Int32Array(n);
  let kept = 0;
  for (const e of graph.edges) {
    const a = index.get(e.from);
    const b = index.get(e.to);
    if (a === undefined || b === undefined || a === b) continue;
    eFrom[kept] = a;
    eTo[kept] = e.optional ? ~b : b; // optional edges marked by bit-complement
    indeg[b]!++;
    outdeg[a]!++;
    kept++;
  }
  const inStart = new Int32Array(n + 1);
  const outStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    inStart[i + 1] = inStart[i]! + indeg[i]!;
    outStart[i + 1] = outStart[i]! + outdeg[i]!;
  }
  const inFrom = new Int32Array(kept);
  const inOptional = new Uint8Array(kept);
  const outTo = new Int32Array(kept);
  const inFill = inStart.slice(0, n);
  const outFill = outStart.slice(0, n);
  for (let k = 0; k < kept; k++) {
    const a = eFrom[k]!;
    const raw = eTo[k]!;
    const b = raw < 0 ? ~raw : raw;
    const slot = inFill[b]!++;
    inFrom[slot] = a;
    inOptional[slot] = raw < 0 ? 1 : 0;
    outTo[outFill[a]!++] = b;
  }
  // The argument's author of each node no role ran, where recorded and fed by a required edge (-1: none).
  const argAuthor = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    const node = graph.nodes[i]!;
    if (node.runBy || node.argumentFrom === undefined) continue;
    const a = index.get(node.argumentFrom);
    if (a === undefined || a === i || !graph.nodes[a]!.runBy) continue;
    for (let j = inStart[i]!; j < inStart[i + 1]!; j++) {
      if (inFrom[j] === a && !inOptional[j]) {
        argAuthor[i] = a;
        break;
      }
    }
  }
  // Kahn's order; nodes left over (a cycle in a hand-built graph) are appended in given order.
  const order = new Int32Array(n);
  let len = 0;
  for (let i = 0; i < n; i++) if (indeg[i] === 0) order[len++] = i;
  for (let k = 0; k < len; k++) {
    const a = order[k]!;
    for (let j = outStart[a]!; j < outStart[a + 1]!; j++) if (--indeg[outTo[j]!]! === 0) order[len++] = outTo[j]!;
  }
  if (len < n) {
    const placed = new Uint8Array(n);
    for (let k = 0; k < len; k++) placed[order[k]!] = 1;
    for (let i = 0; i < n; i++) if (!placed[i]) order[len++] = i;
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
    const ev = final[i];
    const status = ev?.status;
    if (status !== 'failed' && status !== 'cascade') continue;
    anyFailure = true;
    bad[i] = 1;
    let upstream: NodeId[] | undefined;
    for (let j = inStart[i]!; j < inStart[i + 1]!; j++) {
      const from = inFrom[j]!;
      if (inOptional[j] || bad[from] === BAD_NONE) continue;
      const r = rootsOf[from]!;
      if (!upstream) upstream = r.slice();
      else for (const id of r) if (!upstream.includes(id)) upstream.push(id);
    }
    if (status === 'cascade' || (upstream && ev!.failureClass !== 'wiring')) {
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
      let forceAmbiguous = false;
      if (cls === 'wiring') {
        candidates = [...new Set(node.wiredBy)];
        reason = candidates.length > 1 ? `wiring fault in a node wired by ${candidates.join(' and ')}` : 'wiring fault in a node with no recorded wirer';
      } else if (node.runBy) {
        candidates = [node.runBy];
        reason = '';
      } else if (argAuthor[i]! >= 0 && new Set(node.wiredBy).size <= 1) {
        // The node executed an argument one node wrote: the fault is that node's author's.
        const author = graph.nodes[argAuthor[i]!]!;
        candidates = [author.runBy!];
        reason = '';
        root.authorNode = author.id;
      } else {
        // An execution fault in a node no role ran (a tool nobody called by name) with no recorded
        // author, or with shared wiring: its wirer chose it and its producers fed it valid inputs;
        // structure cannot say which. Always ambiguous.
        const producers: RoleName[] = [];
        for (let j = inStart[i]!; j < inStart[i + 1]!; j++) {
          const r = graph.nodes[inFrom[j]!]!.runBy;
          if (r) producers.push(r);
        }
        candidates = [...new Set([...node.wiredBy, ...producers])];
        reason = 'execution fault in a node no role ran (its wirer chose it; its producers fed it)';
        forceAmbiguous = true;
      }
      if (candidates.length === 1 && !forceAmbiguous) {
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
  for (let i = 0; i < n; i++) {
    const node = graph.nodes[i]!;
    const w = node.wiredBy;
    for (let k = 0; k < w.length; k++) if (w.indexOf(w[k]!) === k) entry(w[k]!).authored.push(node.id);
    if (node.runBy && !w.includes(node.runBy)) entry(node.runBy).authored.push(node.id);
    const a = argAuthor[i]!;
    const by = a >= 0 ? graph.nodes[a]!.runBy! : undefined;
    if (by && !w.includes(by)) entry(by).authored.push(node.id);
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
