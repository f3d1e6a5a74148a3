/**
 * `flowlab show <blame-eval id>` prints the blame evaluation's tables, the report `blame-eval`
 * printed when it ended (scored again from the stored runs), and `--json` carries it as
 * `blame` (issue 29: one vocabulary with the window's evaluation panel).
 */
import { describe, expect, it } from 'vitest';
import { startExperiment } from '../core/experiments/index.ts';
import type { ModelConfig, ModelPort } from '../core/model/config.ts';
import { ScriptedProvider } from '../core/model/scripted.ts';
import { openStore } from '../core/store/index.ts';
import type { Dataset } from '../core/tasks/types.ts';
import { defaultTools } from '../core/tools/index.ts';
import { parseWorkflow } from '../core/workflow/index.ts';
import { experimentSummary, formatExperimentSummary } from './commands/showExperiment.ts';
import { formatBlame } from './formatExperiments.ts';

const YAML = `
name: toy
roles: { s: { kind: executor } }
nodes:
  - { id: solve, role: s, prompt: "{{q}}", inputs: { q: task.question }, output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } } }
answer: solve.answer
`;
const toy: Dataset = {
  name: 'toy',
  splits: ['test'],
  grader: { grade: (a, t) => ({ score: Number(a) === Number(t.expected) ? 1 : 0, correct: Number(a) === Number(t.expected), extracted: String(a), expected: t.expected }) },
  load: ({ limit, offset = 0 }) => Array.from({ length: 4 }, (_, i) => ({ id: `toy/test/${i}`, index: i, input: { question: `${i}+1` }, expected: String(i + 1) })).slice(offset, offset + (limit ?? 4)),
};
const MODELS: ModelConfig = { models: { default: '/m/toy.gguf' }, roleModels: { s: 'default' }, gpu: false };

describe('flowlab show <blame-eval id>', () => {
  it('prints the blame tables the evaluation printed at its end, and --json carries them as blame', async () => {
    const store = openStore(':memory:');
    const tools = defaultTools();
    const port: ModelPort = { create: async () => new ScriptedProvider((r) => JSON.stringify({ answer: Number(r.prompt.split('+')[0]) + 1 })) };
    const spec = { kind: 'blame-eval' as const, workflow: { graph: parseWorkflow(YAML, { tools }).graph, text: YAML }, dataset: 'toy', split: 'test', limit: 4, seed: 3, models: MODELS, inject: ['s=error@1'] };
    const out = await (await startExperiment(spec, { store, models: port, tools, datasets: () => toy })).done;
    const s = experimentSummary(store, out.experimentId);
    // Every one of the 4 runs had its solve node fail with the injected error, blamed on s.
    expect(s.blame).toEqual({ experimentId: out.experimentId, simulated: true, inject: ['s=error@1'], ...out.blame!.report });
    expect(s.blame!.byRole.s).toEqual({ precision: 1, recall: 1, injected: 4, blamed: 4 });
    const text = formatExperimentSummary(s);
    expect(text).toContain(formatBlame(out.blame!.report, out.experimentId, ['s=error@1'], out.report.accuracy));
    expect(text).toContain('Blame evaluation with SIMULATED faults (s=error@1), 4 runs, accuracy 0.0%');
    store.close();
  });
});
