/**
 * The AgentFlow template (examples/agentflow.yaml) and its tools: it compiles with the default
 * tools, runs end to end with the scripted (simulated) provider — memory lines, the verifier's
 * stop, the T-turn bound — and Flow-GRPO's rollouts broadcast one outcome advantage to every
 * planner turn.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runWorkflow } from '../engine/runWorkflow.ts';
import { startExperiment } from '../experiments/service.ts';
import { asRunId } from '../ids.ts';
import type { ModelPort } from '../model/config.ts';
import type { GenerateRequest } from '../model/provider.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { broadcastToTurns } from '../rollouts/index.ts';
import { openStore } from '../store/index.ts';
import { gsm8kGrader, type Dataset } from '../tasks/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { buildRetrieveIndex, callToolTool, defaultTools, memoryAppendTool, memoryRecallTool, type AgentMemory, type CallToolOutput } from './index.ts';

const YAML = fs.readFileSync(path.join(import.meta.dirname, '../../examples/agentflow.yaml'), 'utf8');
const corpus = buildRetrieveIndex([{ id: 'facts.md#1', source: 'facts.md', text: 'six times seven is forty-two' }]);
const tools = defaultTools({ corpus });
const graph = parseWorkflow(YAML, { tools }).graph;
const QUESTION = 'What is 6 times 7?';

const plan = (sub_goal: string, tool_name: string) => JSON.stringify({ justification: 'needed', context: '6 and 7', sub_goal, tool_name });
/** Turn 1 calculator, turn 2 retrieve, then stop (or never, with `stopAt` Infinity); the generator answers `answer()`. */
function script(stopAt = 2, answer = () => '42') {
  return (r: GenerateRequest): string => {
    const turn = r.key!.attempt;
    switch (r.role) {
      case 'planner': return turn === 1 ? plan('multiply 6 by 7', 'calculator') : plan('look up the product', 'retrieve');
      case 'executor': return JSON.stringify({ command: turn === 1 ? '6*7' : 'six times seven' });
      case 'verifier': return JSON.stringify({ analysis: 'checked', stop_signal: turn >= stopAt });
      case 'generator': return JSON.stringify({ answer: answer() });
      default: throw new Error(`unexpected role ${r.role}`);
    }
  };
}
function run(s: (r: GenerateRequest) => string) {
  const prompts: GenerateRequest[] = [];
  const provider = new ScriptedProvider((r) => { prompts.push(r); return s(r); });
  return { prompts, outcome: runWorkflow(graph, { runId: asRunId('af1'), taskKey: '0', taskInput: { question: QUESTION }, seed: 3, provider, tools }) };
}

const STEP1 = 'Action Step 1: {"tool_name":"calculator","sub_goal":"multiply 6 by 7","command":"6*7","result":"42"}';
const STEP2 = 'Action Step 2: {"tool_name":"retrieve","sub_goal":"look up the product","command":"six times seven","result":"[1] facts.md#1: six times seven is forty-two"}';

describe('examples/agentflow.yaml', () => {
  it('compiles: planner, executor, verifier, generator and one loop edge of max_iterations 2 (T = 3)', () => {
    expect([...graph.roles.keys()]).toEqual(['planner', 'executor', 'verifier', 'generator']);
    expect(graph.nodes.map((n) => n.id)).toEqual(['recall', 'plan', 'command', 'execute', 'verify', 'remember', 'generate']);
    expect(graph.edges.filter((e) => e.maxIterations)).toEqual([expect.objectContaining({ from: 'remember', to: 'recall', port: 'memory', maxIterations: 2 })]);
    expect(graph.answer).toEqual({ node: 'generate', field: 'answer' });
  });

  it('runs two turns until the verifier stops, with the memory of both steps in the generator\'s prompt', async () => {
    const { outcome, prompts } = run(script(2));
    const out = await outcome;
    expect(out.status).toBe('completed');
    expect(out.answer).toBe('42');
    expect(gsm8kGrader.grade(out.answer, { id: 't', index: 0, input: {}, expected: '42' }).correct).toBe(true);
    expect(out.events.map((e) => `${e.nodeId}#${e.attempt}`)).toEqual([
      'recall#1', 'plan#1', 'command#1', 'execute#1', 'verify#1', 'remember#1',
      'recall#2', 'plan#2', 'command#2', 'execute#2', 'verify#2', 'remember#2', 'generate#1',
    ]);
    const planner = prompts.filter((p) => p.role === 'planner').map((p) => p.prompt);
    expect(planner[0]).toContain('Memory:\nNo action steps yet.\n');
    expect(planner[1]).toContain(`Memory:\n${STEP1}\n`);
    const generator = prompts.find((p) => p.role === 'generator')!.prompt;
    expect(generator).toBe(`Task: ${QUESTION}\nSteps:\n${STEP1}\n${STEP2}\nFinal answer as JSON:\n`);
    const remember = out.events.filter((e) => e.nodeId === 'remember').map((e) => e.output as AgentMemory);
    expect(remember.map((m) => [m.count, m.stop])).toEqual([[1, false], [2, true]]);
  });

  it('stops after T = 3 turns when the verifier never says stop', async () => {
    const out = await run(script(Infinity)).outcome;
    expect(out.status).toBe('completed');
    expect(out.events.filter((e) => e.nodeId === 'plan').map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(out.events.at(-1)!.nodeId).toBe('generate');
    expect((out.events.at(-2)!.output as AgentMemory).count).toBe(3);
  });

  it('Flow-GRPO rollouts (single:planner) broadcast the outcome advantage to every planner turn', async () => {
    const store = openStore(':memory:');
    let answers = 0;
    const port: ModelPort = { create: async () => new ScriptedProvider(script(2, () => (answers++ % 2 ? '41' : '42'))) };
    const dataset: Dataset = { name: 'one', splits: ['test'], grader: gsm8kGrader, load: () => [{ id: 'one/test/0', index: 0, input: { question: QUESTION }, expected: '42' }] };
    const h = await startExperiment({
      kind: 'rollouts', workflow: { graph, text: YAML, file: '/w/agentflow.yaml' }, dataset: 'one', split: 'test', limit: 1, seed: 1,
      models: { models: { default: '/m/x.gguf' }, roleModels: {}, gpu: false }, group: 4, temperature: 1, mode: 'single:planner',
    }, { store, models: port, tools, datasets: () => dataset });
    const done = await h.done;
    expect(done.rollouts?.config.learningRoles).toEqual(['planner']);
    const rows = store.improve.advantagesOf(h.experimentId).filter((r) => r.mode === 'flow-grpo');
    const a = 0.5 / (0.5 + 1e-6); // outcomes 1, 0, 1, 0: mean 0.5, population std 0.5
    expect(rows.map((r) => r.role)).toEqual(['planner', 'planner', 'planner', 'planner']);
    expect(rows.map((r) => r.advantage).sort()).toEqual([-a, -a, a, a].map((x) => expect.closeTo(x, 12)).sort());
    for (const runRecord of store.listRuns(h.experimentId)) {
      const row = rows.find((r) => r.runId === runRecord.runId)!;
      const turns = store.getRunEvents(runRecord.runId).flatMap((e) => e.calls.map((c) => ({ nodeId: e.nodeId, attempt: e.attempt, callIndex: c.callIndex, role: c.role })));
      const planner = broadcastToTurns(turns, 'planner', row.advantage);
      expect(planner.map((t) => `${t.nodeId}#${t.attempt}`)).toEqual(['plan#1', 'plan#2']);
      expect(new Set(planner.map((t) => t.advantage))).toEqual(new Set([row.advantage]));
      expect(row.reward).toBe(runRecord.score);
    }
    store.close();
  });
});

describe('the AgentFlow tools', () => {
  it('call_tool runs the named tool on its one input and reports failures as the result', async () => {
    const call = tools.get('call_tool')!;
    const res = (inputs: Record<string, unknown>) => call.run(inputs, {}) as Promise<CallToolOutput>;
    expect(await res({ tool_name: 'Calculator', command: '(2+3)*4' })).toEqual({ tool_name: 'calculator', command: '(2+3)*4', ok: true, result: '20' });
    expect(await res({ tool_name: 'calculator', command: { command: '1/0' } })).toMatchObject({ ok: false, result: expect.stringMatching(/^Error: DIVISION_BY_ZERO/) });
    expect(await res({ tool_name: 'python', command: 'x' })).toMatchObject({ ok: false, result: expect.stringMatching(/^Error: no tool named "python"; tools: calculator, extract_number, weather/) });
    expect(await res({ tool_name: 'memory_append', command: 'x' })).toMatchObject({ ok: false });
    expect(await (defaultTools().get('call_tool')!.run({ tool_name: 'retrieve', command: 'q' }, {}) as Promise<CallToolOutput>)).toMatchObject({ ok: false, result: expect.stringMatching(/^Error: NO_CORPUS/) });
    await expect(async () => call.run({ tool_name: 3, command: 'x' }, {})).rejects.toMatchObject({ code: 'BAD_INPUT' });
    await expect(async () => callToolTool(tools).run({ tool_name: 'calculator', command: '1' }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('memory_recall and memory_append keep "Action Step N: {...}" lines and the stop signal', () => {
    const empty = memoryRecallTool.run({ memory: null }, {}) as AgentMemory;
    expect(empty).toEqual({ text: 'No action steps yet.', steps: [], count: 0 });
    const one = memoryAppendTool.run({ memory: empty, tool_name: 'calculator', sub_goal: 'add', command: '1+1', result: 2, stop: 'STOP' }, {}) as AgentMemory;
    expect(one).toEqual({ text: 'Action Step 1: {"tool_name":"calculator","sub_goal":"add","command":"1+1","result":"2"}', steps: [{ tool_name: 'calculator', sub_goal: 'add', command: '1+1', result: '2' }], count: 1, stop: true });
    const back = memoryRecallTool.run({ memory: one }, {}) as AgentMemory;
    expect(back).toEqual({ text: one.text, steps: one.steps, count: 1 });
    const long = memoryAppendTool.run({ memory: back, tool_name: 'retrieve', sub_goal: 's', command: 'c', result: 'x'.repeat(500), stop: false }, {}) as AgentMemory;
    expect(long.steps[1]!.result).toHaveLength(240);
    expect(long.steps[1]!.result.endsWith('…')).toBe(true);
    expect(long.stop).toBe(false);
  });
});
