/**
 * SIMULATED fault injection for blame evaluations: checking fault specs against a workflow, the
 * deterministic injectors (execution faults into node runs, wiring faults into designs), and
 * blame scored against the injected ground truth (core/faults).
 */
import { creditGraphOf } from '../blame/credit/index.ts';
import { satisfiesContract } from '../engine/index.ts';
import { scoreBlame, type BlameReport } from '../blame/eval/scoreBlame.ts';
import { DesignFaultInjector } from './design.ts';
import { FaultInjector, FaultSpecError, isDesignFaultKind, parseFaultSpec, TOOL_FAULT_KINDS, type FaultSpec } from './inject.ts';
import type { NodeId } from '../ids.ts';
import type { Store } from '../store/index.ts';
import type { ExperimentRow } from '../store/types.ts';
import { CheckRegistry } from '../workflow/checks.ts';
import type { Graph, ToolLookup } from '../workflow/index.ts';
import { runGraphOf, type DesignFaultHook } from '../design/index.ts';
import { ExperimentSpecError } from '../experiments/spec.ts';

/**
 * Parses `role=kind@rate` / `node:<id>=kind@rate` specs and checks them against `graph`.
 * Errors: ExperimentSpecError (field `inject.<i>`): BAD_FAULT (does not parse; the message is
 * parseFaultSpec's), UNKNOWN_ROLE, UNKNOWN_NODE, TOOL_FAULT_KIND (a tool node takes only
 * TOOL_FAULT_KINDS), DESIGN_FAULT_ROLE (a design kind for a role other than the workflow's design
 * role, or in a workflow without a design stage).
 */
export function checkFaultSpecs(graph: Graph, inject: readonly string[]): FaultSpec[] {
  const roles = [...graph.roles.keys()] as string[];
  const stage = designStageOf(graph);
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
    if (isDesignFaultKind(s.kind) && s.role !== stage?.role) {
      const why = stage ? `it targets the design role "${stage.role}", not "${s.role}"` : 'the workflow has no design stage (`design:`)';
      throw new ExperimentSpecError('DESIGN_FAULT_ROLE', field, `inject "${text}": ${s.kind} is a design (wiring) fault; ${why}`, { text, role: s.role, kind: s.kind });
    }
    const node = s.node ? graph.nodes.find((n) => n.id === s.node) : undefined;
    if (s.node && !node) throw new ExperimentSpecError('UNKNOWN_NODE', field, `inject "${text}" names node "${s.node}", which the workflow does not have`, { text, node: s.node });
    if (node?.kind === 'tool' && !(TOOL_FAULT_KINDS as readonly string[]).includes(s.kind)) {
      throw new ExperimentSpecError('TOOL_FAULT_KIND', field, `inject "${text}": ${s.node} is a tool node, which takes only ${TOOL_FAULT_KINDS.join(', ')} faults`, { text, node: s.node, kind: s.kind });
    }
    return s;
  });
}

const designStageOf = (graph: Graph) => (graph.designNode ? graph.nodes.find((n) => n.id === graph.designNode)?.design : undefined);

/**
 * The fault injector of a blame evaluation. Deterministic in (seed, spec, task, node, attempt),
 * so a resumed evaluation injects exactly the faults the uninterrupted one would have. Contract
 * faults are checked against the node's contract (satisfiesContract). Design kinds are left to
 * buildDesignInjector.
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
 * The design-fault injector of a blame evaluation (core/faults/design.ts), or undefined when no
 * spec is a design kind. Deterministic in (seed, spec, task, attempt) and the design itself, so
 * resume and replay tamper exactly the same designs.
 */
export function buildDesignInjector(specs: readonly FaultSpec[], seed: number, tools: ToolLookup): DesignFaultInjector | undefined {
  const injector = new DesignFaultInjector(specs, seed, tools);
  return injector.active ? injector : undefined;
}

/**
 * The DesignFaultHook a replay of a stored experiment needs: for a blame evaluation with design
 * kinds, the same hook its runs had (rebuilt from its recorded `inject` and seed), so the replayed
 * design nodes record the same tampered designs; undefined otherwise.
 * Errors: as checkFaultSpecs (a recorded spec that no longer fits the workflow).
 */
export function replayDesignFaultsFor(exp: ExperimentRow, graph: Graph, tools: ToolLookup): DesignFaultHook | undefined {
  if (exp.kind !== 'blame-eval') return undefined;
  const inject = exp.config?.inject ?? [];
  return buildDesignInjector(checkFaultSpecs(graph, inject), exp.seed, tools)?.hook;
}

/**
 * Scores every stored run of a blame evaluation against its injected ground truth (scoreBlame),
 * each on the graph it ran (a designed run's own graph: core/design runGraphOf). Design kinds drawn
 * but not applicable are recomputed from each run's design record (DesignFaultInjector.notApplicableIn).
 */
export function blameReportOf(store: Store, experimentId: string, graph: Graph, tools: ToolLookup): BlameReport {
  const cg = graph.designNode ? undefined : creditGraphOf(graph);
  const exp = store.getExperiment(experimentId);
  const stage = designStageOf(graph);
  const design = stage && exp.kind === 'blame-eval' ? buildDesignInjector(checkFaultSpecs(graph, exp.config?.inject ?? []), exp.seed, tools) : undefined;
  return scoreBlame(store.listRuns(experimentId).filter((r) => r.credit).map((r) => {
    const events = store.getRunEvents(r.runId);
    const run = { graph: cg ?? creditGraphOf(runGraphOf(graph, events, { tools })), events, credit: r.credit! };
    return design ? { ...run, designNotApplicable: design.notApplicableIn(events, graph.designNode!, stage!, String(r.taskIndex)) } : run;
  }));
}
