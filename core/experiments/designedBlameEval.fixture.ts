/**
 * Test helpers (not production code): a small designed workflow with two tools and two skills, a
 * SIMULATED designer (a scripted reply that always writes the correct design for the request) and
 * scripted executor skills, a dataset of three request families, and the must-show fault mix of
 * SIMULATED wiring faults in designs and execution faults in executor outputs.
 */
import type { RunnableTool } from '../engine/index.ts';
import type { ServiceDeps } from './spec.ts';
import { ScriptedProvider, type Script } from '../model/scripted.ts';
import type { ModelConfig, ModelPort } from '../model/config.ts';
import { openStore } from '../store/index.ts';
import type { Dataset } from '../tasks/types.ts';
import { parseWorkflow } from '../workflow/load.ts';
import type { DesignStage } from '../workflow/index.ts';

export const weather: RunnableTool = { name: 'weather', inputs: { day: { type: 'string', enum: ['today', 'tomorrow'] } }, output: { type: 'string' }, run: ({ day }) => `weather:${String(day)}` };
export const search: RunnableTool = { name: 'search', inputs: { kind: { type: 'string', enum: ['story', 'facts'] } }, output: { type: 'string' }, run: ({ kind }) => `search:${String(kind)}` };
const toolMap = new Map([[weather.name, weather], [search.name, search]]);
export const tools = { get: (n: string) => toolMap.get(n), list: () => [...toolMap.values()] };

/** A designed workflow: the designer wires skills and tools; a fixed `report` node reads the designed answer. */
export const WF = `
name: designed-faults
roles:
  designer: { kind: generator }
  executor: { kind: executor }
skills:
  day_args: { prompt: "Day for: {{request}}", output: { schema: { enum: [today, tomorrow] } } }
  kind_args: { prompt: "Kind for: {{request}}", output: { schema: { enum: [story, facts] } } }
design:
  role: designer
  prompt: "{{catalogue}}\\nRequest: {{task.request}}\\nDesign:"
  max_tokens: 256
  catalogue: { tools: [weather, search], skills: [day_args, kind_args], roles: [executor], inputs: [request] }
  budget: { max_nodes: 4 }
steps:
  - id: report
    role: executor
    prompt: "Report: {{result}}"
    inputs: { result: design }
    output: { schema: { type: object, properties: { summary: { type: string } }, required: [summary] } }
answer: report.summary
`;
export const { graph } = parseWorkflow(WF, { tools });
export const stage = graph.nodes.find((n) => n.id === 'design')!.design as DesignStage;

export const skill = (id: string, name: string, from: string) => ({ id, skill: name, role: 'executor', inputs: { request: from } });
/** The correct design for each request family (what the SIMULATED designer always writes). */
export const DESIGNS = {
  weather: { steps: [skill('a', 'day_args', 'task.request'), { id: 'b', tool: 'weather', inputs: { day: 'a' } }] },
  story: { steps: [skill('a', 'kind_args', 'task.request')] },
  both: { steps: [skill('a', 'day_args', 'task.request'), { id: 'b', tool: 'weather', inputs: { day: 'a' } }, skill('c', 'kind_args', 'b'), { id: 'd', tool: 'search', inputs: { kind: 'c' } }] },
};
export const familyOf = (request: string) => (request.startsWith('Weather then') ? 'both' : request.startsWith('Will it rain') ? 'weather' : 'story');
export const EXPECTED = { weather: 'weather:tomorrow', story: 'story', both: 'search:story' };

/** The SIMULATED designer writes the correct design; the executor's skills and report answer right. */
export const script: Script = (req) => {
  if (req.role === 'designer') return JSON.stringify(DESIGNS[familyOf(/Request: (.*)\n/.exec(req.prompt)![1]!)]);
  if (req.prompt.startsWith('Day for')) return '"tomorrow"';
  if (req.prompt.startsWith('Kind for')) return '"story"';
  return JSON.stringify({ summary: req.prompt.slice('Report: '.length) });
};

export const REQUESTS = ['Will it rain tomorrow?', 'Tell me a story', 'Weather then a story'];
export const dataset: Dataset = {
  name: 'designed',
  splits: ['test'],
  grader: { grade: (a, t) => ({ score: a === t.expected ? 1 : 0, correct: a === t.expected, extracted: String(a), expected: t.expected }) },
  load: ({ limit, offset = 0 }) => Array.from({ length: 60 }, (_, i) => {
    const request = `${REQUESTS[i % 3]} (#${i})`;
    return { id: `designed/test/${i}`, index: i, input: { request }, expected: EXPECTED[familyOf(request)] };
  }).slice(offset, offset + (limit ?? 60)),
};
export const MODELS: ModelConfig = { models: { default: '/m/sim.gguf' }, roleModels: { designer: 'default', executor: 'default' }, gpu: false };
export const INJECT = [
  'designer=dangling_edge@0.3', 'designer=unknown_tool@0.2', 'designer=missing_port@0.2', 'designer=unbounded_loop@0.2', 'designer=malformed@0.1',
  'executor=contract@0.3', 'executor=malformed@0.2',
];


/**
 * A blame evaluation of 40 runs of the designed workflow with the must-show fault mix (INJECT,
 * seed 17), through the real experiment service on an in-memory store with the SIMULATED models.
 */
export function designedBlameEval() {
  const store = openStore(':memory:');
  const port: ModelPort = { create: async () => new ScriptedProvider(script) };
  const deps: ServiceDeps = { store, models: port, tools, datasets: () => dataset };
  const spec = { kind: 'blame-eval' as const, workflow: { graph, text: WF }, dataset: 'designed', split: 'test', limit: 40, seed: 17, models: MODELS, inject: INJECT };
  return { store, deps, spec };
}
