/**
 * Running a workflow that may have a design stage (docs/designer.md). Without one this is
 * `runWorkflow`. With one, a run has two phases under one run id:
 *  1. the design node runs (the designer's model sees the task and the catalogue and decodes a
 *     design under the catalogue's grammar); its output is replaced by a DesignRecord: the text,
 *     the document compiled, the validation result and the compiled graph. A design that parses
 *     but of which no node can run fails the node (execution, INVALID_DESIGN: the designer's).
 *  2. the designed nodes (and the workflow's fixed nodes) run as one graph, the design node
 *     counted as done; designed nodes the validator rejected fail at once as wiring faults.
 * Events keep one completion order (`seq`) across both phases. Replay of a designed run asks
 * the provider for the same design call, so it compiles the same graph without the model.
 */
import type { NodeId } from '../ids.ts';
import { runWorkflow, type RunOptions, type RunOutcome } from '../engine/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import type { DesignNotation, DesignStage, Graph, GraphNode } from '../workflow/index.ts';
import { compileDesign, type DesignCompile } from './compileDesign.ts';
import { splice } from './effective.ts';
import type { DesignFaultMark, DesignGraphView, DesignRecord } from './record.ts';

/**
 * A SIMULATED wiring fault to put into a design before it is compiled (core/faults/design.ts):
 * given the parsed design, return the tampered copy and the ground truth, or undefined for none.
 */
export type DesignFaultHook = (ctx: { taskKey: string; attempt: number; notation: DesignNotation; document: unknown; stage: DesignStage }) => { document: unknown; fault: DesignFaultMark } | undefined;

export interface GraphRunOptions extends RunOptions {
  designFault?: DesignFaultHook;
}

export interface GraphRunOutcome extends RunOutcome {
  /** The graph the run ran: `graph` itself, or with the design spliced in (effectiveGraph). */
  graph: Graph;
}

/** Runs `graph` on one task (see the module comment); never throws for node failures. */
export async function runGraph(graph: Graph, opts: GraphRunOptions): Promise<GraphRunOutcome> {
  if (!graph.designNode) return { ...(await runWorkflow(graph, opts)), graph };
  const designNode = graph.nodes.find((n) => n.id === graph.designNode)!;
  const stage = designNode.design!;
  // Listeners hear of the design node once its record is built, and of phase-2 nodes in the run's one order.
  const sink = opts.sink;
  const first = await runWorkflow({ ...graph, nodes: [designNode], edges: [], hops: undefined, answer: { node: designNode.id } }, { ...opts, sink: sink && { nodeStarted: sink.nodeStarted?.bind(sink) } });
  const ev = first.events.find((e) => e.nodeId === designNode.id);
  if (first.status === 'cancelled' || !ev || ev.failureClass === 'infrastructure') {
    if (ev) sink?.nodeFinished?.(ev);
    return { ...first, answer: undefined, status: first.status === 'cancelled' ? 'cancelled' : 'failed', graph };
  }

  const record = designRecordOf(ev, stage);
  let compiled: DesignCompile | undefined;
  if (ev.status === 'ok') {
    const tampered = opts.designFault?.({ taskKey: opts.taskKey, attempt: ev.attempt, notation: stage.notation, document: record.document, stage });
    if (tampered) {
      record.document = tampered.document;
      record.fault = tampered.fault;
      ev.simulated = true;
      ev.fault = `design:${tampered.fault.kind}`;
    }
    compiled = compileDesign(stage, record.document, { tools: opts.tools, checks: opts.checks, reserved: graph.nodes.map((n) => n.id) });
    record.issues = compiled.issues;
    record.usable = compiled.usable;
    if (compiled.usable) record.graph = graphView(compiled.nodes, compiled.edges, compiled.answer);
    else {
      record.problem = compiled.problem;
      Object.assign(ev, { status: 'failed', failureClass: 'execution', errorCode: 'INVALID_DESIGN', message: `the design cannot run: ${compiled.problem}` });
    }
  } else if (ev.errorCode === 'CONTRACT_VIOLATION' && stage.notation !== 'code') {
    // The contract refused a design that parses (the engine's check, e.g. a repeated id against the
    // grammar's prefixItems): the node keeps its code, and the record says why in the design's own
    // terms when the validator finds the problem too.
    const doc = parsed(record.text);
    if (doc !== undefined) {
      const refused = compileDesign(stage, doc, { tools: opts.tools, checks: opts.checks, reserved: graph.nodes.map((n) => n.id) });
      record.document = doc;
      record.issues = refused.issues;
      if (!refused.usable && refused.problem) record.problem = refused.problem;
    }
  }
  ev.output = record;
  sink?.nodeFinished?.(ev);

  const runnable = compiled?.usable ? splice(graph, compiled) : graph;
  const done = new Map<NodeId, { status: NodeEvent['status']; attempt: number }>([[designNode.id, { status: ev.status, attempt: ev.attempt }]]);
  const second = await runWorkflow(runnable, { ...opts, done, sink: sink && { nodeStarted: sink.nodeStarted?.bind(sink), nodeFinished: sink.nodeFinished && ((e) => sink.nodeFinished!({ ...e, seq: e.seq + 1 })) } });
  const events = [ev, ...second.events.map((e, i) => ({ ...e, seq: i + 1 }))];
  const tokens = { promptTokens: first.promptTokens + second.promptTokens, completionTokens: first.completionTokens + second.completionTokens };
  return { ...second, ...tokens, events, startedAt: first.startedAt, graph: runnable };
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The record of a finished design node: its text and parsed document (validation comes after). */
function designRecordOf(ev: NodeEvent, stage: DesignStage): DesignRecord {
  const text = ev.calls.at(-1)?.completion ?? '';
  const record: DesignRecord = { notation: stage.notation, text, usable: false, issues: [] };
  if (ev.status === 'ok') record.document = stage.notation === 'code' ? (typeof ev.output === 'string' ? ev.output : text) : ev.output;
  else record.problem = ev.message ?? 'the design node failed';
  return record;
}

/** The compiled design as the trace shows it (plain JSON). */
export function graphView(nodes: readonly GraphNode[], edges: Graph['edges'], answer?: Graph['answer']): DesignGraphView {
  return {
    nodes: nodes.map((n) => ({
      id: n.id,
      kind: n.kind,
      ...(n.role ? { role: n.role, runBy: n.role } : {}),
      ...(n.tool ? { tool: n.tool } : {}),
      ...(n.skill ? { skill: n.skill } : {}),
      wiredBy: n.wiredBy,
      inputs: n.inputs.map((p) => ({ port: p.name, from: p.source.kind === 'task' ? `task.${p.source.field}` : `${p.source.node}${p.source.field ? '.' + p.source.field : ''}` })),
      path: [...n.path],
      ...(n.wiringFault ? { wiringFault: { code: n.wiringFault.code, message: n.wiringFault.message } } : {}),
    })),
    edges: edges.map((e) => ({ from: e.from, to: e.to, type: e.type, ...(e.port ? { port: e.port } : {}), ...(e.maxIterations ? { maxIterations: e.maxIterations } : {}) })),
    ...(answer ? { answer: `${answer.node}${answer.field ? '.' + answer.field : ''}` } : {}),
  };
}

