/**
 * `getRunTrace`'s answer: a stored run, its node events, the graph it ran and (a designed
 * workflow) its design. The graph is the stored workflow compiled with the host's tools, with the
 * design of the run spliced in from its design node's record (core/design `runGraphOf`), so the
 * views draw the nodes the designer wired, not only the workflow's own. Pure reads of the store.
 */
import { runGraphOf } from '../design/index.ts';
import type { Store } from '../store/index.ts';
import type { NodeEvent } from '../trace/index.ts';
import { formatIssue, parseWorkflow, SpecError, type Graph, type ToolLookup } from '../workflow/index.ts';
import { designRecordSchema, type RunDesign, type RunGraph, type RunGraphNode, type RunTrace } from './contract.ts';

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
      const why = err instanceof SpecError ? err.issues.map(formatIssue).join('; ') : err instanceof Error ? err.message : String(err);
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
