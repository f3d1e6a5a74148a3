/**
 * The workflow compiler: a zod-valid document -> the one internal Graph, in three stages, each a
 * pure function in core/workflow/compile/ with its own tests:
 *
 *   parse    (compile/parse.ts)    document -> ParsedWorkflow: entities, names checked
 *   build    (compile/build.ts)    ParsedWorkflow -> GraphDraft: edges, ports wired
 *   validate (compile/validate.ts) GraphDraft -> whole-graph checks, hops and answer
 *
 * Every stage reports located issues and the next one still runs, so one compile lists every
 * problem it can find (only a document without a single notation, or a code block that does not
 * parse, stops at parse). Issues inside a code block carry their line:column in the code.
 */
import type { SpecIssue } from './errors.ts';
import { DEFAULT_LIMITS, type Graph } from './graph.ts';
import type { WorkflowDoc } from './spec.ts';
import { buildWorkflowGraph } from './compile/build.ts';
import { placeInCode } from './compile/notations/code.ts';
import { parseWorkflowDoc } from './compile/parse.ts';
import type { CompileOptions } from './compile/types.ts';
import { validateWorkflowGraph } from './compile/validate.ts';
import { withDesignNode } from './compile/designStage.ts';

export type { CompileOptions, ToolLookup, ToolShape } from './compile/types.ts';
export { findCycle } from './compile/cycles.ts';

/**
 * Compiles a zod-valid workflow document into the one internal Graph, collecting every semantic
 * problem (unknown role, dangling edge, duplicate id, unbounded cycle, port type mismatch, unknown
 * tool, ...) as located issues, in stage order. Returns `graph: null` when any issue was found.
 */
export function compileWorkflow(doc: WorkflowDoc, opts: CompileOptions): { graph: Graph | null; issues: SpecIssue[] } {
  if (doc.design) {
    // A design stage: its node is compiled like any agent node, then marked (core/design runs it).
    const staged = withDesignNode(doc, opts);
    const out = compileWorkflow(staged.doc, opts);
    const issues = [...staged.issues, ...out.issues];
    if (!out.graph || staged.issues.length) return { graph: null, issues };
    const id = doc.design.id ?? 'design';
    const node = out.graph.nodes.find((n) => n.id === id)!;
    node.design = staged.stage;
    out.graph.designNode = node.id;
    return { graph: out.graph, issues };
  }
  const parse = parseWorkflowDoc(doc, opts);
  if (!parse.parsed) return { graph: null, issues: parse.issues };
  const parsed = parse.parsed;
  const build = buildWorkflowGraph(parsed);
  const check = validateWorkflowGraph(build.draft, parsed, opts.tools);
  const issues = [...parse.issues, ...placeInCode([...build.issues, ...check.issues], parsed.codePositions)];
  // No issue and no answer: the node list is empty (validateWorkflowGraph resolves none from nothing).
  if (!issues.length && !check.answer) issues.push({ code: 'NO_NODES', path: [], message: 'the workflow has no nodes (its `nodes`, `steps` or `agents` list is empty)' });
  if (issues.length || !check.answer) return { graph: null, issues };
  const graph: Graph = {
    name: parsed.name,
    description: parsed.description,
    notation: parsed.notation === 'nodes' ? 'graph' : parsed.notation,
    roles: parsed.roles,
    models: parsed.models,
    skills: parsed.skills,
    nodes: build.draft.nodes,
    edges: build.draft.edges,
    hops: check.hops,
    answer: check.answer,
    limits: {
      maxHops: doc.limits?.max_hops ?? DEFAULT_LIMITS.maxHops,
      concurrency: doc.limits?.concurrency ?? DEFAULT_LIMITS.concurrency,
      nodeTimeoutMs: doc.limits?.node_timeout_ms ?? DEFAULT_LIMITS.nodeTimeoutMs,
      ...(doc.limits?.strict_output && { strictOutput: true }),
    },
  };
  return { graph, issues };
}
