/**
 * The run trace feature: `getRunTrace` answers a stored run, its node events, the graph it ran
 * and (a designed workflow) its design. The graph is the stored workflow compiled with the host's
 * tools, with the design of the run spliced in from its design node's record (core/design
 * `runGraphOf`), so the views draw the nodes the designer wired, not only the workflow's own.
 * Pure reads of the store.
 */
import * as z from 'zod';
import { runGraphOf } from '../../design/index.ts';
import { errorMessage } from '../../errors.ts';
import type { RunRecord } from '../../results/index.ts';
import type { Store } from '../../store/index.ts';
import type { NodeEvent } from '../../trace/index.ts';
import { defaultTools } from '../../tools/index.ts';
import { formatIssue, parseWorkflow, SpecError, type EdgeType, type Graph, type NodeKind, type ToolLookup } from '../../workflow/index.ts';
import { defineFeature } from '../feature.ts';
import { Id } from '../fields.ts';
import type { WorkflowSummary } from './workflows.ts';

/**
 * A run with all its node events (ordered by seq, each with its model calls), the graph it ran and,
 * for a designed workflow, its design (runTrace.ts builds it).
 */
export interface RunTrace {
  run: RunRecord;
  events: NodeEvent[];
  /**
   * The graph the run ran: the stored workflow compiled with the host's tools, with a designed
   * run's design spliced in (core/design `runGraphOf`). Absent when the stored workflow does not
   * compile here (`graphProblem` says why); the views then draw what its text outlines.
   */
  graph?: RunGraph;
  graphProblem?: string;
  /** The design record of a designed run (its design node's final attempt); absent otherwise. */
  design?: RunDesign;
  /** Why a design node's stored output could not be read as a design record (malformed). */
  designProblem?: string;
}

/**
 * Where a node of a run's graph comes from: the workflow document (`workflow`), the design stage
 * (`design`: the design node, run by the designer), or the designer's design (`designed`).
 */
export type NodeOrigin = 'workflow' | 'design' | 'designed';

/** One node of the graph a run ran, with its authors (FloWright: the wirer owns the wiring, the runner the run). */
export interface RunGraphNode {
  id: string;
  kind: NodeKind;
  role?: string;
  tool?: string;
  skill?: string;
  /** The role (or `human`) that wired the node into the graph. */
  wiredBy: string;
  /** Further wirers when authorship is shared (blame is then ambiguous). */
  sharedWiredBy?: string[];
  /** The role that runs it (agent and skill nodes). */
  runBy?: string;
  origin: NodeOrigin;
  /** Where the node is written: in the workflow document, or (designed nodes) in the design document. */
  path: Array<string | number>;
  /** A designed node the validator rejected: recorded failed (class wiring) without running. */
  wiringFault?: { code: string; message: string };
}

export interface RunGraphEdge {
  /** Unique within the graph: `<index>:<from>-><to>`. */
  id: string;
  from: string;
  to: string;
  type: EdgeType;
  port?: string;
  /** Loop back edges: how often the loop may re-enter `to`. */
  maxIterations?: number;
}

/** The graph a run ran (see RunTrace.graph). */
export interface RunGraph {
  name: string;
  notation: WorkflowSummary['notation'];
  nodes: RunGraphNode[];
  edges: RunGraphEdge[];
  /** The answer node's id. */
  answer: string;
  /** The workflow's design stage: its node and the role that designs (the designer). */
  design?: { nodeId: string; role: string };
}

/** A validation message of a design, located by its path inside the design document (core/design DesignIssue). */
export interface RunDesignIssue {
  /** A workflow issue code, or the node error code it became (DANGLING_EDGE, UNKNOWN_TOOL, ...). */
  code: string;
  path: Array<string | number>;
  message: string;
  /** The designed node that owns it (recorded as a wiring root failure); absent: a design-level problem. */
  nodeId?: string;
  /** For a `code` design: where in the code text (1-based line and column). */
  inCode?: { line: number; column: number };
}

/** What the designer wrote for one run and what the validator made of it (core/design DesignRecord). */
export interface RunDesign {
  /** The design node and the role that wrote the design. */
  nodeId: string;
  designer: string;
  /** The attempt of the design node this record is from (its final one). */
  attempt: number;
  notation: 'steps' | 'graph' | 'states' | 'code';
  /** The designer's completion as written. */
  text: string;
  /** The document compiled (the parsed completion, or its SIMULATED tampered copy); absent when it did not parse. */
  document?: unknown;
  /** False: nothing of the design could run; `problem` says why. */
  usable: boolean;
  problem?: string;
  issues: RunDesignIssue[];
  /** A SIMULATED wiring fault put into the design before it was compiled (core/faults). */
  fault?: { kind: string; nodeId: string; simulated: true };
}

const DocPathSchema = z.array(z.union([z.string(), z.number()]));

/**
 * The stored design record read back (a node event's `output`, untrusted JSON): the fields the
 * views use, checked; unknown fields are dropped.
 */
export const designRecordSchema = z.object({
  notation: z.enum(['steps', 'graph', 'states', 'code']),
  text: z.string(),
  document: z.unknown().optional(),
  usable: z.boolean(),
  problem: z.string().optional(),
  issues: z.array(z.object({ code: z.string(), path: DocPathSchema, message: z.string(), nodeId: z.string().optional(), inCode: z.object({ line: z.number().int(), column: z.number().int() }).optional() })),
  fault: z.object({ kind: z.string(), nodeId: z.string(), simulated: z.literal(true) }).optional(),
});

/** `getRunTrace`'s payload. */
export interface GetRunTracePayload {
  runId: string;
}

/** The run trace method (a store read, synchronous on the host). */
export interface RunTraceApi {
  /** A run, its node events, the graph it ran (a designed run's design spliced in) and its design record. Errors: `NOT_FOUND`. */
  getRunTrace(payload: GetRunTracePayload): RunTrace;
}

export const runTraceFeature = defineFeature<RunTraceApi>()({
  name: 'runTrace',
  payloads: { getRunTrace: z.strictObject({ runId: Id }) },
  handlers: ({ store, tools }: { store: Store; tools?: ToolLookup | undefined }) => {
    const runTrace = createRunTraceReader(store, tools ?? defaultTools());
    return { getRunTrace: ({ runId }) => runTrace(runId) };
  },
});

/** Compiled workflows kept per workflow hash (a trace view opens run after run of one experiment). */
const CACHE_SIZE = 8;

type Compiled = { graph: Graph } | { problem: string };

/**
 * A reader of run traces over `store`, compiling each stored workflow once (the last
 * CACHE_SIZE workflows by hash are kept). Throws what the store throws (StoreError `NOT_FOUND`
 * for an unknown run); a workflow that no longer compiles is reported as `graphProblem`, not thrown.
 */
export function createRunTraceReader(store: Store, tools: ToolLookup): (runId: string) => RunTrace {
  const cache = new Map<string, Compiled>();
  const compiled = (hash: string, yaml: string): Compiled => {
    const hit = cache.get(hash);
    if (hit) {
      cache.delete(hash);
      cache.set(hash, hit);
      return hit;
    }
    let out: Compiled;
    try {
      out = { graph: parseWorkflow(yaml, { tools }).graph };
    } catch (err) {
      const why = err instanceof SpecError ? err.issues.map(formatIssue).join('; ') : errorMessage(err);
      out = { problem: `the stored workflow does not compile with this host's tools: ${why}` };
    }
    cache.set(hash, out);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
    return out;
  };
  return (runId) => {
    const run = store.getRun(runId);
    const events = store.getRunEvents(runId);
    const exp = store.getExperiment(run.experimentId);
    const base = compiled(exp.workflowHash, exp.workflowYaml);
    if ('problem' in base) return { run, events, graphProblem: base.problem };
    return { run, events, ...runTraceParts(base.graph, events, tools) };
  };
}

/**
 * The graph and design parts of a run's trace from its compiled workflow and stored events (pure):
 * `graph` is `runGraphOf(base, events)` with each node's authors and origin; `design` is the
 * design node's final record, checked with `designRecordSchema` (`designProblem` when malformed).
 */
export function runTraceParts(base: Graph, events: readonly NodeEvent[], tools: ToolLookup): Pick<RunTrace, 'graph' | 'design' | 'designProblem'> {
  const g = runGraphOf(base, events, { tools });
  const designNode = base.designNode ? base.nodes.find((n) => n.id === base.designNode) : undefined;
  const own = new Set(base.nodes.map((n) => n.id));
  const graph: RunGraph = {
    name: g.name,
    notation: g.notation,
    nodes: g.nodes.map((n): RunGraphNode => ({
      id: n.id,
      kind: n.kind,
      ...(n.role ? { role: n.role } : {}),
      ...(n.tool ? { tool: n.tool } : {}),
      ...(n.skill ? { skill: n.skill } : {}),
      wiredBy: n.wiredBy,
      ...(n.sharedWiredBy?.length ? { sharedWiredBy: [...n.sharedWiredBy] } : {}),
      ...(n.role && n.kind !== 'tool' ? { runBy: n.role } : {}),
      origin: n.id === designNode?.id ? 'design' : own.has(n.id) ? 'workflow' : 'designed',
      path: [...n.path],
      ...(n.wiringFault ? { wiringFault: { code: n.wiringFault.code, message: n.wiringFault.message } } : {}),
    })),
    edges: g.edges.map((e, i) => ({
      id: `${i}:${e.from}->${e.to}`,
      from: e.from,
      to: e.to,
      type: e.type,
      ...(e.port ? { port: e.port } : {}),
      ...(e.maxIterations ? { maxIterations: e.maxIterations } : {}),
    })),
    answer: g.answer.node,
    ...(designNode?.design ? { design: { nodeId: designNode.id, role: designNode.design.role } } : {}),
  };
  if (!designNode?.design) return { graph };
  let final: NodeEvent | undefined;
  for (const e of events) if (e.nodeId === designNode.id && (!final || e.attempt >= final.attempt)) final = e;
  if (!final) return { graph };
  const parsed = designRecordSchema.safeParse(final.output, { jitless: true });
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    const where = first.path.length ? first.path.map(String).join('.') : 'output';
    return { graph, designProblem: `the output of design node "${designNode.id}" (attempt ${final.attempt}) is not a design record: ${where}: ${first.message}` };
  }
  const r = parsed.data;
  const design: RunDesign = {
    nodeId: designNode.id,
    designer: designNode.design.role,
    attempt: final.attempt,
    notation: r.notation,
    text: r.text,
    ...(r.document === undefined ? {} : { document: r.document }),
    usable: r.usable,
    ...(r.problem === undefined ? {} : { problem: r.problem }),
    issues: r.issues.map((i) => ({ code: i.code, path: [...i.path], message: i.message, ...(i.nodeId === undefined ? {} : { nodeId: i.nodeId }) })),
    ...(r.fault ? { fault: { kind: r.fault.kind, nodeId: r.fault.nodeId, simulated: true as const } } : {}),
  };
  return { graph, design };
}
