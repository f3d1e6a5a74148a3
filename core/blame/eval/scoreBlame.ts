import type { CreditGraph, CreditResult } from '../credit/types.ts';
import { isDesignRecord } from '../../design/record.ts';
import type { NodeEvent } from '../../trace/events.ts';
import { DESIGN_FAULT_KINDS, FAULT_KINDS } from '../../faults/inject.ts';

export interface BlameRate {
  /** Correct blames / blames at injected nodes (and wrongly at nodes below them); null when none. */
  precision: number | null;
  /** Injected faults blamed on the injected role / injected faults; null when none injected. */
  recall: number | null;
  injected: number;
}

/** How well structural credit finds injected (simulated) faults, against their ground truth. */
export interface BlameReport {
  runs: number;
  byRole: Record<string, BlameRate & { blamed: number }>;
  /** Per fault kind; design kinds (present when a run has a design stage) also count `notApplicable`. */
  byKind: Record<string, BlameRate & { surfaced: number; notApplicable?: number }>;
  /** Cascades below injected faults that credit did not blame. */
  cascadesNotBlamed: number;
  cascadesTotal: number;
  /** The part of those cascades that lies behind a SIMULATED bad wire (runs with a design stage only). */
  designCascades?: { total: number; notBlamed: number };
  /** Injected faults that made no node fail (wrong, dropped optional field): invisible to structure. */
  unseen: number;
  /** unseen / injected. */
  unseenShare: number;
  /** Root failures the model made by itself (no fault injected there or above): not counted in precision. */
  natural: { roots: number; byRole: Record<string, number>; ambiguous: number; infrastructure: number };
}

/** One scored run: the graph it ran (a designed run: with its design spliced in), its events and credit. */
export interface BlameRun {
  graph: CreditGraph;
  events: readonly NodeEvent[];
  credit: CreditResult;
  /** Design fault kinds drawn for this run that had no place in its design (DesignFaultInjector). */
  designNotApplicable?: readonly string[];
}

/** An event's execution fault kind (a design node's `design:<kind>` mark is not one). */
const execFault = (e: NodeEvent | undefined) => (e?.fault && !e.fault.startsWith('design:') ? e.fault : undefined);

/**
 * Scores structural blame against injected ground truth (docs/credit.md, "Fault injection (simulated) and
 * blame evaluation").
 * Input: each run's credit graph, node events (injected ones carry `fault`) and credit result.
 * Execution faults: the ground truth is the injected node run, owned by the role that ran it.
 * Design (wiring) faults: the ground truth is the designed node in the design node's record
 * (`DesignRecord.fault`), owned by the role that wired it; found when that node is a root blamed
 * on that role with class `wiring`; surfaced when the node failed (it is pre-failed unless the
 * design as a whole could not run).
 * - recall (per role, per kind) = injected faults whose node is a root blamed on the injected
 *   role / injected faults; silent kinds therefore have low recall by design, and `unseen` says
 *   how many faults structure could not see;
 * - precision (per role) = correct blames / blames on that role at injected nodes or at nodes
 *   below a failed injected node through required edges (a cascade wrongly blamed);
 * - natural failures (no injection at or above the node) are counted apart and do not affect precision.
 * Only the final attempt of each node counts (a fault a loop recovered from is unseen).
 */
export function scoreBlame(runs: readonly BlameRun[]): BlameReport {
  const byRole: BlameReport['byRole'] = {};
  const byKind: BlameReport['byKind'] = {};
  for (const k of FAULT_KINDS) byKind[k] = { precision: null, recall: null, injected: 0, surfaced: 0 };
  if (runs.some((r) => r.events.some((e) => isDesignRecord(e.output)))) {
    for (const k of DESIGN_FAULT_KINDS) byKind[k] = { precision: null, recall: null, injected: 0, surfaced: 0, notApplicable: 0 };
  }
  const kind = (k: string) => (byKind[k] ??= { precision: null, recall: null, injected: 0, surfaced: 0 });
  const roleHits: Record<string, { correct: number; blamed: number; found: number }> = {};
  const kindHits: Record<string, { correct: number; blamed: number; found: number }> = {};
  const hit = (m: typeof roleHits, k: string) => (m[k] ??= { correct: 0, blamed: 0, found: 0 });
  const role = (r: string) => (byRole[r] ??= { precision: null, recall: null, injected: 0, blamed: 0 });
  let cascadesTotal = 0;
  let cascadesNotBlamed = 0;
  let unseen = 0;
  let injectedTotal = 0;
  const designCascades = { total: 0, notBlamed: 0 };
  const natural: BlameReport['natural'] = { roots: 0, byRole: {}, ambiguous: 0, infrastructure: 0 };

  for (const run of runs) {
    const final = new Map<string, NodeEvent>();
    for (const e of run.events) {
      const p = final.get(e.nodeId);
      if (!p || e.attempt >= p.attempt) final.set(e.nodeId, e);
    }
    const rootAt = new Map(run.credit.roots.map((r) => [r.nodeId as string, r]));
    const runner = new Map(run.graph.nodes.map((n) => [n.id as string, n.runBy as string | undefined]));
    // A role-less tool running an argument one agent node wrote is that author's (core/blame/credit argumentFrom).
    for (const n of run.graph.nodes) if (!n.runBy && n.argumentFrom) runner.set(n.id, runner.get(n.argumentFrom));
    const wirer = new Map(run.graph.nodes.map((n) => [n.id as string, n.wiredBy.length === 1 ? (n.wiredBy[0] as string) : undefined]));
    // Design faults: the designed node named in the design node's record, owned by its wirer.
    const designAt = new Map<string, { kind: string; who: string }>();
    for (const e of final.values()) {
      if (!isDesignRecord(e.output) || !e.output.fault) continue;
      const f = e.output.fault;
      const who = wirer.get(f.nodeId) ?? e.runBy ?? '(no role)';
      designAt.set(f.nodeId, { kind: f.kind, who });
      injectedTotal++;
      role(who).injected++;
      kind(f.kind).injected++;
      const surfaced = final.get(f.nodeId)?.status === 'failed';
      if (surfaced) kind(f.kind).surfaced++;
      else unseen++;
      const r = surfaced ? rootAt.get(f.nodeId) : undefined;
      if (r && r.blamed === who && r.failureClass === 'wiring') {
        hit(roleHits, who).found++;
        hit(kindHits, f.kind).found++;
      }
    }
    for (const k of run.designNotApplicable ?? []) kind(k).notApplicable = (kind(k).notApplicable ?? 0) + 1;
    // Injected execution faults (every attempt that received one).
    for (const e of run.events) {
      const fault = execFault(e);
      if (!fault) continue;
      const who = runner.get(e.nodeId) ?? e.runBy ?? '(no role)';
      injectedTotal++;
      role(who).injected++;
      kind(fault).injected++;
      const isFinal = final.get(e.nodeId) === e;
      const surfaced = isFinal && e.status === 'failed';
      if (surfaced) kind(fault).surfaced++;
      else unseen++;
      const r = surfaced ? rootAt.get(e.nodeId) : undefined;
      if (r && r.blamed === who) {
        hit(roleHits, who).found++;
        hit(kindHits, fault).found++;
      }
    }
    // Nodes below failed injected nodes (required edges): cascades that must not be blamed.
    const out = new Map<string, string[]>();
    for (const e of run.graph.edges) if (!e.optional) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
    const failedDesign = [...designAt.keys()].filter((id) => final.get(id)?.status === 'failed');
    const below = downstream([...final.values()].filter((e) => execFault(e) && e.status === 'failed').map((e) => e.nodeId as string).concat(failedDesign), out);
    const belowDesign = downstream(failedDesign, out);
    for (const id of below) {
      if (designAt.has(id)) continue; // a design fault of its own below another failure: a root, not a cascade
      const st = final.get(id)?.status;
      if (st === 'cascade' || st === 'failed') {
        cascadesTotal++;
        if (!rootAt.has(id)) cascadesNotBlamed++;
        if (belowDesign.has(id)) {
          designCascades.total++;
          if (!rootAt.has(id)) designCascades.notBlamed++;
        }
      }
    }
    // Blames.
    for (const r of run.credit.roots) {
      const ev = final.get(r.nodeId);
      const design = designAt.get(r.nodeId);
      const exec = execFault(ev);
      const injected = exec ?? design?.kind;
      if (injected || below.has(r.nodeId)) {
        if (!r.blamed) continue;
        const truth = exec ? runner.get(r.nodeId) ?? ev?.runBy : design && r.failureClass === 'wiring' ? design.who : undefined;
        hit(roleHits, r.blamed).blamed++;
        if (truth === r.blamed) hit(roleHits, r.blamed).correct++;
        if (injected) {
          hit(kindHits, injected).blamed++;
          if (truth === r.blamed) hit(kindHits, injected).correct++;
        }
        role(r.blamed).blamed++;
      } else if (r.failureClass === 'infrastructure') natural.infrastructure++;
      else if (!r.blamed) natural.ambiguous++;
      else {
        natural.roots++;
        natural.byRole[r.blamed] = (natural.byRole[r.blamed] ?? 0) + 1;
      }
    }
  }
  const ratio = (a: number, b: number) => (b ? a / b : null);
  for (const [r, v] of Object.entries(byRole)) {
    const h = roleHits[r] ?? { correct: 0, blamed: 0, found: 0 };
    v.precision = ratio(h.correct, h.blamed);
    v.recall = ratio(h.found, v.injected);
  }
  for (const [k, v] of Object.entries(byKind)) {
    const h = kindHits[k] ?? { correct: 0, blamed: 0, found: 0 };
    v.precision = ratio(h.correct, h.blamed);
    v.recall = ratio(h.found, v.injected);
  }
  const report: BlameReport = { runs: runs.length, byRole, byKind, cascadesNotBlamed, cascadesTotal, unseen, unseenShare: injectedTotal ? unseen / injectedTotal : 0, natural };
  if (DESIGN_FAULT_KINDS.some((k) => byKind[k])) report.designCascades = designCascades;
  return report;
}

/** Nodes reachable from `from` along `out` (not `from` itself unless on a path). */
function downstream(from: readonly string[], out: ReadonlyMap<string, readonly string[]>): Set<string> {
  const seen = new Set<string>();
  const queue = [...from];
  while (queue.length) {
    const id = queue.pop()!;
    for (const next of out.get(id) ?? []) if (!seen.has(next)) { seen.add(next); queue.push(next); }
  }
  return seen;
}
