/**
 * A MASS design compiled into an ordinary Flowlab workflow document (graph notation, JSON text),
 * so a MASS run is a trace like any other: nodes, authorship, credit, ladder, replay.
 *
 * With a design (hop order fixed by `hops`, one node at a time):
 *   orchestrator (reads the task prompt + the design text; writes a short plan)
 *   -> h1_<agent> -> h2_<agent> ... (one node per hop, each a sub-agent run under its
 *      contract: a JSON schema of its fields and artefacts, plus its named checks)
 *   -> answer (the orchestrator again: reads every agent's latest reply and answers under the
 *      task's answer grammar)
 * Sub-agent inputs are optional, so a reply that breaks its contract is recorded as that
 * agent's execution failure and later hops read null instead of failing in cascade.
 *
 * Without a design (the bare task): the orchestrator decides whether to delegate
 * (`{"delegate": "yes"|"no", "ask": ...}`); a `helper` sub-agent runs only on `yes` (a
 * conditional edge), and the answer node reads its reply when it ran. MASS's public code runs the
 * bare task as a single agent; here the orchestrator is free to delegate so delegation can be
 * counted (the outer loop's "unprompted delegation").
 *
 * Authorship: the nodes a design draws are wired by its author (`author`: `human` for a design a
 * person gave, `optimizer` for one the MASS optimizer wrote, which is then a role of the workflow
 * that runs no node), so structural credit and the trace say who designed the team.
 *
 * The task prompt and the design text reach the prompts as task fields (`mass_task`,
 * `mass_design`), so the stored task input holds both and a replay sends the same prompts.
 */
import type { Task } from '../tasks/types.ts';
import { renderMassDesign } from './design.ts';
import type { MassDesign, MassFamily } from './types.ts';

/** Token budgets of the compiled nodes (stories260K reads 512 tokens in all). */
export interface MassBudget {
  planTokens: number;
  replyTokens: number;
  answerTokens: number;
  /** Longest reply field, characters (schema `maxLength`). */
  fieldChars: number;
  /** Sampling temperature of every agent node (0 = greedy); the seed makes it reproducible. */
  temperature: number;
}

/** Defaults; stories260K's tokenizer spends about one token per character of JSON. */
export const MASS_BUDGET: MassBudget = { planTokens: 24, replyTokens: 48, answerTokens: 8, fieldChars: 40, temperature: 0.7 };

/** The compiled run: the workflow document as JSON text and the task input it runs on. */
export interface CompiledMass {
  workflowText: string;
  input: Record<string, unknown>;
  /** Node id of each hop, in order, with the agent it calls. */
  hopNodes: Array<{ nodeId: string; agent: string }>;
}

const orchestratorRole = (design: MassDesign | null) => ({
  kind: 'orchestrator',
  instructions: design?.orchestrator ? `${design.orchestrator.role}. ${design.orchestrator.instruction}` : 'You lead a team. Read the task, call your sub-agents, and give the final answer.',
});

/**
 * Compiles `design` (null: the bare task) for `task` of `family` into a workflow document (pure).
 * The document validates by construction for any design `parseMassDesign` accepted.
 */
export function compileMass(design: MassDesign | null, task: Task, family: MassFamily, budget: MassBudget = MASS_BUDGET, name = 'mass', author: 'human' | 'optimizer' = 'human'): CompiledMass {
  const taskPrompt = family.prompt(task);
  const designText = design ? renderMassDesign(design) : '';
  const input = { ...task.input, mass_task: taskPrompt, mass_design: designText };
  const answerOut = { schema: family.answerSchema };
  if (!design) {
    const doc = {
      name: `${name}-bare`,
      description: 'MASS bare task: the orchestrator alone, free to delegate to one helper',
      roles: { orchestrator: orchestratorRole(null), helper: { kind: 'executor', instructions: 'You help the orchestrator with the part it asks for.' } },
      nodes: [
        {
          id: 'orchestrator',
          role: 'orchestrator',
          inputs: { brief: 'task.mass_task' },
          prompt: '{{brief}}\nDelegate to a helper? JSON:',
          max_tokens: budget.planTokens,
          temperature: budget.temperature,
          output: { schema: { type: 'object', properties: { delegate: { enum: ['no', 'yes'] }, ask: { type: 'string', maxLength: budget.fieldChars } }, required: ['delegate', 'ask'], additionalProperties: false } },
        },
        {
          id: 'helper',
          role: 'helper',
          inputs: { brief: 'task.mass_task', ask: 'orchestrator.ask' },
          prompt: '{{brief}}\nAsked: {{ask}}\nReply:',
          max_tokens: budget.replyTokens,
          temperature: budget.temperature,
          stop: ['\n'],
        },
        {
          id: 'answer',
          role: 'orchestrator',
          inputs: { brief: 'task.mass_task', help: { from: 'helper', optional: true } },
          prompt: '{{#help}}Helper: {{help}}\n{{/help}}{{brief}}',
          max_tokens: budget.answerTokens,
          temperature: budget.temperature,
          output: answerOut,
        },
      ],
      edges: [{ from: 'orchestrator', to: 'helper', type: 'control', condition: 'delegate == "yes"' }],
      answer: 'answer',
      hops: ['orchestrator', 'helper', 'answer'],
      limits: { max_hops: 8, concurrency: 1 },
    };
    return { workflowText: JSON.stringify(doc, null, 1), input, hopNodes: [] };
  }

  const roles: Record<string, unknown> = { orchestrator: orchestratorRole(design) };
  if (author !== 'human') roles[author] = { kind: 'planner', instructions: 'Wrote this team design (the MASS optimizer); runs no node of it.' };
  for (const a of design.agents) roles[a.agent_id] = { kind: 'executor', instructions: `${a.role}. ${a.instruction}`, ...(a.model ? { model: a.model } : {}) };
  const nodes: unknown[] = [
    { id: 'orchestrator', role: 'orchestrator', inputs: { brief: 'task.mass_task', team: 'task.mass_design' }, prompt: '{{brief}}\n{{team}}\nPlan:', max_tokens: budget.planTokens, temperature: budget.temperature, stop: ['\n'] },
  ];
  const latest = new Map<string, string>();
  const hopNodes: CompiledMass['hopNodes'] = [];
  design.hops.forEach((h, j) => {
    const agent = design.agents.find((a) => a.agent_id === h.agent_id)!;
    const id = `h${j + 1}_${h.agent_id}`;
    const inputs: Record<string, unknown> = { brief: 'task.mass_task', plan: { from: 'orchestrator', optional: true } };
    let extra = '';
    const own = latest.get(h.agent_id);
    if (own) {
      inputs.before = { from: own, optional: true };
      extra += '{{#before}}Your last reply: {{before}}\n{{/before}}';
    }
    h.reads.forEach((r, k) => {
      const port = `r${k}`;
      inputs[port] = { from: latest.get(r)!, optional: true };
      extra += `{{#${port}}}${r} said: {{${port}}}\n{{/${port}}}`;
    });
    const keys = [...agent.contract.fields, ...agent.contract.artefacts];
    const schema = { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, { type: 'string', maxLength: budget.fieldChars }])), required: keys, additionalProperties: false };
    nodes.push({
      id,
      role: h.agent_id,
      inputs,
      prompt: `{{brief}}\nOrchestrator: {{plan}}\n${extra}${h.scope ?? agent.instruction}\nReply as JSON:`,
      max_tokens: budget.replyTokens,
      temperature: budget.temperature,
      output: { schema, checks: agent.contract.checks },
    });
    latest.set(h.agent_id, id);
    hopNodes.push({ nodeId: id, agent: h.agent_id });
  });
  const answerInputs: Record<string, unknown> = { brief: 'task.mass_task' };
  let team = '';
  [...latest.entries()].forEach(([agent, node], k) => {
    const port = `a${k}`;
    answerInputs[port] = { from: node, optional: true };
    team += `{{#${port}}}${agent}: {{${port}}}\n{{/${port}}}`;
  });
  nodes.push({ id: 'answer', role: 'orchestrator', inputs: answerInputs, prompt: `${team}{{brief}}`, max_tokens: budget.answerTokens, temperature: budget.temperature, output: answerOut });
  const doc = {
    name,
    description: 'MASS text workflow: orchestrator, sub-agents in hop order, orchestrator answers',
    ...(author !== 'human' ? { wired_by: author } : {}),
    roles,
    nodes,
    hops: ['orchestrator', ...hopNodes.map((h) => h.nodeId), 'answer'],
    answer: 'answer',
    limits: { max_hops: hopNodes.length + 4, concurrency: 1 },
  };
  return { workflowText: JSON.stringify(doc, null, 1), input, hopNodes };
}
