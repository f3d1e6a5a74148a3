/**
 * The peer beside the engine benchmark (bench/engine.ts): LangGraph.js (`@langchain/langgraph`,
 * a bench-only dev dependency) running the same 1,000-node chain or fan-out, each node making the
 * same instant scripted model call as Flowlab's nodes, against the same bare loop of calls. The
 * difference per node is LangGraph's own cost: Pregel supersteps, channel reads and writes,
 * checkpoint-free state updates. Prints nothing; the caller prints.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { asRoleName } from '../core/ids.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import type { BenchShape, EngineBenchResult } from './engine.ts';

/** The slice of StateGraph's builder used here, with node names as plain strings. */
interface Builder {
  addNode(name: string, fn: (state: { out: string }) => Promise<{ out: string }>): Builder;
  addEdge(from: string, to: string): Builder;
  compile(): { invoke(input: { out: string }, config: { recursionLimit: number }): Promise<{ out: string }> };
}

/**
 * LangGraph.js over an `n`-node `chain` (node i after node i-1) or `fanout` (node 0, then nodes
 * 1..n-1 in one superstep), best of `repeats`, beside the bare loop of the same calls.
 */
export async function benchLangGraph(options: { nodes?: number; repeats?: number; shape: Exclude<BenchShape, 'layered'> }): Promise<EngineBenchResult> {
  const n = options.nodes ?? 1000;
  const repeats = options.repeats ?? 5;
  const provider = new ScriptedProvider(() => 'ok');
  const role = asRoleName('w');
  const call = (i: number, input: string) => provider.generate({
    role, model: 'default', prompt: i === 0 ? 'step 0' : `step ${i} ${input}`, params: { temperature: 0, maxTokens: 8 },
    seed: i, key: { taskKey: '0', nodeId: `n${i}`, attempt: 1, callIndex: 0 },
  });
  // The last value written wins; the reducer lets the fan-out's branches write in one superstep.
  const State = Annotation.Root({ out: Annotation<string>({ reducer: (_a: string, b: string) => b, default: () => '' }) });
  const g = new StateGraph(State) as unknown as Builder;
  let ran = 0;
  for (let i = 0; i < n; i++) {
    g.addNode(`n${i}`, async (state) => {
      ran++;
      return { out: (await call(i, state.out)).text };
    });
  }
  g.addEdge(START, 'n0');
  for (let i = 1; i < n; i++) g.addEdge(options.shape === 'chain' ? `n${i - 1}` : 'n0', `n${i}`);
  if (options.shape === 'chain') g.addEdge(`n${n - 1}`, END);
  else for (let i = 1; i < n; i++) g.addEdge(`n${i}`, END);
  const app = g.compile();

  let best = Infinity;
  let baseBest = Infinity;
  for (let r = 0; r < repeats; r++) {
    ran = 0;
    const t0 = performance.now();
    await app.invoke({ out: '' }, { recursionLimit: n + 10 });
    best = Math.min(best, performance.now() - t0);
    if (ran !== n) throw new Error(`LangGraph ${options.shape} ran ${ran} of ${n} nodes`);
    const t1 = performance.now();
    for (let i = 0; i < n; i++) await call(i, 'ok');
    baseBest = Math.min(baseBest, performance.now() - t1);
  }
  return { nodes: n, engineMsPerNode: best / n, baselineMsPerNode: baseBest / n, overheadMsPerNode: (best - baseBest) / n, ratio: best / baseBest };
}
