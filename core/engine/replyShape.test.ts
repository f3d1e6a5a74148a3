/**
 * Replies as real servers write them, through the engine: thinking split apart for every
 * provider, structured output repaired from a fence or prose (recorded, taken off the format
 * rung, refused in strict mode), and a reply cut at max_tokens flagged on an ok node.
 * The provider is SIMULATED (scripted); each reply is written here by hand.
 */
import { describe, expect, it } from 'vitest';
import { asRunId } from '../ids.ts';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../model/provider.ts';
import { computeLadder } from '../reward/index.ts';
import { computeCredit, creditGraphOf } from '../blame/credit/index.ts';
import { openStore } from '../store/index.ts';
import { summarizeRuns } from '../experiments/summary.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { runWorkflow } from './runWorkflow.ts';

const TEAM = (limits = '') => `
name: team
roles: { planner: { kind: planner }, solver: { kind: executor } }
${limits}
nodes:
  - { id: plan, role: planner, prompt: "Plan: {{q}}", inputs: { q: task.question }, max_tokens: 16 }
  - id: solve
    role: solver
    prompt: "Solve: {{p}}"
    inputs: { p: plan }
    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer], additionalProperties: false } }
answer: solve.answer
`;

/** A SIMULATED provider replying by role, with a stop reason per role. */
function provider(replies: Record<string, string>, stops: Record<string, GenerateResult['stopReason']> = {}): ModelProvider {
  return {
    name: 'scripted (simulated)',
    async generate(r: GenerateRequest): Promise<GenerateResult> {
      return { text: replies[r.role]!, tokens: { prompt: 1, completion: 1 }, ms: 0, seed: r.seed, model: 'sim', stopReason: stops[r.role] ?? 'eos' };
    },
    modelsLoaded: () => 0,
    dispose: async () => {},
  };
}

const tools = { get: () => undefined, list: () => [] };
const run = (yaml: string, p: ModelProvider) => {
  const { graph } = parseWorkflow(yaml, { tools });
  return runWorkflow(graph, { runId: asRunId('e/0'), taskKey: '0', taskInput: { question: 'What is 2 + 2?' }, seed: 1, provider: p, tools }).then((out) => ({ out, graph }));
};
const ladderOf = (graph: Parameters<typeof creditGraphOf>[0], out: Awaited<ReturnType<typeof run>>['out']) => {
  const cg = creditGraphOf(graph);
  const credit = computeCredit(cg, out.events, { correct: true });
  return computeLadder([...graph.roles.values()], cg.nodes, out.events, credit, { completed: true, score: 1 });
};

const MESSY_PLAN = '<think>Draft:\n```json\n{"answer": 5}\n```\nno, 2 + 2 is 4.</think>\n\nAdd 2 and 2.';
const MESSY_SOLVE = '<think>The plan says add.</think>\nSure! Here is the result:\n```json\n{"answer": 4}\n```\nHope this helps.';

describe('replies as servers write them', () => {
  it('thinking is split from every reply and kept beside it; the fenced JSON after it is repaired and recorded', async () => {
    const { out, graph } = await run(TEAM(), provider({ planner: MESSY_PLAN, solver: MESSY_SOLVE }));
    expect(out.status).toBe('completed');
    expect(out.answer).toBe(4);
    const [plan, solve] = out.events;
    expect(plan!.output).toBe('Add 2 and 2.');
    expect(plan!.calls[0]!.thinking).toBe('Draft:\n```json\n{"answer": 5}\n```\nno, 2 + 2 is 4.');
    expect(plan!.calls[0]!.completion).toBe('Add 2 and 2.');
    expect(solve!.inputs).toEqual({ p: 'Add 2 and 2.' });
    expect(solve!.calls[0]!.repair).toBe('fenced');
    expect(solve!.calls[0]!.thinking).toBe('The plan says add.');
    // The format rung counts outputs parsed as written: the solver's repaired one does not count.
    const ladder = ladderOf(graph, out);
    expect([ladder.solver!.format, ladder.solver!.repaired, ladder.planner!.format, ladder.planner!.repaired]).toEqual([0, 1, 1, undefined]);
  });

  it('strict_output refuses the repair: a typed failure on the solver, blamed on it', async () => {
    const { out, graph } = await run(TEAM('limits: { strict_output: true }'), provider({ planner: 'Add.', solver: MESSY_SOLVE }));
    const solve = out.events.find((e) => e.nodeId === 'solve')!;
    expect([solve.status, solve.failureClass, solve.errorCode]).toEqual(['failed', 'execution', 'UNPARSABLE_OUTPUT']);
    expect(solve.message).toContain('strict_output refused the fenced JSON value');
    const cg = creditGraphOf(graph);
    expect(computeCredit(cg, out.events, { correct: false }).roots.map((r) => [r.nodeId, r.blamed])).toEqual([['solve', 'solver']]);
  });

  it('a found JSON value that breaks the contract is CONTRACT_VIOLATION naming where it came from', async () => {
    const { out } = await run(TEAM(), provider({ planner: 'Add.', solver: 'The answer is {"answer": "four"}.' }));
    const solve = out.events.find((e) => e.nodeId === 'solve')!;
    expect(solve.errorCode).toBe('CONTRACT_VIOLATION');
    expect(solve.message).toMatch(/^output \(the embedded JSON value inside it\) violates the schema: output\/answer must be number/);
  });

  it('a reply cut at max_tokens leaves an ok node flagged cut, counted on its role and in the run table, and stored', async () => {
    const { out, graph } = await run(TEAM(), provider({ planner: 'First add 2 and', solver: '{"answer": 4}' }, { planner: 'maxTokens' }));
    expect(out.events.map((e) => e.status)).toEqual(['ok', 'ok']);
    const ladder = ladderOf(graph, out);
    expect([ladder.planner!.cut, ladder.planner!.format, ladder.solver!.cut]).toEqual([1, 1, undefined]);
    const store = openStore(':memory:');
    const exp = store.createExperiment({ kind: 'run', workflowName: 'team', workflowYaml: TEAM(), workflowHash: 'h', dataset: 'toy', split: 'test', seed: 1, config: {}, tasks: [{ taskIndex: 0, taskId: 'toy/0', input: {} }] });
    const credit = computeCredit(creditGraphOf(graph), out.events, { correct: true });
    store.saveRun({ runId: asRunId(`${exp.id}/0`), experimentId: exp.id, taskIndex: 0, taskId: 'toy/0', status: 'completed', answer: '4', expected: '4', score: 1, correct: true, seed: 1, promptTokens: 2, completionTokens: 2, startedAt: out.startedAt, endedAt: out.endedAt, failures: {}, credit, ladder }, out.events.map((e) => ({ ...e, runId: asRunId(`${exp.id}/0`) })));
    const report = summarizeRuns(exp.id, store.listRuns(exp.id), { tasksPlanned: 1, wallSeconds: 1, status: 'completed' });
    expect(report.outputs).toEqual({ repaired: 0, cut: 1 });
    expect(store.getRunEvents(`${exp.id}/0`)[0]!.calls[0]!.stopReason).toBe('maxTokens');
  });

  it('the repair and the thinking survive the store', async () => {
    const { out } = await run(TEAM(), provider({ planner: MESSY_PLAN, solver: MESSY_SOLVE }));
    const store = openStore(':memory:');
    const exp = store.createExperiment({ kind: 'run', workflowName: 'team', workflowYaml: TEAM(), workflowHash: 'h', dataset: 'toy', split: 'test', seed: 1, config: {}, tasks: [{ taskIndex: 0, taskId: 'toy/0', input: {} }] });
    const runId = asRunId(`${exp.id}/0`);
    store.saveRun({ runId, experimentId: exp.id, taskIndex: 0, taskId: 'toy/0', status: 'completed', answer: '4', expected: '4', score: 1, correct: true, seed: 1, promptTokens: 2, completionTokens: 2, startedAt: out.startedAt, endedAt: out.endedAt, failures: {} }, out.events.map((e) => ({ ...e, runId })));
    const calls = store.getRunEvents(runId).map((e) => e.calls[0]!);
    expect(calls.map((c) => [c.repair, c.thinking?.slice(0, 6)])).toEqual([[undefined, 'Draft:'], ['fenced', 'The pl']]);
  });
});
