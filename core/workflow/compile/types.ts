/**
 * Shapes passed between the three compile stages (parse -> build -> validate, see
 * core/workflow/compile.ts) and the lookups they read. Plain data; no stage keeps state.
 */
import type { RoleName } from '../../ids.ts';
import type { JsonSchema } from '../../model/provider.ts';
import type { CheckRegistry } from '../checks.ts';
import type { SpecIssue, SpecIssueCode } from '../errors.ts';
import type { DocPath, EdgeType, GraphEdge, GraphNode, ModelRef, NodeKind, PortType, Role, SkillDef } from '../graph.ts';

/** What validation needs to know of a tool: its ports and output schema (see core/tools). */
export interface ToolShape {
  inputs: Record<string, { type: PortType; optional?: boolean; enum?: readonly string[] }>;
  output: JsonSchema;
}
export interface ToolLookup {
  get(name: string): ToolShape | undefined;
  list?(): Array<{ name: string }>;
}

export interface CompileOptions {
  tools: ToolLookup;
  checks?: CheckRegistry;
}

/**
 * The document key the nodes were written under: graph (`nodes`), `steps`, `agents`, a state
 * machine (`states`) or a code block (`code`).
 */
export type DocNotation = 'nodes' | 'steps' | 'agents' | 'states' | 'code';

/** A node as any notation writes it (the union of NodeSpec, StepSpec, AgentSpec and a code call). */
export type RawNode = {
  id?: string;
  name?: string;
  kind?: NodeKind;
  role?: string;
  wired_by?: string | string[];
  tool?: string;
  skill?: string;
  prompt?: string;
  inputs?: Record<string, string | { from: string; type?: PortType; optional?: boolean }>;
  output?: { schema?: Record<string, unknown>; checks?: string[] };
  max_tokens?: number;
  temperature?: number;
  stop?: string[];
  timeout_ms?: number;
  depends_on?: Array<string | { from: string; port?: string; condition?: string; max_iterations?: number }>;
};

/** A 1-based line and column inside the document's `code` text. */
export interface CodePosition {
  line: number;
  column: number;
}

/**
 * What a notation reader (core/workflow/compile/notations/) hands the parse stage: the nodes as
 * written, each with its document path, the edges it declares, the answer it implies, its own
 * issues, and (code notation) where each path sits in the code text (key: `formatPath(path)`).
 * `fatal`: nothing could be read (the code does not parse); the parse stage stops.
 */
export interface NotationSource {
  entries: Array<{ raw: RawNode; path: DocPath }>;
  edges: DeclaredEdge[];
  answer?: string;
  issues: SpecIssue[];
  positions?: ReadonlyMap<string, CodePosition>;
  fatal?: boolean;
}

/**
 * An edge as the document declared it, in one shape for all notations: `edges[i]`,
 * `flows[i]` (`source`/`target`), `steps[i].depends_on[j]`, `transitions[i]` or a code `loop(...)`. `fromPath`/`toPath` locate each
 * endpoint (the edge's own path where the notation has no endpoint key, as in `depends_on`).
 */
export interface DeclaredEdge {
  from: string;
  to: string;
  type?: EdgeType;
  port?: string;
  /** The condition's source text; parsed by the build stage. */
  condition?: string;
  maxIterations?: number;
  path: DocPath;
  fromPath: DocPath;
  toPath: DocPath;
}

/**
 * Output of the parse stage: every entity of the document read into the graph's types, node
 * input sources resolved against the node ids, edges still as declared.
 */
export interface ParsedWorkflow {
  name: string;
  description?: string;
  notation: DocNotation;
  roles: Map<RoleName, Role>;
  models: Map<string, ModelRef>;
  skills: Map<string, SkillDef>;
  /** In document order; each node's `inputs` holds only the ports it declared. */
  nodes: GraphNode[];
  declaredEdges: DeclaredEdge[];
  /** The document's `hops` and `answer` as written, or the answer the notation implies (checked by the validate stage). */
  hops?: string[];
  answer?: string;
  /** Code notation: where each document path sits in the code text (see NotationSource). */
  codePositions?: ReadonlyMap<string, CodePosition>;
}

/** Output of the build stage: nodes with every data edge wired into a port, and the edge list. */
export interface GraphDraft {
  nodes: GraphNode[];
  edges: GraphEdge[];
}

/** A list of located issues and the one way stages add to it. */
export function issueList(): { issues: SpecIssue[]; add: (code: SpecIssueCode, path: DocPath, message: string) => void } {
  const issues: SpecIssue[] = [];
  return { issues, add: (code, path, message) => void issues.push({ code, path, message }) };
}
