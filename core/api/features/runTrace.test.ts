import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newExperiment, nodeEvents, runRecord } from '../../../test/fixtures.ts';
import { computeWorkflowHash, openStore, type Store } from '../../store/index.ts';
import { defaultTools } from '../../tools/index.ts';
import { parseWorkflow } from '../../workflow/index.ts';
import { DANGLING_PATH, DESIGNED_YAML, DESIGNS, seedDesignedExperiment } from '../designedRun.fixture.ts';
import { createHandlers, type FlowlabApi } from '../index.ts';
import { runTraceParts } from './runTrace.ts';

let store: Store;
let api: FlowlabApi;
let exp: string;

beforeEach(async () => {
  store = openStore(':memory:');
  exp = await seedDesignedExperiment(store);
  api = createHandlers({ store, version: 'test' });
});
afterEach(() => store.close());

const runId = (i: number) => api.listRuns({ experimentId: exp })[i]!.runId;

describe('getRunTrace of a designed run (scripted, SIMULATED designer)', () => {
  it('returns the graph the run ran: the design node plus the designed nodes, with their authors', () => {
    const t = api.getRunTrace({ runId: runId(0) });
    expect(t.graphProblem).toBeUndefined();
    expect(t.graph!.design).toEqual({ nodeId: 'design', role: 'designer' });
    expect(t.graph!.nodes.map((n) => [n.id, n.kind, n.origin, n.wiredBy, n.runBy ?? null, n.wiringFault?.code ?? null])).toEqual([
      ['design', 'agent', 'design', 'human', 'designer', null],
      ['a', 'skill', 'designed', 'designer', 'executor', null],
      ['b', 'tool', 'designed', 'designer', null, 'DANGLING_EDGE'],
    ]);
    expect(t.graph!.nodes[2]!.path).toEqual(['steps', 1]);
    expect(t.graph!.answer).toBe('b');
    // The dangling input draws no edge; the stored events say the same about b.
    expect(t.graph!.edges).toEqual([]);
    const b = t.events.find((e) => e.nodeId === 'b')!;
    expect([b.status, b.failureClass, b.errorCode, b.wiredBy]).toEqual(['failed', 'wiring', 'DANGLING_EDGE', 'designer']);
    expect(t.run.credit!.roots.map((r) => [r.nodeId, r.blamed])).toEqual([['b', 'designer']]);
  });

  it('returns the design record: text, notation, the located issue with its node, usable', () => {
    const d = api.getRunTrace({ runId: runId(0) }).design!;
    expect([d.nodeId, d.designer, d.attempt, d.notation, d.usable, d.problem ?? null, d.fault ?? null]).toEqual(['design', 'designer', 1, 'steps', true, null, null]);
    expect(d.text).toBe(JSON.stringify(DESIGNS[0]));
    expect(d.document).toEqual(DESIGNS[0]);
    expect(d.issues).toHaveLength(1);
    expect(d.issues[0]).toMatchObject({ code: 'DANGLING_EDGE', path: DANGLING_PATH, nodeId: 'b' });
    expect(d.issues[0]!.message).toMatch(/"c"/);
  });

  it('a good design: the data edge a -> b, no issues, the answer 4', () => {
    const t = api.getRunTrace({ runId: runId(1) });
    expect(t.run.correct).toBe(true);
    expect(t.graph!.edges.map((e) => [e.id, e.from, e.to, e.type, e.port])).toEqual([['0:a->b', 'a', 'b', 'data', 'expression']]);
    expect(t.design!.issues).toEqual([]);
    expect(t.design!.usable).toBe(true);
  });

  it('an unusable design: the record says why, no designed node is drawn', () => {
    const t = api.getRunTrace({ runId: runId(2) });
    expect(t.graph!.nodes.map((n) => n.id)).toEqual(['design']);
    expect(t.design!.usable).toBe(false);
    expect(t.design!.problem).toBe('at steps[1].id: duplicate node id "a" (first defined at steps[0])');
    expect(t.design!.issues.map((i) => [i.code, i.path, i.nodeId ?? null])).toEqual([['DUPLICATE_ID', ['steps', 1, 'id'], null]]);
    expect(t.events.map((e) => [e.nodeId, e.errorCode])).toEqual([['design', 'CONTRACT_VIOLATION']]);
  });

  it('a design that does not parse: the completion as written, no document, the design node failed UNPARSABLE_OUTPUT', () => {
    const t = api.getRunTrace({ runId: runId(3) });
    expect(t.events.map((e) => [e.nodeId, e.failureClass, e.errorCode])).toEqual([['design', 'execution', 'UNPARSABLE_OUTPUT']]);
    expect(t.design!.text).toBe(DESIGNS[3]);
    expect(t.design!.document).toBeUndefined();
    expect(t.design!.usable).toBe(false);
    expect(t.design!.problem).toBe(t.events[0]!.message);
    expect(t.design!.problem).toMatch(/\S/);
    expect(t.run.credit!.roots.map((r) => [r.nodeId, r.blamed])).toEqual([['design', 'designer']]);
  });

  it('a malformed stored design output is reported as designProblem, not thrown', () => {
    const { graph } = parseWorkflow(DESIGNED_YAML, { tools: defaultTools() });
    const events = store.getRunEvents(runId(1)).map((e) => (e.nodeId === 'design' ? { ...e, output: { text: 5 } } : e));
    const parts = runTraceParts(graph, events, defaultTools());
    expect(parts.design).toBeUndefined();
    expect(parts.designProblem).toBe('the output of design node "design" (attempt 1) is not a design record: notation: Invalid option: expected one of "steps"|"graph"|"states"|"code"');
    // Without a record the graph is the workflow's own: the design node alone.
    expect(parts.graph!.nodes.map((n) => n.id)).toEqual(['design']);
  });

  it('a stored workflow that no longer compiles gives graphProblem and no graph', () => {
    const yaml = DESIGNED_YAML.replace('tools: [calculator]', 'tools: [forecast]');
    const e2 = store.createExperiment(newExperiment({ workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml) }));
    const r = runRecord(e2.id, 0);
    store.saveRun(r, nodeEvents(r));
    const t = api.getRunTrace({ runId: r.runId });
    expect(t.events).toHaveLength(2);
    expect(t.graph).toBeUndefined();
    expect(t.graphProblem).toMatch(/^the stored workflow does not compile with this host's tools: .*catalogue tool "forecast" is not a known tool/);
  });

  it('a hand-written workflow: every node from the workflow, wired by human, no design', () => {
    const text = readFileSync(new URL('../../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');
    const parts = runTraceParts(parseWorkflow(text, { tools: defaultTools() }).graph, [], defaultTools());
    expect(parts.graph!.nodes.map((n) => [n.id, n.origin, n.wiredBy, n.runBy ?? null])).toEqual([
      ['plan', 'workflow', 'human', 'planner'],
      ['solve', 'workflow', 'human', 'solver'],
      ['calculate', 'workflow', 'human', null],
      ['verify', 'workflow', 'human', 'verifier'],
      ['answer', 'workflow', 'human', 'answerer'],
    ]);
    expect(parts.graph!.design).toBeUndefined();
    expect(parts.graph!.edges.some((e) => e.maxIterations === 2)).toBe(true);
    expect(parts.design).toBeUndefined();
  });
});
