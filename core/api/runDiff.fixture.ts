/**
 * Two experiments of the gsm8k-team workflow (examples/gsm8k-team.yaml) for the run-diff tests
 * (the API unit test and the browser test), run through the real engine with the scripted
 * model — a SIMULATED model, named so in the stored calls — so where they diverge is known:
 * in experiment A the verifier accepts at once; in experiment B it asks for a revision on its
 * first attempt, so B runs solve, calculate and verify a second time (a loop A never takes)
 * before the answer. Same task (What is 2 + 2?), same seed.
 */
import { readFileSync } from 'node:fs';
import { executePending } from '../experiments/index.ts';
import { ScriptedProvider } from '../model/index.ts';
import { computeWorkflowHash, type Store } from '../store/index.ts';
import type { Grader } from '../tasks/types.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/index.ts';

/** The workflow text both experiments run. */
export const TEAM_YAML = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');

/** The verifier's replies: A accepts; B asks once for a revision (its reason), then accepts. */
export const VERDICTS = { accept: '{"verdict":"ok","reason":"4 is right"}', revise: '{"verdict":"revise","reason":"check the sum"}' } as const;

const grader: Grader = {
  grade: (answer, task) => {
    const value = (answer as { answer?: unknown } | undefined)?.answer ?? answer;
    const correct = String(value) === task.expected;
    return { score: correct ? 1 : 0, correct, extracted: value === undefined ? null : String(value), expected: task.expected };
  },
};

/** Stores one experiment of `TEAM_YAML` whose verifier revises on its first attempt iff `revise`; returns its id. */
async function seedOne(store: Store, id: string, revise: boolean): Promise<string> {
  const tools = defaultTools();
  const { graph } = parseWorkflow(TEAM_YAML, { tools });
  const exp = store.createExperiment({
    id,
    kind: 'run',
    workflowName: graph.name,
    workflowYaml: TEAM_YAML,
    workflowHash: computeWorkflowHash(TEAM_YAML),
    dataset: 'synthetic',
    split: 'diff',
    limit: 1,
    seed: 3,
    config: { source: 'run-diff tests', simulated: true, models: { default: 'scripted (simulated)' } },
    tasks: [{ taskIndex: 0, taskId: 'diff/0', input: { question: 'What is 2 + 2?' }, expected: '4' }],
  });
  const provider = new ScriptedProvider((req) => {
    switch (req.role) {
      case 'planner':
        return 'Add 2 and 2.';
      case 'solver':
        return req.key.attempt === 1 ? '{"expression":"2+2"}' : '{"expression":"2*2"}';
      case 'verifier':
        return revise && req.key.attempt === 1 ? VERDICTS.revise : VERDICTS.accept;
      default:
        return '{"answer":4}';
    }
  });
  const res = await executePending({ store, experimentId: exp.id, graph, grader, provider, tools, seed: 3 });
  if (res.stored !== 1) throw new Error(`the run-diff experiment ${id} stored ${res.stored} of 1 runs (${JSON.stringify(res)})`);
  store.finishExperiment(exp.id, 'completed');
  return exp.id;
}

/** Stores both experiments (ids `diff-accept`, `diff-revise`); returns their run ids of task 0. */
export async function seedRunDiffPair(store: Store): Promise<{ a: string; b: string }> {
  const a = await seedOne(store, 'diff-accept', false);
  const b = await seedOne(store, 'diff-revise', true);
  return { a: store.listRuns(a)[0]!.runId, b: store.listRuns(b)[0]!.runId };
}
