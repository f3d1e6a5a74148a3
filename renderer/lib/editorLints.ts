/**
 * Checks the editor adds to the host's validation (pure): problems a workflow can have that
 * still compile, but that would make a run meaningless. Today one: an agent node with no prompt
 * and no inputs (the "Add node" form makes exactly that), whose model would be asked nothing.
 */
import type { SpecIssue, ValidateWorkflowResult } from '../../core/api/client.ts';
import { isMap } from 'yaml';
import { parseWorkflowGraph } from './workflowGraph.ts';

/** Keys of a node entry that give its model something to work on (a prompt, inputs, or a skill or tool doing the work). */
const FEEDING_KEYS = ['prompt', 'inputs', 'input', 'skill', 'tool', 'template', 'instructions'] as const;

/**
 * The agent nodes of `text` with no prompt, no inputs and no data edge into them, as issues
 * (code `MISSING_PORT`, path and line of the node's entry). Empty when the text does not parse.
 */
export function emptyNodeIssues(text: string): SpecIssue[] {
  const parsed = parseWorkflowGraph(text);
  if (!parsed.ok) return [];
  const { graph, doc } = parsed;
  const out: SpecIssue[] = [];
  for (const n of graph.nodes) {
    if (n.kind !== 'agent') continue;
    const entry = doc.getIn(n.path, true);
    if (!isMap(entry)) continue;
    const fed = FEEDING_KEYS.some((k) => {
      const v = entry.get(k);
      return v !== undefined && v !== null && v !== '' && !(isMap(v) && v.items.length === 0);
    });
    if (fed || graph.edges.some((e) => e.to === n.id && e.type === 'data')) continue;
    out.push({
      code: 'MISSING_PORT',
      path: [...n.path],
      message: `node "${n.id}" has no prompt and no inputs: its model would be asked nothing. Give it a prompt, or wire an input (from another node or from the task, e.g. inputs: { question: task.question })`,
      ...(n.line !== undefined ? { line: n.line } : {}),
    });
  }
  return out;
}

/** The host's answer with the editor's own issues added (a valid answer becomes invalid when there are any). */
export function withEditorLints(result: ValidateWorkflowResult, text: string): ValidateWorkflowResult {
  const extra = emptyNodeIssues(text);
  if (!extra.length) return result;
  return result.ok ? { ok: false, issues: extra } : { ok: false, issues: [...result.issues, ...extra] };
}
