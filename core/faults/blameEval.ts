import type { CreditGraph, CreditResult } from '../credit/types.ts';
import type { NodeEvent } from '../trace/events.ts';
import { FAULT_KINDS } from './inject.ts';

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
  byKind: Record<string, BlameRate & { surfaced: number }>;
  /** Cascades below injected faults that credit did not blame. */
  cascadesNotBlamed: number;
  cascadesTotal: number;
  /** Injected faults that made no node fail (wrong, dropped optional field): invisible to structure. */
  unseen: number;
  /** unseen / injected. */
  unseenShare: number;
  /** Root failures the model made by itself (no fault injected there or above): not counted in precision. */
  natural: { roots: number; byRole: Record<string, number>; ambiguous: number; infrastructure: number };
}

/**
 * Scores structural blame against injected ground truth (docs/credit.md, "Fault injection (simulated) and
 * blame evaluation").
 * Input: each run's credit graph, node events (injected ones carry `fault`) and credit result.
 * - recall (per role, per kind) = injected faults whose node is a root blamed on the injected
 *   role / injected faults; silent kinds therefore have low recall by design, and `unseen` says
 *   how many faults structure could not see;
 * - precision (per role) = correct blames / blames on that role at injected nodes or at nodes
 *   below a failed injected node through required edges (a cascade wrongly blamed);
 * - natural failures (no injection at or above the node) are counted apart and do not affect precision.
 * Only the final attempt of each node counts (a fault a loop recovered from is unseen).
 */
export function scoreBlame(runs: ReadonlyArray<{ graph: CreditGraph; events: readonly NodeEvent[]; credit: CreditResult }>): BlameReport {
  const byRole: BlameReport['byRole'] = {};
  const byKind: BlameReport['byKind'] = {};
  for (const k of FAULT_KINDS) byKind[k] = { precision: null, recall: null, injected: 0, surfaced: 0 };
  const roleHits: Record<string, { correct: number; blamed: number; found: number }> = {};
  const kindHits: Record<string, { correct: number; blamed: number; found: number }> = {};
  const hit = (m: typeof roleHits, k: string) => (m[k] ??= { correct: 0, blamed: 0, found: 0 });
  const role = (r: string) => (byRole[r] ??= { precision: null, recall: null, injected: 0, blamed: 0 });
  let cascadesTotal = 0;
  let cascadesNotBlamed = 0;
  let unseen = 0;
  let injectedTotal = 0;
  const natural: BlameReport['natural'] = { roots: 0, byRole: {}, ambiguous: 0, infrastructure: 0 };

  for (const run of runs) {
    const final = new Map<string, NodeEvent>();
    for (const e of run.events) {
      const p = final.get(e.nodeId);
      if (!p || e.attempt >= p.attempt) final.set(e.nodeId, e);
    }
    const rootAt = new Map(run.credit.roots.map((r) => [r.nodeId as string, r]));
    const runner = new Map(run.graph.nodes.map((n) => [n.id as string, n.runBy as string | undefined]));
    // Injected faults (every attempt that received one).
    for (const e of run.events) {
      if (!e.fault) continue;
      const who = runner.get(e.nodeId) ?? e.runBy ?? '(no role)';
      injectedTotal++;
      role(who).injected++;
      byKind[e.fault] ??= { precision: null, recall: null, injected: 0, surfaced: 0 };
      byKind[e.fault]!.injected++;
      const isFinal = final.get(e.nodeId) === e;
      const surfaced = isFinal && e.status === 'failed';
      if (surfaced) byKind[e.fault]!.surfaced++;
      else unseen++;
      const r = surfaced ? rootAt.get(e.nodeId) : undefined;
      if (r && r.blamed === who) {
        hit(roleHits, who).found++;
        hit(kindHits, e.fault).found++;
      }
    }
    // Nodes below failed injected nodes (required edges): cascades that must not be blamed.
    const below = new Set<string>();
    const out = new Map<string, string[]>();
    for (const e of run.graph.edges) if (!e.optional) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
    const queue = [...final.values()].filter((e) => e.fault && e.status === 'failed').map((e) => e.nodeId as string);
    while (queue.length) {
      const id = queue.pop()!;
      for (const next of out.get(id) ?? []) if (!below.has(next)) { below.add(next); queue.push(next); }
    }
    for (const id of below) {
      const st = final.get(id)?.status;
      if (st === 'cascade' || st === 'failed') {
        cascadesTotal++;
        if (!rootAt.has(id)) cascadesNotBlamed++;
      }
    }
    // Blames.
    for (const r of run.credit.roots) {
      const ev = final.get(r.nodeId);
      const injected = ev?.fault;
      if (injected || below.has(r.nodeId)) {
        if (!r.blamed) continue;
        const truth = injected ? runner.get(r.nodeId) ?? ev?.runBy : undefined;
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
  return { runs: runs.length, byRole, byKind, cascadesNotBlamed, cascadesTotal, unseen, unseenShare: injectedTotal ? unseen / injectedTotal : 0, natural };
}
