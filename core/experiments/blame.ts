/**
 * SIMULATED fault injection for blame evaluations: checking fault specs against a workflow, the
 * deterministic injector, and blame scored against the injected ground truth (core/faults).
 */
import { creditGraphOf } from '../credit/index.ts';
import { satisfiesContract } from '../engine/index.ts';
import { scoreBlame, type BlameReport } from '../faults/blameEval.ts';
import { FaultInjector, FaultSpecError, parseFaultSpec, TOOL_FAULT_KINDS, type FaultSpec } from '../faults/inject.ts';
import type { NodeId } from '../ids.ts';
import type { Store } from '../store/index.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import type { Graph, ToolLookup } from '../workflow/index.ts';
import { runGraphOf } from '../design/index.ts';
import { ExperimentSpecError } from './spec.ts';

/**
 * Parses `role=kind@rate` / `node:<id>=kind@rate` specs and checks them against `graph`.
 * Errors: ExperimentSpecError (field `inject.<i>`): BAD_FAULT (does not parse; the message is
 * parseFaultSpec's), UNKNOWN_ROLE, UNKNOWN_NODE, TOOL_FAULT_KIND (a tool node takes only
 * TOOL_FAULT_KINDS).
 */
export function checkFaultSpecs(graph: Graph, inject: readonly string[]): FaultSpec[] {
  const roles = [...graph.roles.keys()] as string[];
  return inject.map((text, i) => {
    const field = `inject.${i}`;
    let s: FaultSpec;
    try {
      s = parseFaultSpec(text);
    } catch (err) {
      if (err instanceof FaultSpecError) throw new ExperimentSpecError('BAD_FAULT', field, err.message, { text }, { cause: err });
      throw err;
    }
    if (s.role && !graph.roles.has(s.role)) {
      throw new ExperimentSpecError('UNKNOWN_ROLE', field, `inject "${text}" names role "${s.role}", which the workflow does not have (roles: ${roles.join(', ')})`, { text, role: s.role, roles });
    }
    const node = s.node ? graph.nodes.find((n) => n.id === s.node) : undefined;
    if (s.node && !node) throw new ExperimentSpecError('UNKNOWN_NODE', field, `inject "${text}" names node "${s.node}", which the workflow does not have`, { text, node: s.node });
    if (node?.kind === 'tool' && !TOOL_FAULT_KINDS.includes(s.kind)) {
      throw new ExperimentSpecError('TOOL_FAULT_KIND', field, `inject "${text}": ${s.node} is a tool node, which takes only ${TOOL_FAULT_KINDS.join(', ')} faults`, { text, node: s.node, kind: s.kind });
    }
    return s;
  });
}

/**
 * The fault injector of a blame evaluation. Deterministic in (seed, spec, task, node, attempt),
 * so a resumed evaluation injects exactly the faults the uninterrupted one would have. Contract
 * faults are checked against the node's contract (satisfiesContract).
 */
export function buildInjector(graph: Graph, specs: FaultSpec[], seed: number): FaultInjector {
  const byId = new Map(graph.nodes.map((n) => [n.id as string, n]));
  const checks = new CheckRegistry();
  return new FaultInjector(specs, seed, (id: NodeId) => byId.get(id)?.role, (id, output) => {
    const node = byId.get(id);
    return node ? satisfiesContract(node, output, checks) : true;
  });
}

/**
 * Scores every stored run of a blame evaluation against its injected ground truth (scoreBlame),
 * each on the graph it ran (a designed run's own graph: core/design runGraphOf).
 */
export function blameReportOf(store: Store, experimentId: string, graph: Graph, tools: ToolLookup): BlameReport {
  const cg = graph.designNode ? undefined : creditGraphOf(graph);
  return scoreBlame(store.listRuns(experimentId).filter((r) => r.credit).map((r) => {
    const events = store.getRunEvents(r.runId);
    return { graph: cg ?? creditGraphOf(runGraphOf(graph, events, { tools })), events, credit: r.credit! };
  }));
}
