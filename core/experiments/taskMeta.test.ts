/**
 * A task reaches its grader whole: DataWright's grader reads `meta.parts`, and a run, a resume
 * and a replay's grade must all see them (before schema version 11 the task handed to the grader
 * was rebuilt from id, input and expected only, so every DataWright task scored 0).
 */
import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../model/scripted.ts';
import type { ModelConfig, ModelPort } from '../model/config.ts';
import { openStore } from '../store/index.ts';
import { composeDataset } from '../tasks/datawright.ts';
import { gsm8kGrader } from '../tasks/gsm8k.ts';
import type { Dataset } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { startExperiment } from './service.ts';
import { executePending, taskOf } from '../pipeline/index.ts';
import type { ServiceDeps } from './spec.ts';

const YAML = `
name: echo
roles: { s: { kind: executor } }
nodes:
  - { id: solve, role: s, prompt: "{{q}}", inputs: { q: task.question } }
answer: solve
`;
/** Eight tasks "What is i plus 1?", expected i+1, graded as numbers. */
const base: Dataset = {
  name: 'toy',
  splits: ['test'],
  grader: gsm8kGrader,
  load: ({ limit, offset = 0 }) => Array.from({ length: 8 }, (_, i) => ({ id: `toy/test/${i}`, index: i, input: { question: `What is ${i} plus 1?` }, expected: String(i + 1) })).slice(offset, offset + (limit ?? 8)),
};

describe('a task keeps its meta to the grader', () => {
  it('a DataWright run answered exactly as expected scores 1 on every task, on the first run and on a resume', async () => {
    const dataset = composeDataset(base, { strategy: 'shared', k: 2 });
    const tasks = dataset.load({ split: 'test', limit: 4 });
    // The SIMULATED model answers each composed question with its gold text, byte for byte.
    const gold = new Map(tasks.map((t) => [String(t.input.question), t.expected]));
    const provider = new ScriptedProvider((r) => gold.get(r.prompt) ?? 'no idea');
    const store = openStore(':memory:');
    const tools = defaultTools();
    const { graph } = parseWorkflow(YAML, { tools });
    const MODELS: ModelConfig = { models: { default: '/m/toy.gguf' }, roleModels: { s: 'default' }, gpu: false };
    const port: ModelPort = { create: async () => provider };
    const deps: ServiceDeps = { store, models: port, tools, datasets: () => dataset };
    const h = await startExperiment({ kind: 'run', workflow: { graph, text: YAML }, dataset: dataset.name, split: 'test', limit: 4, seed: 1, models: MODELS }, deps, {});
    const out = await h.done;
    const runs = store.listRuns(out.experimentId);
    expect(runs.map((r) => r.score)).toEqual([1, 1, 1, 1]);
    expect(store.listTasks(out.experimentId)[0]!.meta?.parts).toEqual(tasks[0]!.meta?.parts);

    // A resume reads the planned tasks back from the store: their meta comes with them.
    const exp = store.createExperiment({
      kind: 'run', workflowName: 'echo', workflowYaml: YAML, workflowHash: 'h', dataset: dataset.name, split: 'test', seed: 2, config: {},
      tasks: tasks.map((t) => ({ taskIndex: t.index, taskId: t.id, input: t.input, expected: t.expected, meta: t.meta! })),
    });
    await executePending({ store, experimentId: exp.id, graph, grader: dataset.grader, provider, tools, seed: 2 });
    expect(store.listRuns(exp.id).map((r) => r.correct)).toEqual([true, true, true, true]);
  });

  it('taskOf keeps meta and leaves it out when the planned task has none', () => {
    expect(taskOf({ taskIndex: 3, taskId: 'x/test/3', input: { q: 1 }, expected: '2', meta: { parts: [1] } })).toEqual({ id: 'x/test/3', index: 3, input: { q: 1 }, expected: '2', meta: { parts: [1] } });
    expect('meta' in taskOf({ taskIndex: 0, taskId: 'x', input: {} })).toBe(false);
  });
});
