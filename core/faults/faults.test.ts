import { describe, expect, it } from 'vitest';
import { asRunId, type NodeId, type RoleName } from '../ids.ts';
import { computeCredit, creditGraphOf } from '../blame/credit/index.ts';
import { runWorkflow } from '../engine/index.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { defaultTools } from '../tools/index.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { scoreBlame } from '../blame/index.ts';
import { FaultInjector, parseFaultSpec, type FaultKind } from './index.ts';

const yaml = `
name: f
roles: { planner: { kind: planner }, solver: { kind: executor }, answerer: { kind: answerer } }
nodes:
  - { id: plan, role: planner, prompt: p, output: { schema: { type: object, properties: { steps: { type: string } }, required: [steps] } } }
  - id: solve
    role: solver
    prompt: "{{plan}}"
    inputs: { plan: plan }
    output: { schema: { type: object, properties: { expression: { type: string }, note: { type: string } }, required: [expression] } }
  - { id: calc, tool: calculator, role: solver, inputs: { expression: solve.expression } }
  - { id: answer, role: answerer, prompt: "{{v}}", inputs: { v: calc.value }, output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } } }
`;
const tools = defaultTools();
const solve_output = (out: { events: Array<{ nodeId: string; output?: unknown }> }) => out.events.find((e) => e.nodeId === 'solve')!.output;
const { graph } = parseWorkflow(yaml, { tools });
const script = (r: { prompt: string; jsonSchema?: unknown }) => {
  const props = Object.keys((r.jsonSchema as { properties: object }).properties);
  if (props.includes('steps')) return '{"steps": "add"}';
  if (props.includes('expression')) return '{"expression": "2+3", "note": "sum"}';
  return '{"answer": 5}';
};

async function runWith(kind: FaultKind, target: { role?: string; node?: string }, taskKey = '0') {
  const injector = new FaultInjector([{ role: target.role as RoleName, node: target.node as NodeId, kind, rate: 1 }], 1, (id) => graph.nodes.find((n) => n.id === id)?.role);
  const out = await runWorkflow(graph, {
    runId: asRunId('r'), taskKey, taskInput: {}, seed: 1, provider: injector.wrapProvider(new ScriptedProvider(script)), tools: injector.wrapTools(tools),
  });
  for (const e of out.events) {
    const k = injector.faultAt(taskKey, e.nodeId, e.attempt);
    if (k) { e.simulated = true; e.fault = k; }
  }
  return { out, injector, credit: computeCredit(creditGraphOf(graph), out.events, { correct: out.answer === 5 }) };
}

describe('fault injection (simulated)', () => {
  it('parses role=kind@rate and node:<id>=kind, and rejects bad specs', () => {
    expect(parseFaultSpec('solver=contract@0.5')).toEqual({ role: 'solver', kind: 'contract', rate: 0.5 });
    expect(parseFaultSpec('node:calc=error')).toEqual({ node: 'calc', kind: 'error', rate: 1 });
    expect(() => parseFaultSpec('solver=explode@1')).toThrow(/unknown kind "explode"/);
    expect(() => parseFaultSpec('solver=error@2')).toThrow(/rate must be between 0 and 1/);
    expect(() => parseFaultSpec('solver')).toThrow(/expected role=kind@rate/);
  });

  const cases: Array<[FaultKind, string, string | null]> = [
    ['malformed', 'UNPARSABLE_OUTPUT', 'solver'],
    ['contract', 'CONTRACT_VIOLATION', 'solver'],
    ['error', 'AGENT_ERROR', 'solver'],
    ['timeout', 'TIMEOUT', 'solver'],
    ['wrong', '', null],
    ['dropped', '', null],
  ];
  for (const [kind, code, blamed] of cases) {
    it(`${kind} on the solver: ${code || 'no node fails'}${blamed ? `, blamed on ${blamed}` : ', structure cannot see it at the solver'}`, async () => {
      const { out, injector, credit } = await runWith(kind, { node: 'solve' });
      expect(injector.injected()).toEqual([{ taskKey: '0', nodeId: 'solve', attempt: 1, role: 'solver', kind, simulated: true }]);
      if (kind === 'dropped') expect(solve_output(out)).toEqual({ expression: '2+3' });
      const solve = out.events.find((e) => e.nodeId === 'solve')!;
      expect(solve.simulated).toBe(true);
      expect(solve.fault).toBe(kind);
      if (blamed) {
        expect(solve).toMatchObject({ status: 'failed', failureClass: 'execution', errorCode: code });
        expect(solve.message).toMatch(/simulated|output|check|violates|JSON/);
        expect(credit.roots.map((r) => [r.nodeId, r.blamed])).toEqual([['solve', blamed]]);
      } else {
        expect(solve.status).toBe('ok');
        expect(credit.roots.some((r) => r.nodeId === 'solve')).toBe(false);
      }
    });
  }

  it('wrong on the solver gives a well-formed wrong expression; downstream runs and the run is silent', async () => {
    const { out, credit } = await runWith('wrong', { node: 'solve' });
    expect(out.events.find((e) => e.nodeId === 'solve')!.output).toEqual({ expression: 'x', note: 'x' });
    // The calculator then fails on "x": a root at calc (the solver's tool call), not at solve.
    expect(credit.roots.map((r) => [r.nodeId, r.errorCode, r.blamed])).toEqual([['calc', 'TOOL_ERROR', 'solver']]);
  });

  it('tool faults: error and wrong on the calculator node', async () => {
    const err = await runWith('error', { node: 'calc' });
    expect(err.out.events.find((e) => e.nodeId === 'calc')).toMatchObject({ status: 'failed', errorCode: 'TOOL_ERROR', simulated: true, fault: 'error' });
    const wrong = await runWith('wrong', { node: 'calc' });
    expect(wrong.out.events.find((e) => e.nodeId === 'calc')!.output).toEqual({ value: 6, expression: '2+3' });
    expect(wrong.credit.silent).toBe(true); // answer 5 expected, clean run, structure blind
  });

  it('the rate and seed decide deterministically which runs receive a fault', () => {
    const a = new FaultInjector([{ role: 'solver' as RoleName, kind: 'error', rate: 0.5 }], 7);
    const b = new FaultInjector([{ role: 'solver' as RoleName, kind: 'error', rate: 0.5 }], 7);
    const pa = a.wrapProvider(new ScriptedProvider(() => 'x'));
    const pb = b.wrapProvider(new ScriptedProvider(() => 'x'));
    const req = (k: number) => ({ role: 'solver' as RoleName, model: 'm', prompt: 'p', params: { temperature: 0, maxTokens: 4 }, seed: 1, key: { taskKey: String(k), nodeId: 'solve', attempt: 1, callIndex: 0 } });
    return Promise.all(Array.from({ length: 200 }, (_, k) => Promise.allSettled([pa.generate(req(k)), pb.generate(req(k))]))).then(() => {
      expect(a.injected()).toEqual(b.injected());
      expect(a.injected().length).toBeGreaterThan(70);
      expect(a.injected().length).toBeLessThan(130);
    });
  });
});

describe('scoreBlame', () => {
  it('precision, recall, unseen faults, cascades and natural failures on worked runs', async () => {
    const runs = [];
    for (const [i, kind] of (['contract', 'error', 'wrong', 'dropped'] as FaultKind[]).entries()) {
      const { out, credit } = await runWith(kind, { node: 'solve' }, String(i));
      runs.push({ graph: creditGraphOf(graph), events: out.events, credit });
    }
    // A run with a natural failure (no injection): the planner's output breaks its schema.
    const natural = await runWorkflow(graph, { runId: asRunId('n'), taskKey: 'n', taskInput: {}, seed: 1, provider: new ScriptedProvider(() => 'not json'), tools });
    runs.push({ graph: creditGraphOf(graph), events: natural.events, credit: computeCredit(creditGraphOf(graph), natural.events) });
    const b = scoreBlame(runs);
    expect(b.runs).toBe(5);
    // contract and error surfaced at solve and were blamed on the solver. wrong made calc fail on
    // "x": calc carries no fault and nothing failed above it, so that root counts as natural.
    expect(b.byKind.contract).toEqual({ precision: 1, recall: 1, injected: 1, surfaced: 1 });
    expect(b.byKind.error).toEqual({ precision: 1, recall: 1, injected: 1, surfaced: 1 });
    expect(b.byKind.wrong).toEqual({ precision: null, recall: 0, injected: 1, surfaced: 0 });
    expect(b.byKind.dropped).toEqual({ precision: null, recall: 0, injected: 1, surfaced: 0 });
    expect(b.byRole.solver).toEqual({ precision: 1, recall: 0.5, injected: 4, blamed: 2 });
    expect(b.unseen).toBe(2);
    expect(b.unseenShare).toBe(0.5);
    // Below each surfaced fault: calc and answer cascade (2 per run, 2 runs), none blamed.
    expect([b.cascadesNotBlamed, b.cascadesTotal]).toEqual([4, 4]);
    // Natural: calc's TOOL_ERROR on "x" (the wrong run: nothing failed above calc) and the planner's broken JSON.
    expect(b.natural.roots).toBe(2);
    expect(b.natural.byRole).toEqual({ solver: 1, planner: 1 });
  });

  it('an injected tool fault in a role-less tool that runs one agent\'s argument is that author\'s (argumentFrom)', () => {
    const cg = {
      nodes: [{ id: 'w' as NodeId, wiredBy: ['human' as RoleName], runBy: 'writer' as RoleName }, { id: 't' as NodeId, wiredBy: ['human' as RoleName], argumentFrom: 'w' as NodeId }],
      edges: [{ from: 'w' as NodeId, to: 't' as NodeId }],
    };
    const base = { runId: asRunId('r'), seq: 0, wiredBy: 'human' as RoleName, inputs: {}, calls: [], startedAt: 0, endedAt: 0, attempt: 1 };
    const events = [
      { ...base, nodeId: 'w' as NodeId, kind: 'agent' as const, role: 'writer' as RoleName, runBy: 'writer' as RoleName, status: 'ok' as const },
      { ...base, seq: 1, nodeId: 't' as NodeId, kind: 'tool' as const, status: 'failed' as const, failureClass: 'execution' as const, errorCode: 'TOOL_ERROR' as const, simulated: true, fault: 'error' },
    ];
    const credit = computeCredit(cg, events);
    expect(credit.roots.map((r) => [r.nodeId, r.blamed])).toEqual([['t', 'writer']]);
    const b = scoreBlame([{ graph: cg, events, credit }]);
    expect(b.byRole.writer).toEqual({ precision: 1, recall: 1, injected: 1, blamed: 1 });
  });
});

