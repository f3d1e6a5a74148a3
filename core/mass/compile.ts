/**
 * A MASS design compiled into an ordinary Flowlab workflow document (graph notation, JSON text),
 * so a MASS run is a trace like any other: nodes, authorship, credit, ladder, replay.
 *
 * With a design (hop order fixed by `hops`, one node at a time):
 *   orchestrator (reads the task prompt + the design text; writes a short plan)
 *   -> h1_<agent> -> h2_<agent> ... (one node per hop, each a sub-agent run under its
 *      contract: a JSON schema of its fields and artefacts, plus its named checks; a hop with
 *      `redelegate` adds, per allowed re-delegation, a decision node and the re-delegated call,
 *      which runs only when the latest reply broke its contract: redelegate.ts)
 *   -> answer (the orchestrator again: reads every agent's latest reply and answers under the
 *      task's answer grammar; for a family with `answerFields`, the `mass_answer` tool assembles
 *      the answer from the replies' fields instead, answerTool.ts)
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
import { REDELEGATE_TOOL } from './redelegate.ts';
import { ANSWER_PORTS, ANSWER_TOOL } from './answerTool.ts';
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
  /** Node id of each hop, in order, with the agent it calls (a re-delegated call: with the hop it took over). */
  hopNodes: Array<{ nodeId: string; agent: string; redelegatedFrom?: string }>;
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
  const input: Record<string, unknown> = { ...task.input, mass_task: taskPrompt, mass_design: designText };
  const answerOut = { schema: family.answerSchemaOf ? family.answerSchemaOf(task) : family.answerSchema };
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
  // Each agent's latest reply: its last hop's node, and the re-delegated calls of that hop (at most one of them holds a reply).
  const latest = new Map<string, string[]>();
  const hopNodes: CompiledMass['hopNodes'] = [];
  const edges: unknown[] = [];
  const order: string[] = [];
  /** Optional input ports reading `nodes` (the first one named `port`, the others `port_<m>`), and the template showing each that holds a reply. */
  const readPorts = (inputs: Record<string, unknown>, port: string, from: readonly string[], show: (p: string) => string) =>
    from.map((node, m) => {
      const p = m === 0 ? port : `${port}_${m}`;
      inputs[p] = { from: node, optional: true };
      return show(p);
    }).join('');
  design.hops.forEach((h, j) => {
    const agent = design.agents.find((a) => a.agent_id === h.agent_id)!;
    const id = `h${j + 1}_${h.agent_id}`;
    const inputs: Record<string, unknown> = { brief: 'task.mass_task', plan: { from: 'orchestrator', optional: true } };
    let extra = '';
    const own = latest.get(h.agent_id);
    if (own) extra += readPorts(inputs, 'before', own, (p) => `{{#${p}}}Your last reply: {{${p}}}\n{{/${p}}}`);
    h.reads.forEach((r, k) => {
      extra += readPorts(inputs, `r${k}`, latest.get(r)!, (p) => `{{#${p}}}${r} said: {{${p}}}\n{{/${p}}}`);
    });
    const keys = [...agent.contract.fields, ...agent.contract.artefacts];
    const schema = { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, family.fieldSchemas?.[k] ?? { type: 'string', maxLength: budget.fieldChars }])), required: keys, additionalProperties: false };
    const task = h.scope ?? agent.instruction;
    nodes.push({
      id,
      role: h.agent_id,
      inputs,
      prompt: `{{brief}}\nOrchestrator: {{plan}}\n${extra}${task}\nReply as JSON:`,
      max_tokens: budget.replyTokens,
      temperature: budget.temperature,
      output: { schema, checks: agent.contract.checks },
    });
    order.push(id);
    hopNodes.push({ nodeId: id, agent: h.agent_id });
    const replies = [id];
    // Re-delegation (redelegate.ts): decision k reads the latest call; on `yes` the task goes to `to`, under this hop's contract.
    for (let k = 1; k <= (h.redelegate?.max ?? 0); k++) {
      const to = h.redelegate!.to;
      const gate = `${id}_g${k}`;
      const rd = `${id}_rd${k}_${to}`;
      nodes.push({ id: gate, kind: 'tool', tool: REDELEGATE_TOOL, inputs: { reply: { from: replies.at(-1)!, optional: true }, ...(k > 1 && { previous: { from: `${id}_g${k - 1}`, optional: true } }) } });
      nodes.push({
        id: rd,
        role: to,
        wired_by: [author, 'orchestrator'],
        inputs: { ...inputs },
        prompt: `{{brief}}\nOrchestrator: {{plan}}\n${extra}${h.agent_id} broke its contract; the orchestrator hands its task to you (${to}).\n${task}\nReply as JSON:`,
        max_tokens: budget.replyTokens,
        temperature: budget.temperature,
        output: { schema, checks: agent.contract.checks },
      });
      edges.push({ from: gate, to: rd, type: 'control', condition: 'redelegate == "yes"' });
      order.push(gate, rd);
      hopNodes.push({ nodeId: rd, agent: to, redelegatedFrom: id });
      replies.push(rd);
    }
    latest.set(h.agent_id, replies);
  });
  const answerInputs: Record<string, unknown> = { brief: 'task.mass_task' };
  let team = '';
  [...latest.entries()].forEach(([agent, from], k) => {
    team += readPorts(answerInputs, `a${k}`, from, (p) => `{{#${p}}}${agent}: {{${p}}}\n{{/${p}}}`);
  });
  if (family.answerFields) {
    // The family's answer is assembled from the replies' fields (answerTool.ts), every hop's reply in hop order.
    const ins: Record<string, unknown> = { fields: 'task.mass_answer_fields' };
    hopNodes.slice(0, ANSWER_PORTS).forEach((h, i) => void (ins[`x${i}`] = { from: h.nodeId, optional: true }));
    input.mass_answer_fields = [...family.answerFields];
    nodes.push({ id: 'answer', kind: 'tool', tool: ANSWER_TOOL, inputs: ins });
  } else nodes.push({ id: 'answer', role: 'orchestrator', inputs: answerInputs, prompt: `${team}{{brief}}`, max_tokens: budget.answerTokens, temperature: budget.temperature, output: answerOut });
  const gates = order.length - hopNodes.length;
  const doc = {
    name,
    description: 'MASS text workflow: orchestrator, sub-agents in hop order, orchestrator answers',
    ...(author !== 'human' ? { wired_by: author } : {}),
    roles,
    nodes,
    ...(edges.length ? { edges } : {}),
    hops: ['orchestrator', ...order, 'answer'],
    answer: 'answer',
    limits: { max_hops: hopNodes.length + gates + 4, concurrency: 1 },
  };
  return { workflowText: JSON.stringify(doc, null, 1), input, hopNodes };
}
