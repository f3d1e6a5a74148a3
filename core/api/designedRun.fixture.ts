/**
 * A designed-workflow experiment for the view tests (the API unit test and the browser test):
 * a designer and an executor over the built-in tools, run through the real engine and design stage
 * (`executePending`) with the scripted model — a SIMULATED model, named so in the stored calls —
 * so each task's design is known: task 0 wires a dangling input (a wiring root failure on node
 * `b`, blamed on the designer), task 1 is a good design (correct answer 4), task 2 uses one id
 * twice (the design cannot run: the contract's prefixItems refuse it, CONTRACT_VIOLATION on the design node), task 3 is cut off mid-way, as
 * a tiny model's designs are (UNPARSABLE_OUTPUT on the design node).
 */
import { executePending } from '../experiments/index.ts';
import { ScriptedProvider } from '../model/index.ts';
import { computeWorkflowHash, type Store } from '../store/index.ts';
import type { Grader } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';

export const DESIGNED_YAML = `name: designed-e2e
description: A designer wires calculator steps for an executor (scripted, SIMULATED model).
roles:
  designer: { kind: generator }
  executor: { kind: executor }
skills:
  expression: { prompt: "Write the arithmetic for: {{question}}" }
design:
  role: designer
  prompt: "{{catalogue}}\\nQuestion: {{task.question}}\\nDesign:"
  max_tokens: 256
  catalogue: { tools: [calculator], skills: [expression], roles: [executor], inputs: [question] }
  budget: { max_nodes: 3 }
`;

const skillStep = { id: 'a', skill: 'expression', role: 'executor', inputs: { question: 'task.question' } };
/** The scripted designer's design per task index (a string: the completion as written). */
export const DESIGNS: ReadonlyArray<object | string> = [
  { steps: [skillStep, { id: 'b', tool: 'calculator', inputs: { expression: 'c' } }] },
  { steps: [skillStep, { id: 'b', tool: 'calculator', inputs: { expression: 'a' } }] },
  { steps: [skillStep, { id: 'a', tool: 'calculator', inputs: { expression: 'a' } }] },
  '{"steps": [{"id": "a", "skill": "expr',
];
/** The path and message of task 0's one validation issue (node `b`). */
export const DANGLING_PATH = ['steps', 1, 'inputs', 'expression'];

/** Stores the designed experiment (one task per design) in `store`; returns its id. */
export async function seedDesignedExperiment(store: Store): Promise<string> {
  const tools = defaultTools();
  const { graph } = parseWorkflow(DESIGNED_YAML, { tools });
  const exp = store.createExperiment({
    kind: 'run',
    workflowName: graph.name,
    workflowYaml: DESIGNED_YAML,
    workflowHash: computeWorkflowHash(DESIGNED_YAML),
    dataset: 'synthetic',
    split: 'designed',
    limit: DESIGNS.length,
    seed: 5,
    config: { source: 'view tests', simulated: true, models: { default: 'scripted (simulated)' } },
    tasks: DESIGNS.map((_, i) => ({ taskIndex: i, taskId: `designed/${i}`, input: { question: `What is 2 + 2? (#${i})` }, expected: '4' })),
  });
  const provider = new ScriptedProvider((req) => {
    if (req.role === 'designer') {
      const i = Number(/#(\d+)\)/.exec(req.prompt)?.[1]);
      const d = DESIGNS[i]!;
      return typeof d === 'string' ? d : JSON.stringify(d);
    }
    return '2 + 2';
  });
  const grader: Grader = {
    grade: (answer, task) => {
      const value = (answer as { value?: unknown } | undefined)?.value ?? answer;
      const correct = String(value) === task.expected;
      return { score: correct ? 1 : 0, correct, extracted: value === undefined ? null : String(value), expected: task.expected };
    },
  };
  const res = await executePending({ store, experimentId: exp.id, graph, grader, provider, tools, seed: 5 });
  if (res.stored !== DESIGNS.length) throw new Error(`the designed experiment stored ${res.stored} of ${DESIGNS.length} runs (${JSON.stringify(res)})`);
  store.finishExperiment(exp.id, 'completed');
  return exp.id;
}
