/**
 * Node oracles for counterfactual blame (core/experiments/counterfactual.ts; docs/fork.md): the
 * right output of one node of a run, where the task family knows it.
 *
 * - The answer node of any workflow (grader-backed): the task's expected answer, shaped to the
 *   node (the answer field of its JSON output, a number where its schema says so; a tool node
 *   returns it as is).
 * - `learn-design` (core/tasks/learnDesign.ts, procedural): the expected `<tool>:<argument>` fixes
 *   the right design (one step: the skill whose output enum holds the argument, run by the
 *   catalogue's role, on the task's request) and the right argument of that skill node.
 * - `gsm8k` (and any task with a numeric answer): a node whose output schema has an `expression`
 *   field gets the expected value as its expression (it computes the right number).
 * Nodes the family knows nothing of have no oracle (undefined); the caller says so.
 */
import type { GraphNode, Graph } from '../workflow/index.ts';
import { LEARN_DESIGN_TOOLS } from '../tasks/learnDesign.ts';

/** What a node oracle reads: the dataset's name, the task's expected answer, the node and the graph the run ran. */
export interface OracleContext {
  dataset: string;
  expected: string;
  node: GraphNode;
  graph: Graph;
}

/** The right output of `ctx.node` as the text the node would have produced (a completion or a tool result), or undefined when unknown. */
export function nodeOracle(ctx: OracleContext): string | undefined {
  const { node, graph, expected } = ctx;
  if (ctx.dataset.startsWith('learn-design') || /^datawright:.*learn-design$/.test(ctx.dataset)) {
    const fromFamily = learnDesignOracle(node, graph, expected);
    if (fromFamily !== undefined) return fromFamily;
  }
  if (graph.answer.node === node.id) return answerOracle(node, graph.answer.field, expected);
  const props = schemaProps(node);
  if (props?.expression && isNumeric(expected)) return JSON.stringify({ expression: expected.trim() });
  return undefined;
}

function learnDesignOracle(node: GraphNode, graph: Graph, expected: string): string | undefined {
  const [tool, argument] = expected.split(':');
  if (!tool || !argument || !(tool in LEARN_DESIGN_TOOLS)) return undefined;
  const skillOf = () => [...graph.skills.values()].find((s) => enumOf(s.contract?.schema)?.includes(argument));
  if (node.design) {
    const skill = skillOf();
    const role = node.design.catalogue.roles[0];
    const input = node.design.catalogue.inputs[0];
    if (!skill || !role || !input) return undefined;
    return JSON.stringify({ steps: [{ id: 'a', skill: skill.name, role, inputs: { [input]: `task.${input}` } }] });
  }
  if (enumOf(node.contract?.schema)?.includes(argument)) return JSON.stringify(argument);
  if (node.kind === 'tool' && graph.answer.node === node.id) return expected;
  return undefined;
}

function answerOracle(node: GraphNode, field: string | undefined, expected: string): string {
  if (node.kind === 'tool') return field ? JSON.stringify({ [field]: expected }) : expected;
  const props = schemaProps(node);
  const asNumber = (f: string) => (props?.[f] as { type?: string } | undefined)?.type === 'number' && isNumeric(expected) ? Number(expected.replace(/,/g, '')) : expected;
  if (field) return JSON.stringify({ [field]: asNumber(field) });
  return node.contract?.schema ? JSON.stringify(expected) : expected;
}

const isNumeric = (s: string) => /^\s*-?\d[\d,]*(\.\d+)?\s*$/.test(s);
const schemaProps = (node: GraphNode) => (node.contract?.schema as { properties?: Record<string, unknown> } | undefined)?.properties;
const enumOf = (schema: unknown) => (schema as { enum?: unknown[] } | undefined)?.enum?.map(String);
