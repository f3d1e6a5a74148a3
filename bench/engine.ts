/**
 * Engine overhead benchmark: a 1,000-node workflow run with an instant (scripted, simulated)
 * model, against a bare loop making the same 1,000 calls to the same model. The difference per
 * node is the engine's own cost: scheduling, input gathering, prompt rendering, trace events.
 * Prints nothing; the caller prints.
 */
import { asRunId } from '../core/ids.ts';
import { runWorkflow } from '../core/engine/index.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';

export interface EngineBenchResult {
  nodes: number;
  /** Engine run, ms per node (best of repeats). */
  engineMsPerNode: number;
  /** Bare loop, ms per call (best of repeats). */
  baselineMsPerNode: number;
  /** engine - baseline, ms per node: the engine's own overhead. */
  overheadMsPerNode: number;
  /** engine / baseline time. */
  ratio: number;
}

/** A layered DAG: node i reads node i-1 and, every third node, also node i-7 (fan-in). */
export function benchWorkflowYaml(n: number): string {
  const lines = ['name: bench', 'roles: { w: { kind: executor } }', 'limits: { max_hops: 100000, concurrency: 4 }', 'nodes:'];
  for (let i = 0; i < n; i++) {
    const inputs = i === 0 ? '' : `, inputs: { a: n${i - 1}${i % 3 === 0 && i >= 7 ? `, b: n${i - 7}` : ''} }`;
    lines.push(`  - { id: n${i}, role: w, prompt: "step ${i} {{a}}"${inputs} }`.replace(' {{a}}', i === 0 ? '' : ' {{a}}'));
  }
  lines.push(`answer: n${n - 1}`);
  return lines.join('\n');
}

/** A chain: node i reads node i-1 (the same shape as the LangGraph.js peer's chain, bench/langgraph.ts). */
export function chainWorkflowYaml(n: number): string {
  const lines = ['name: chain', 'roles: { w: { kind: executor } }', 'limits: { max_hops: 100000, concurrency: 4 }', 'nodes:', '  - { id: n0, role: w, prompt: "step 0" }'];
  for (let i = 1; i < n; i++) lines.push(`  - { id: n${i}, role: w, prompt: "step ${i} {{a}}", inputs: { a: n${i - 1} } }`);
  lines.push(`answer: n${n - 1}`);
  return lines.join('\n');
}

/** A fan-out: node 0, then nodes 1..n-1 each reading node 0 (the LangGraph.js peer's fan-out). */
export function fanOutWorkflowYaml(n: number): string {
  const lines = ['name: fanout', 'roles: { w: { kind: executor } }', 'limits: { max_hops: 100000, concurrency: 4 }', 'nodes:', '  - { id: n0, role: w, prompt: "step 0" }'];
  for (let i = 1; i < n; i++) lines.push(`  - { id: n${i}, role: w, prompt: "step ${i} {{a}}", inputs: { a: n0 } }`);
  lines.push(`answer: n${n - 1}`);
  return lines.join('\n');
}

/** The graph shapes measured: the layered DAG above, a chain, a fan-out. */
export type BenchShape = 'layered' | 'chain' | 'fanout';

const YAML: Record<BenchShape, (n: number) => string> = { layered: benchWorkflowYaml, chain: chainWorkflowYaml, fanout: fanOutWorkflowYaml };

/**
 * Runs an `n`-node workflow of `shape` (default: the layered DAG) `repeats` times through
 * `runWorkflow` with an instant scripted model, and the bare loop of the same `n` model calls;
 * best of each. Errors: a run that does not complete all `n` nodes.
 */
export async function benchEngine(options: { nodes?: number; repeats?: number; shape?: BenchShape } = {}): Promise<EngineBenchResult> {
  const n = options.nodes ?? 1000;
  const repeats = options.repeats ?? 5;
  const tools = defaultTools();
  const { graph } = parseWorkflow(YAML[options.shape ?? 'layered'](n), { tools });
  const provider = new ScriptedProvider(() => 'ok');
  let engineBest = Infinity;
  let baseBest = Infinity;
  for (let r = 0; r < repeats; r++) {
    const t0 = performance.now();
    const out = await runWorkflow(graph, { runId: asRunId(`bench-${r}`), taskKey: '0', taskInput: {}, seed: r, provider, tools });
    engineBest = Math.min(engineBest, performance.now() - t0);
    if (out.events.length !== n || out.status !== 'completed') throw new Error(`bench run did not complete: ${out.status}, ${out.events.length} events`);

    const t1 = performance.now();
    for (let i = 0; i < n; i++) {
      await provider.generate({
        role: graph.nodes[i]!.role!, model: 'default', prompt: `step ${i} ok`, params: { temperature: 0, maxTokens: 8 },
        seed: i, key: { taskKey: '0', nodeId: `n${i}`, attempt: 1, callIndex: 0 },
      });
    }
    baseBest = Math.min(baseBest, performance.now() - t1);
  }
  return {
    nodes: n,
    engineMsPerNode: engineBest / n,
    baselineMsPerNode: baseBest / n,
    overheadMsPerNode: (engineBest - baseBest) / n,
    ratio: engineBest / baseBest,
  };
}
