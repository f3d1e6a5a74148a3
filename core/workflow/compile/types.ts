/**
 * Shapes passed between the three compile stages (parse -> build -> validate, see
 * core/workflow/compile.ts) and the lookups they read. Plain data; no stage keeps state.
 */
import type { RoleName } from '../../ids.ts';
import type { JsonSchema } from '../../model/provider.ts';
import type { CheckRegistry } from '../checks.ts';
import type { SpecIssue, SpecIssueCode } from '../errors.ts';
import type { DocPath, EdgeType, GraphEdge, GraphNode, ModelRef, PortType, Role, SkillDef } from '../graph.ts';

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

/** The document key the nodes were written under: graph (`nodes`), `steps` or `agents`. */
export type DocNotation = 'nodes' | 'steps' | 'agents';

/**
 * An edge as the document declared it, in one shape for all three notations: `edges[i]`,
 * `flows[i]` (`source`/`target`) or `steps[i].depends_on[j]`. `fromPath`/`toPath` locate each
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
  /** The document's `hops` and `answer` as written (checked by the validate stage). */
  hops?: string[];
  answer?: string;
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
