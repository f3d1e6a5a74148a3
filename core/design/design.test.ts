import { describe, expect, it } from 'vitest';
import { asRunId } from '../ids.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import type { RunnableTool } from '../engine/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { scoreRun } from '../pipeline/index.ts';
import { runGraph, runGraphOf, isDesignRecord, type DesignRecord } from './index.ts';
import { rolesThatRun } from '../workflow/index.ts';
import { learningRoles, parseMode } from '../rollouts/index.ts';
import { trainableRoles } from '../experiments/index.ts';

const weather: RunnableTool = {
  name: 'weather',
  inputs: { day: { type: 'string', enum: ['today', 'tomorrow'] } },
  output: { type: 'string' },
  run: ({ day }) => `weather:${String(day)}`,
};
const search: RunnableTool = {
  name: 'search',
  inputs: { kind: { type: 'string', enum: ['story', 'facts'] } },
  output: { type: 'string' },
  run: ({ kind }) => `search:${String(kind)}`,
};
const toolMap = new Map([[weather.name, weather], [search.name, search]]);
const tools = { get: (n: string) => toolMap.get(n), list: () => [...toolMap.values()] };

const WF = `
name: designed
roles:
  designer: { kind: generator }
  executor: { kind: executor }
skills:
  day_args: { prompt: "Day for: {{request}}", output: { schema: { enum: [today, tomorrow] } } }
  kind_args: { prompt: "Kind for: {{request}}", output: { schema: { enum: [story, facts] } } }
design:
  role: designer
  prompt: "{{catalogue}}\\nRequest: {{task.request}}\\nDesign:"
  max_tokens: 200
  catalogue: { tools: [weather, search], skills: [day_args, kind_args], roles: [executor], inputs: [request] }
  budget: { max_nodes: 3 }
`;

const graph = parseWorkflow(WF, { tools }).graph;
const step = {
  good: { steps: [{ id: 'a', skill: 'day_args', role: 'executor', inputs: { request: 'task.request' } }, { id: 'b', tool: 'weather', inputs: { day: 'a' } }] },
  mismatch: { steps: [{ id: 'a', skill: 'kind_args', role: 'executor', inputs: { request: 'task.request' } }, { id: 'b', tool: 'weather', inputs: { day: 'a' } }] },
  dangling: { steps: [{ id: 'a', skill: 'day_args', role: 'executor', inputs: { request: 'task.request' } }, { id: 'b', tool: 'weather', inputs: { day: 'c' } }] },
  selfLoop: { steps: [{ id: 'a', skill: 'day_args', role: 'executor', inputs: { request: 'a' } }, { id: 'b', tool: 'weather', inputs: { day: 'a' } }] },
  twoIds: { steps: [{ id: 'a', skill: 'day_args', role: 'executor', inputs: { request: 'task.request' } }, { id: 'a', tool: 'weather', inputs: { day: 'a' } }] },
};

/** The designer answers with `design`; the executor's skills answer `tomorrow` / `story`. */
function run(design: unknown) {
  const provider = new ScriptedProvider((req) => (req.role === 'designer' ? (typeof design === 'string' ? design : JSON.stringify(design)) : req.prompt.startsWith('Day') ? '"tomorrow"' : '"story"'));
  return runGraph(graph, { runId: asRunId('r/0'), taskKey: '0', taskInput: { request: 'Will it rain tomorrow?' }, seed: 3, provider, tools });
}
const recordOf = (events: Awaited<ReturnType<typeof run>>['events']) => events.find((e) => e.nodeId === 'design')!.output as DesignRecord;

describe('the design stage (core/design)', () => {
  it('compiles the stage: a design node run by the designer, wired by human, under a grammar from the catalogue', () => {
    const node = graph.nodes.find((n) => n.id === 'design')!;
    expect(graph.designNode).toBe('design');
    expect([node.role, node.wiredBy, node.kind]).toEqual(['designer', 'human', 'agent']);
    expect(node.prompt).toBe('Tools: weather(day), search(kind)\nSkills: day_args(request), kind_args(request)\nRoles: executor\nInputs: task.request\nRequest: {{task.request}}\nDesign:');
    type Variant = { properties: Record<string, { const?: string; enum?: string[]; properties?: Record<string, { enum?: string[] }> }> };
    const schema = node.contract!.schema as { properties: { steps: { maxItems: number; prefixItems: Array<{ oneOf: Variant[] }> } } };
    expect(schema.properties.steps.maxItems).toBe(3);
    // Step i has id a, b, c in turn; each may be any catalogue tool or skill, reading a task input or any step.
    const positions = schema.properties.steps.prefixItems;
    expect(positions.map((p) => p.oneOf[0]!.properties.id!.const)).toEqual(['a', 'b', 'c']);
    expect(positions[1]!.oneOf.map((v) => v.properties.tool?.const ?? v.properties.skill?.const)).toEqual(['weather', 'search', 'day_args', 'kind_args']);
    expect(positions[0]!.oneOf[0]!.properties.inputs!.properties!.day!.enum).toEqual(['task.request', 'a', 'b', 'c']);
  });

  it('runs a good design: designed nodes wired by the designer, run by the executor; the answer is the designed answer', async () => {
    const out = await run(step.good);
    expect(out.status).toBe('completed');
    expect(out.answer).toBe('weather:tomorrow');
    expect(out.events.map((e) => [e.nodeId, e.status, e.wiredBy, e.runBy ?? null, e.seq])).toEqual([
      ['design', 'ok', 'human', 'designer', 0],
      ['a', 'ok', 'designer', 'executor', 1],
      ['b', 'ok', 'designer', null, 2],
    ]);
    const rec = recordOf(out.events);
    expect(isDesignRecord(rec)).toBe(true);
    expect(rec.usable).toBe(true);
    expect(rec.issues).toEqual([]);
    expect(rec.text).toBe(JSON.stringify(step.good));
    expect(rec.graph!.nodes.map((n) => [n.id, n.wiredBy, n.inputs])).toEqual([['a', 'designer', [{ port: 'request', from: 'task.request' }]], ['b', 'designer', [{ port: 'day', from: 'a' }]]]);
    const { ladder, credit } = scoreRun(out.graph, out.events, { completed: true, score: 1, correct: true });
    // designer: ran 1 node (design), wired 2 (a, b): every rung passed.
    expect([ladder.designer!.format, ladder.designer!.validity, ladder.designer!.nodesRun, ladder.designer!.nodesWired, ladder.designer!.credit]).toEqual([1, 1, 1, 2, 0]);
    expect(credit.byRole.designer!.authored).toEqual(['design', 'a', 'b']);
  });

  it('a mismatched port is a wiring root failure blamed on the designer, located in the design; nothing downstream is blamed', async () => {
    const out = await run(step.mismatch);
    expect(out.status).toBe('failed');
    const b = out.events.find((e) => e.nodeId === 'b')!;
    expect([b.status, b.failureClass, b.errorCode]).toEqual(['failed', 'wiring', 'PORT_TYPE_MISMATCH']);
    expect(b.message).toBe('at steps[1].inputs.day: port "day" of tool "weather" accepts today|tomorrow, but a hands back story|facts (story, facts not accepted)');
    expect(recordOf(out.events).issues.map((i) => [i.code, i.nodeId, i.path.join('.')])).toEqual([['PORT_TYPE_MISMATCH', 'b', 'steps.1.inputs.day']]);
    const { credit, ladder } = scoreRun(out.graph, out.events, { completed: false, score: 0, correct: false });
    expect(credit.roots.map((r) => [r.nodeId, r.blamed])).toEqual([['b', 'designer']]);
    expect(credit.byRole.designer!.credit).toBeCloseTo(-1 / 3, 12);
    expect(credit.byRole.executor?.rootFailures ?? []).toEqual([]);
    // designer validity: design ok + a ok, b not = 2/3.
    expect(ladder.designer!.validity).toBeCloseTo(2 / 3, 12);
  });

  it('a dangling input is DANGLING_EDGE on its node; a self-loop is UNBOUNDED_CYCLE and its consumer cascades', async () => {
    const d = await run(step.dangling);
    expect(d.events.filter((e) => e.status !== 'ok').map((e) => [e.nodeId, e.errorCode])).toEqual([['b', 'DANGLING_EDGE']]);
    const s = await run(step.selfLoop);
    expect(s.events.filter((e) => e.status !== 'ok').map((e) => [e.nodeId, e.status, e.errorCode])).toEqual([['a', 'failed', 'UNBOUNDED_CYCLE'], ['b', 'cascade', 'UPSTREAM_FAILED']]);
    const { credit } = scoreRun(s.graph, s.events, { completed: false, score: 0, correct: false });
    expect(credit.roots.map((r) => [r.nodeId, r.failureClass, r.blamed])).toEqual([['a', 'wiring', 'designer']]);
    expect(credit.cascades.map((c) => c.nodeId)).toEqual(['b']);
  });

  it('an unusable design (an id used twice) is refused by the design node contract (prefixItems: step i has id i) as CONTRACT_VIOLATION, blamed on the designer, the record naming the duplicate', async () => {
    const out = await run(step.twoIds);
    expect(out.events.map((e) => [e.nodeId, e.status, e.failureClass, e.errorCode])).toEqual([['design', 'failed', 'execution', 'CONTRACT_VIOLATION']]);
    expect(recordOf(out.events).problem).toBe('at steps[1].id: duplicate node id "a" (first defined at steps[0])');
    expect(recordOf(out.events).issues).toEqual([{ code: 'DUPLICATE_ID', path: ['steps', 1, 'id'], message: 'duplicate node id "a" (first defined at steps[0])' }]);
    const { credit } = scoreRun(out.graph, out.events, { completed: false, score: 0, correct: false });
    expect(credit.roots.map((r) => [r.nodeId, r.blamed])).toEqual([['design', 'designer']]);
  });

  it('a design that is not JSON is UNPARSABLE_OUTPUT on the design node (format rung 0)', async () => {
    const out = await run('{"steps": [');
    expect(out.events.map((e) => [e.nodeId, e.errorCode])).toEqual([['design', 'UNPARSABLE_OUTPUT']]);
    const { ladder } = scoreRun(out.graph, out.events, { completed: false, score: 0, correct: false });
    expect([ladder.designer!.format, ladder.designer!.validity]).toEqual([0, 0]);
  });

  it('runGraphOf rebuilds the graph a stored run ran from its events alone', async () => {
    const out = await run(step.mismatch);
    const stored = JSON.parse(JSON.stringify(out.events));
    const g = runGraphOf(graph, stored, { tools });
    expect(g.nodes.map((n) => [n.id, n.wiredBy, n.wiringFault?.code ?? null])).toEqual([['design', 'human', null], ['a', 'designer', null], ['b', 'designer', 'PORT_TYPE_MISMATCH']]);
    expect(g.answer).toEqual({ node: 'b', field: undefined });
  });

  it('the designer and the catalogue roles are the roles that run: trainable, and upstream-downstream picks both', () => {
    expect(rolesThatRun(graph)).toEqual(['designer', 'executor']);
    expect(learningRoles(graph, parseMode('upstream-downstream'))).toEqual(['designer', 'executor']);
    expect(learningRoles(graph, parseMode('multi-agent'))).toEqual(['designer', 'executor']);
    expect(trainableRoles({ graph, text: WF }, ['designer', 'executor'])).toEqual(['designer', 'executor']);
  });

  it('a designer may write code or a state machine: the same compiler, located faults on their nodes', async () => {
    const codeWf = parseWorkflow(WF.replace('role: designer\n', 'role: designer\n  notation: code\n'), { tools }).graph;
    expect(codeWf.nodes[0]!.contract).toBeUndefined(); // code decodes as free text
    const code = (day: string) => `const a = skill('day_args', 'executor', { request: task.request });\nconst b = tool('weather', { ${day}: a });\nreturn b;`;
    const runCode = (text: string) => runGraph(codeWf, { runId: asRunId('r/1'), taskKey: '1', taskInput: { request: 'Rain?' }, seed: 3, tools,
      provider: new ScriptedProvider((req) => (req.role === 'designer' ? text : '"today"')) });
    const good = await runCode(code('day'));
    expect([good.status, good.answer]).toEqual(['completed', 'weather:today']);
    expect(good.events.map((e) => [e.nodeId, e.wiredBy])).toEqual([['design', 'human'], ['a', 'designer'], ['b', 'designer']]);
    const bad = await runCode(code('when'));
    const b = bad.events.find((e) => e.nodeId === 'b')!;
    // Two issues on b (the required port is not wired; an unknown one is): the node records the first, the record both.
    expect([b.errorCode, b.failureClass]).toEqual(['MISSING_PORT', 'wiring']);
    expect(recordOf(bad.events).issues.map((i) => [i.code, i.nodeId, i.path.join('.')])).toEqual([['MISSING_PORT', 'b', 'code.b.inputs'], ['UNKNOWN_PORT', 'b', 'code.b.inputs.when']]);
    const missing = await runCode(code('when').replace('{ when: a }', '{}'));
    expect(missing.events.find((e) => e.nodeId === 'b')!.errorCode).toBe('MISSING_PORT');
    const unparsable = await runCode('const a = (');
    expect(unparsable.events.map((e) => [e.nodeId, e.errorCode])).toEqual([['design', 'INVALID_DESIGN']]);

    const statesWf = parseWorkflow(WF.replace('role: designer\n', 'role: designer\n  notation: states\n'), { tools }).graph;
    const machine = { states: [{ id: 'a', skill: 'day_args', role: 'executor', inputs: { request: 'task.request' } }, { id: 'b', tool: 'weather', inputs: { day: 'a' } }], transitions: [{ from: 'a', to: 'b' }], start: 'a', terminal: ['b'] };
    const st = await runGraph(statesWf, { runId: asRunId('r/2'), taskKey: '2', taskInput: { request: 'Rain?' }, seed: 3, tools,
      provider: new ScriptedProvider((req) => (req.role === 'designer' ? JSON.stringify(machine) : '"tomorrow"')) });
    expect([st.status, st.answer]).toEqual(['completed', 'weather:tomorrow']);
  });
});
