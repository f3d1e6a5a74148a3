/**
 * The 2,000-node trace of the rendering benchmark: a generated layered workflow run once through
 * the real engine (`executePending`) with the scripted model — a SIMULATED model, named so in the
 * stored calls — and stored in the suite's database before `flowlab serve` opens it. One node
 * mid-graph fails (the script throws), so the trace has a root failure and a cascade.
 */
import { executePending } from '../core/pipeline/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { computeWorkflowHash, openStore } from '../core/store/index.ts';
import type { Grader } from '../core/tasks/types.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';

/** Nodes of the benchmark trace. */
export const BIG_NODES = 2000;
/** Parallel lanes of the benchmark graph (its height); 2,000 nodes make 50 layers of 40. */
export const BIG_LANES = 40;
/** The node whose (scripted) model call throws: mid-graph, so its cascade fans out downstream. */
export const BIG_FAILING_NODE = `n${30 * BIG_LANES + BIG_LANES / 2}`;

/**
 * A layered DAG of `n` agent nodes over four roles, `lanes` nodes per layer: node i reads the node
 * before it in its lane and, every third node, also the previous node of the next lane
 * (cross-links), so layers, fan-in and crossings all occur.
 */
export function bigWorkflowYaml(n: number, lanes = BIG_LANES): string {
  const roles = ['planner', 'solver', 'verifier', 'answerer'];
  const lines = [
    `name: trace-${n}`,
    `description: ${n}-node layered graph for the trace-drawing benchmark (scripted, simulated model).`,
    'roles:',
    ...roles.map((r) => `  ${r}: { kind: executor }`),
    'limits: { max_hops: 100000, concurrency: 4 }',
    'nodes:',
  ];
  for (let i = 0; i < n; i++) {
    const inputs: string[] = [];
    if (i >= lanes) {
      inputs.push(`a: n${i - lanes}`);
      const lane = i % lanes;
      if (i % 3 === 0) inputs.push(`b: n${i - lanes + (lane + 1 < lanes ? 1 : -1)}`);
    }
    const prompt = inputs.length ? `step ${i} {{a}}` : `step ${i}`;
    lines.push(`  - { id: n${i}, role: ${roles[i % roles.length]}, prompt: "${prompt}"${inputs.length ? `, inputs: { ${inputs.join(', ')} }` : ''} }`);
  }
  lines.push(`answer: n${n - 1}`);
  return lines.join('\n') + '\n';
}

/** Writes the benchmark experiment (one task, one run) into `dbFile`; returns its id. */
export async function seedBigTrace(dbFile: string, n = BIG_NODES): Promise<string> {
  const yaml = bigWorkflowYaml(n);
  const tools = defaultTools();
  const { graph } = parseWorkflow(yaml, { tools });
  const store = openStore(dbFile);
  try {
    const exp = store.createExperiment({
      kind: 'run',
      workflowName: graph.name,
      workflowYaml: yaml,
      workflowHash: computeWorkflowHash(yaml),
      dataset: 'synthetic',
      split: 'bench',
      limit: 1,
      seed: 7,
      config: { source: 'e2e', simulated: true, models: { default: 'scripted (simulated)' } },
      tasks: [{ taskIndex: 0, taskId: 'synthetic/0', input: { question: 'draw me' }, expected: '0' }],
    });
    const failing = `step ${BIG_FAILING_NODE.slice(1)} `;
    const provider = new ScriptedProvider((req) => {
      if (req.prompt.startsWith(failing)) throw new Error('scripted (simulated) failure for the trace benchmark');
      return 'ok';
    });
    const grader: Grader = { grade: (answer, task) => ({ score: 0, correct: false, extracted: answer === undefined ? null : String(answer), expected: task.expected }) };
    const res = await executePending({ store, experimentId: exp.id, graph, grader, provider, tools, seed: 7 });
    if (res.stored !== 1) throw new Error(`the ${n}-node benchmark run was not stored (${JSON.stringify(res)})`);
    store.finishExperiment(exp.id, 'completed');
    return exp.id;
  } finally {
    store.close();
  }
}
