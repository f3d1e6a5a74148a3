/**
 * Where a role's instructions go (core/engine/runNode.ts assemblePrompt): the system text by
 * default, or the prompt's `{{instructions}}` slot, with hint cards following them when the
 * template has no `{{hints}}` slot.
 */
import { describe, expect, it } from 'vitest';
import { asRunId, type RoleName } from '../ids.ts';
import type { GenerateRequest } from '../model/provider.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { parseWorkflow } from '../workflow/index.ts';
import { runWorkflow } from './runWorkflow.ts';

const tools = { get: () => undefined, list: () => [] };

function workflow(prompt: string, inputs = '{ question: task.question }'): string {
  return `
name: layout
roles: { planner: { kind: planner, instructions: Plan in two steps. } }
nodes:
  - id: plan
    role: planner
    inputs: ${inputs}
    prompt: ${JSON.stringify(prompt)}
`;
}

async function requestsOf(yaml: string, hints?: (role: RoleName) => string) {
  const seen: GenerateRequest[] = [];
  const provider = new ScriptedProvider((r) => {
    seen.push(r);
    return 'a plan';
  });
  const { graph } = parseWorkflow(yaml, { tools });
  const out = await runWorkflow(graph, { runId: asRunId('r1'), taskKey: '0', taskInput: { question: 'How many?' }, seed: 1, provider, tools, ...(hints ? { hints } : {}) });
  expect(out.status).toBe('completed');
  return { seen, calls: out.events.flatMap((e) => e.calls ?? []) };
}

describe('role instructions in the prompt', () => {
  it('without the slot they are the system text (the default layout, unchanged)', async () => {
    const { seen, calls } = await requestsOf(workflow('Question: {{question}}\nPlan:'));
    expect(seen.map((r) => [r.system, r.prompt])).toEqual([['Plan in two steps.', 'Question: How many?\nPlan:']]);
    expect(calls[0]!.system).toBe('Plan in two steps.');
  });

  it('{{instructions}} renders them where the template puts them, and no system text is sent or stored', async () => {
    const { seen, calls } = await requestsOf(workflow('Question: {{question}}\n{{instructions}}\nPlan:'));
    expect(seen.map((r) => [r.system, r.prompt])).toEqual([[undefined, 'Question: How many?\nPlan in two steps.\nPlan:']]);
    expect(calls[0]!.system).toBeUndefined();
    expect(calls[0]!.prompt).toBe('Question: How many?\nPlan in two steps.\nPlan:');
  });

  it('hint cards follow the instructions in the slot, unless the template has {{hints}}', async () => {
    const hints = () => '- add first';
    const inSlot = await requestsOf(workflow('Q: {{question}}\n{{instructions}}\nPlan:'), hints);
    expect(inSlot.seen[0]!.prompt).toBe('Q: How many?\nPlan in two steps.\n\nHints from earlier tasks:\n- add first\nPlan:');
    expect(inSlot.seen[0]!.system).toBeUndefined();
    const ownSlot = await requestsOf(workflow('{{hints}}|Q: {{question}}\n{{instructions}}'), hints);
    expect(ownSlot.seen[0]!.prompt).toBe('- add first|Q: How many?\nPlan in two steps.');
  });

  it('an input port named instructions wins over the slot: the port value is rendered and the system text stays', async () => {
    const { seen } = await requestsOf(workflow('{{instructions}}: {{question}}', '{ question: task.question, instructions: task.question }'));
    expect(seen.map((r) => [r.system, r.prompt])).toEqual([['Plan in two steps.', 'How many?: How many?']]);
  });

  it('the slot compiles without a port; an unknown name still does not', () => {
    expect(() => parseWorkflow(workflow('{{instructions}} {{question}}'), { tools })).not.toThrow();
    expect(() => parseWorkflow(workflow('{{instruction}} {{question}}'), { tools })).toThrow(/no input port "instruction"/);
  });
});
