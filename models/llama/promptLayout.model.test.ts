/**
 * Where role instructions go, measured on a template-carrying tiny model through the engine: as
 * the system message (the default), prompts of two roles part right after the chat template's
 * opening; in the prompt's `{{instructions}}` slot after the question, a task's solver call
 * reuses the planner's evaluated question (prefix reuse). Greedy texts are the same with reuse
 * on and off in both layouts.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runWorkflow } from '../../core/engine/index.ts';
import { asRunId } from '../../core/ids.ts';
import type { ModelCallRecord } from '../../core/trace/index.ts';
import { parseWorkflow } from '../../core/workflow/index.ts';
import { tempDir } from '../../test/fixtures.ts';
import { writeGgufWithMetadata } from './ggufFixture.ts';
import { LlamaProvider } from './LlamaProvider.ts';
import { CHATML } from './templates.fixture.ts';
import { haveModels, STORIES } from './testing.ts';

const tools = { get: () => undefined, list: () => [] };
const questions = [
  "Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her friends every day with four. She sells the remainder at the market daily for $2 per egg. How much does she make every day?",
  'A robe takes 2 bolts of blue fiber and half that much white fiber. How many bolts in total does it take?',
];

/** A planner and a solver whose prompts lead with the question; `slot` puts the instructions after it. */
function team(slot: boolean): string {
  const at = slot ? '{{instructions}}\\n' : '';
  return `
name: layout
roles:
  planner: { kind: planner, instructions: You plan the solution of a grade-school math problem in two or three short steps. }
  solver: { kind: executor, instructions: You turn a plan into one arithmetic expression that computes the answer. }
nodes:
  - { id: plan, role: planner, inputs: { question: task.question }, prompt: "Question: {{question}}\\n${at}Plan:", max_tokens: 16, temperature: 0 }
  - { id: solve, role: solver, inputs: { question: task.question, plan: plan }, prompt: "Question: {{question}}\\n${at}Plan: {{plan}}\\nExpression:", max_tokens: 16, temperature: 0 }
`;
}

describe.skipIf(!haveModels)('role instructions in the prompt vs the system message, with prefix reuse', () => {
  const file = path.join(tempDir('prompt-layout'), 'stories-chatml.gguf');
  const providers: LlamaProvider[] = [];
  beforeAll(() => writeGgufWithMetadata(STORIES, file, { 'tokenizer.chat_template': CHATML }));
  afterAll(() => Promise.all(providers.map((p) => p.dispose())));

  /** The calls of both tasks, run one after another on one provider. */
  const runTasks = async (slot: boolean, prefixReuse: boolean): Promise<ModelCallRecord[]> => {
    const provider = new LlamaProvider({ models: { default: { path: file, threads: 1, prefixReuse } } });
    providers.push(provider);
    const { graph } = parseWorkflow(team(slot), { tools });
    const calls: ModelCallRecord[] = [];
    for (const [i, question] of questions.entries()) {
      const out = await runWorkflow(graph, { runId: asRunId(`r${i}`), taskKey: String(i), taskInput: { question }, seed: 3, provider, tools });
      expect(out.status).toBe('completed');
      calls.push(...out.events.flatMap((e) => e.calls ?? []));
    }
    return calls;
  };
  const evaluated = (calls: ModelCallRecord[]) => calls.reduce((s, c) => s + (c.promptTokensEvaluated ?? c.promptTokens), 0);

  it('the slot layout evaluates the question once per task; texts the same with reuse on and off in both layouts', async () => {
    const system = { on: await runTasks(false, true), off: await runTasks(false, false) };
    const slot = { on: await runTasks(true, true), off: await runTasks(true, false) };
    for (const side of [system, slot]) {
      expect(side.on.map((c) => c.completion)).toEqual(side.off.map((c) => c.completion));
      expect(evaluated(side.off)).toBe(side.off.reduce((s, c) => s + c.promptTokens, 0));
    }
    expect(system.on.map((c) => c.system)).toEqual([...Array(2)].flatMap(() => [expect.stringContaining('You plan'), expect.stringContaining('You turn')]));
    expect(slot.on.every((c) => c.system === undefined && /\nYou (plan|turn) /.test(c.prompt))).toBe(true);
    // System layout: the first task's solver shares only the template's opening with the planner.
    const [, sysSolve0] = system.on;
    expect(sysSolve0!.promptTokensEvaluated).toBeGreaterThan(0.9 * sysSolve0!.promptTokens);
    // Slot layout: each solver call evaluates what follows "Question: ...\n" (its instructions, the plan, the tail).
    for (const solve of [slot.on[1]!, slot.on[3]!]) expect(solve.promptTokensEvaluated).toBeLessThan(0.65 * solve.promptTokens);
    expect(slot.on[1]!.promptTokensEvaluated).toBeLessThan(0.5 * slot.on[1]!.promptTokens); // the long question
    expect(evaluated(slot.on)).toBeLessThan(evaluated(system.on));
  });
});
