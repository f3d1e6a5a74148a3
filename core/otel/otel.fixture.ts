/**
 * Stored runs for the OpenTelemetry tests: the four-role GSM8K team (examples/gsm8k-team.yaml)
 * run through the real engine with the scripted model (SIMULATED, named so in the stored calls),
 * one task per kind of outcome:
 *   0 all nodes ok (correct);
 *   1 the planner writes nothing: `plan` fails its non_empty check (execution), everything below cascades;
 *   2 the solver writes 1/0: the calculator fails (TOOL_ERROR, the solver's), verify and answer cascade;
 *   3 the verifier asks for one revision (attempt 2 of solve, calculate, verify), `plan` labelled SIMULATED;
 *   4 the answerer's model call fails (GENERATION_FAILED): an infrastructure failure, blamed on no role,
 *     with the call's error recorded.
 * The designed-workflow runs come from core/api/designedRun.fixture.ts.
 */
import { readFileSync } from 'node:fs';
import { executePending } from '../pipeline/index.ts';
import { ModelError, ScriptedProvider } from '../model/index.ts';
import { computeWorkflowHash, type Store } from '../store/index.ts';
import type { Grader } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';

export const TEAM_YAML = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
export const TEAM_TASKS = 5;

const grader: Grader = {
  grade: (answer, task) => {
    const value = (answer as { value?: unknown } | undefined)?.value ?? answer;
    const correct = String(value) === task.expected;
    return { score: correct ? 1 : 0, correct, extracted: value === undefined ? null : String(value), expected: task.expected };
  },
};

/** Stores the team experiment (see the module comment) in `store`; returns its id. */
export async function seedTeamExperiment(store: Store): Promise<string> {
  const tools = defaultTools();
  const { graph } = parseWorkflow(TEAM_YAML, { tools });
  const exp = store.createExperiment({
    kind: 'run',
    workflowName: graph.name,
    workflowYaml: TEAM_YAML,
    workflowHash: computeWorkflowHash(TEAM_YAML),
    dataset: 'synthetic',
    split: 'otel',
    seed: 11,
    config: { source: 'otel tests', simulated: true },
    tasks: Array.from({ length: TEAM_TASKS }, (_, i) => ({ taskIndex: i, taskId: `otel/${i}`, input: { question: `What is 2 + 2? (#${i})` }, expected: '4' })),
  });
  const provider = new ScriptedProvider((req) => {
    const i = Number(/#(\d+)\)/.exec(req.prompt)?.[1]);
    switch (req.role) {
      case 'planner':
        return i === 1 ? '' : 'Add the two numbers.';
      case 'solver':
        return JSON.stringify({ expression: i === 2 ? '1/0' : '2+2' });
      case 'verifier':
        return JSON.stringify(i === 3 && req.key.attempt === 1 ? { verdict: 'revise', reason: 'check the sum again' } : { verdict: 'ok', reason: 'the sum is right' });
      default:
        if (i === 4) throw new ModelError('GENERATION_FAILED', 'the scripted answerer is down', req.model);
        return JSON.stringify({ answer: 4 });
    }
  });
  const faultAt = (taskKey: string, nodeId: string, attempt: number) => (taskKey === '3' && nodeId === 'plan' && attempt === 1 ? 'wrong' : undefined);
  const res = await executePending({ store, experimentId: exp.id, graph, grader, provider, tools, seed: 11, faultAt });
  if (res.stored !== TEAM_TASKS) throw new Error(`the team experiment stored ${res.stored} of ${TEAM_TASKS} runs (${JSON.stringify(res)})`);
  store.finishExperiment(exp.id, 'completed');
  return exp.id;
}
