/**
 * Validation issues as the editor lists them (pure): `line:column`, the document path, and the
 * node or edge each one concerns, so clicking selects it and the graph marks it.
 */
import type { SpecIssue } from '../../core/api/client.ts';
import { edgeAtPath, nodeAtPath, type DocGraph } from './workflowGraph.ts';

export interface LocatedIssue {
  issue: SpecIssue;
  /** `12:5`, `12`, or empty when the host gave no position. */
  where: string;
  /** `nodes[2].role`. */
  pathText: string;
  nodeId?: string;
  edgeId?: string;
}

/** `['nodes', 2, 'inputs', 'plan']` -> `nodes[2].inputs.plan`. */
export function formatDocPath(path: ReadonlyArray<string | number>): string {
  let out = '';
  for (const seg of path) out += typeof seg === 'number' ? `[${seg}]` : out ? `.${seg}` : seg;
  return out;
}

/** Locates each issue on the drawn graph (when the graph could be read). */
export function locateIssues(issues: readonly SpecIssue[], graph: DocGraph | null): LocatedIssue[] {
  return issues.map((issue) => {
    const where = issue.line === undefined ? '' : issue.column === undefined ? `${issue.line}` : `${issue.line}:${issue.column}`;
    const node = graph ? nodeAtPath(graph, issue.path) : undefined;
    const edge = graph && !node ? edgeAtPath(graph, issue.path) : undefined;
    return { issue, where, pathText: formatDocPath(issue.path), nodeId: node?.id, edgeId: edge?.id };
  });
}

/** Node and edge ids that carry at least one issue (for error markers). */
export function issueTargets(located: readonly LocatedIssue[]): { nodes: Set<string>; edges: Set<string> } {
  const nodes = new Set<string>();
  const edges = new Set<string>();
  for (const l of located) {
    if (l.nodeId) nodes.add(l.nodeId);
    if (l.edgeId) edges.add(l.edgeId);
  }
  return { nodes, edges };
}

/** The character offset of 1-based `line`:`column` in `text` (clamped), for moving the caret. */
export function offsetOf(text: string, line: number, column = 1): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  const end = text.indexOf('\n', offset);
  const lineEnd = end < 0 ? text.length : end;
  return Math.min(offset + Math.max(0, column - 1), lineEnd);
}

/** The 1-based line of a character offset. */
export function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < Math.min(offset, text.length); i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
