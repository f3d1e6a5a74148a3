import { describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../model/scripted.ts';
import { openStore } from '../store/index.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { executePending } from './execute.ts';
import { summarizeRuns } from '../experiments/summary.ts';
import type { Grader } from '../tasks/types.ts';

const yaml = `
name: t
roles: { s: { kind: executor } }
nodes:
  - { id: solve, role: s, prompt: "{{q}}", inputs: { q: task.question }, output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } } }
answer: solve.answer
`;
const grader: Grader = { grade: (a, t) => ({ score: Number(a) === Number(t.expected) ? 1 : 0, correct: Number(a) === Number(t.expected), extracted: String(a), expected: t.expected }) };

function setup() {
  const store = openStore(':memory:');
  const tools = defaultTools();
  const { graph } = parseWorkflow(yaml, { tools });
  const exp = store.createExperiment({
    kind: 'run', workflowName: 't', workflowYaml: yaml, workflowHash: 'h', dataset: 'toy', split: 'test', seed: 5, config: {},
    tasks: Array.from({ length: 10 }, (_, i) => ({ taskIndex: i, taskId: `toy/${i}`, input: { question: `${i}+1` }, expected: String(i + 1) })),
  });
  return { store, tools, graph, exp };
}

describe('executePending', () => {
  it('a cancelled experiment resumes without redoing or duplicating any finished task', async () => {
    const { store, tools, graph, exp } = setup();
    // The scripted (simulated) model answers i+1 for even i and 0 for odd i.
    const script = (r: { prompt: string }) => { const i = Number(r.prompt.split('+')[0]); return JSON.stringify({ answer: i % 2 ? 0 : i + 1 }); };
    const ac = new AbortController();
    const first = new ScriptedProvider(script);
    const res1 = await executePending({ store, experimentId: exp.id, graph, grader, provider: first, tools, seed: 5, signal: ac.signal, onRun: (_r, done) => { if (done === 4) ac.abort(); } });
    expect(res1).toEqual({ stored: 4, cancelled: true });
    const before = store.listRuns(exp.id);
    expect(before.map((r) => r.taskIndex)).toEqual([0, 1, 2, 3]);

    const second = new ScriptedProvider(script);
    const res2 = await executePending({ store, experimentId: exp.id, graph, grader, provider: second, tools, seed: 5 });
    expect(res2).toEqual({ stored: 6, cancelled: false });
    expect(second.calls).toBe(6);
    const runs = store.listRuns(exp.id);
    expect(runs.map((r) => r.taskIndex)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(runs.slice(0, 4)).toEqual(before);
    const report = summarizeRuns(exp.id, runs, { tasksPlanned: 10, wallSeconds: 1, status: 'completed' });
    expect(report.accuracy).toBe(0.5);
    expect(report.completionRate).toBe(1);
    expect(report.runs).toBe(10);
    // Nothing left to do: a third call stores nothing.
    expect(await executePending({ store, experimentId: exp.id, graph, grader, provider: second, tools, seed: 5 })).toEqual({ stored: 0, cancelled: false });
  });
});
