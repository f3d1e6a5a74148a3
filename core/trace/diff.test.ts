import { describe, expect, it } from 'vitest';
import { modelCall } from '../../test/fixtures.ts';
import { asNodeId, asRoleName, asRunId, HUMAN } from '../ids.ts';
import { diffRuns, firstDifference, type DiffGraph } from './diff.ts';
import type { ModelCallRecord, NodeEvent } from './events.ts';

/** The gsm8k-team graph (examples/gsm8k-team.yaml): plan -> solve -> calculate -> verify -> answer, verify -> solve a loop. */
const TEAM: DiffGraph = {
  nodes: [{ id: 'plan' }, { id: 'solve' }, { id: 'calculate' }, { id: 'verify' }, { id: 'answer' }],
  edges: [
    { from: 'plan', to: 'solve' },
    { from: 'solve', to: 'calculate' },
    { from: 'solve', to: 'verify' },
    { from: 'calculate', to: 'verify' },
    { from: 'calculate', to: 'answer' },
    { from: 'verify', to: 'answer' },
    { from: 'verify', to: 'solve', maxIterations: 2 },
  ],
};

const ROLE: Record<string, string> = { plan: 'planner', solve: 'solver', verify: 'verifier', answer: 'answerer' };

/** One hand-built node run; agent nodes get one model call whose completion is `text`. */
function ev(runId: string, seq: number, nodeId: string, attempt: number, o: { inputs?: Record<string, unknown>; text?: string; output?: unknown; seed?: number; temperature?: number; status?: NodeEvent['status']; errorCode?: NodeEvent['errorCode']; message?: string; t0?: number } = {}): NodeEvent {
  const role = ROLE[nodeId];
  const t0 = o.t0 ?? 1_700_000_000_000 + seq * 10;
  const calls: ModelCallRecord[] = role
    ? [modelCall({ role: asRoleName(role), prompt: `${nodeId} prompt ${JSON.stringify(o.inputs ?? {})}`, completion: o.text ?? `${nodeId} says`, seed: o.seed ?? 42, params: { temperature: o.temperature ?? 0, maxTokens: 48 }, startedAt: t0, ms: 3 + seq })]
    : [];
  const status = o.status ?? 'ok';
  return {
    runId: asRunId(runId),
    nodeId: asNodeId(nodeId),
    attempt,
    seq,
    kind: role ? 'agent' : 'tool',
    ...(role ? { role: asRoleName(role), runBy: asRoleName(role) } : {}),
    wiredBy: HUMAN,
    inputs: o.inputs ?? {},
    ...(status === 'ok' ? { output: 'output' in o ? o.output : (o.text ?? `${nodeId} says`) } : {}),
    status,
    ...(status === 'failed' ? { failureClass: 'execution' as const, errorCode: o.errorCode ?? 'TOOL_ERROR', message: o.message ?? 'failed' } : {}),
    calls,
    startedAt: t0,
    endedAt: t0 + 5,
  };
}

/** A straight pass through the team (no loop): verify says `verdict`. */
function straight(runId: string, o: { seed?: number; plan?: string; verdict?: string; t0?: number } = {}): NodeEvent[] {
  const s = o.seed ?? 1;
  const t = (i: number) => (o.t0 === undefined ? undefined : o.t0 + i);
  return [
    ev(runId, 0, 'plan', 1, { inputs: { question: 'q' }, text: o.plan ?? 'add', seed: s, t0: t(0) }),
    ev(runId, 1, 'solve', 1, { inputs: { question: 'q', plan: o.plan ?? 'add' }, text: '{"expression":"2+2"}', output: { expression: '2+2' }, seed: s + 1, t0: t(1) }),
    ev(runId, 2, 'calculate', 1, { inputs: { expression: '2+2' }, output: { value: 4 }, t0: t(2) }),
    ev(runId, 3, 'verify', 1, { inputs: { value: 4 }, text: o.verdict ?? 'ok', output: { verdict: o.verdict ?? 'ok' }, seed: s + 2, t0: t(3) }),
    ev(runId, 4, 'answer', 1, { inputs: { value: 4, review: { verdict: o.verdict ?? 'ok' } }, text: '4', output: { answer: 4 }, seed: s + 3, t0: t(4) }),
  ];
}

const order = (d: ReturnType<typeof diffRuns>) => d.nodes.map((n) => `${n.nodeId}#${n.attempt}`);

describe('diffRuns on hand-built traces', () => {
  it('a run and its copy with other timings: the same, no divergence', () => {
    const d = diffRuns({ events: straight('a/0'), graph: TEAM }, { events: straight('b/0', { t0: 5 }), graph: TEAM });
    expect(d.same).toBe(true);
    expect(d.first).toBeUndefined();
    expect(d.firstBehaviour).toBeUndefined();
    expect(d.counts).toEqual({ nodes: 5, differing: 0, onlyA: 0, onlyB: 0 });
    expect(order(d)).toEqual(['plan#1', 'solve#1', 'calculate#1', 'verify#1', 'answer#1']);
    expect(d.nodes.map((n) => n.depth)).toEqual([0, 1, 2, 3, 4]);
  });

  it('other seeds, greedy decoding (same text): the first divergence is plan\'s seed, and the runs behaved the same', () => {
    const d = diffRuns({ events: straight('a/0', { seed: 1 }), graph: TEAM }, { events: straight('b/0', { seed: 100 }), graph: TEAM });
    expect(d.first).toEqual({ index: 0, nodeId: 'plan', attempt: 1, aspect: 'sampling', difference: { aspect: 'sampling', at: 'call 0 seed', a: '1', b: '100' } });
    expect(d.firstBehaviour).toBeUndefined();
    expect(d.same).toBe(false);
    // The tool node made no call: only the four agent nodes differ, each in its seed alone.
    expect(d.nodes.map((n) => n.differences.map((x) => x.at))).toEqual([['call 0 seed'], ['call 0 seed'], [], ['call 0 seed'], ['call 0 seed']]);
  });

  it('the planner sampled other text: plan#1 diverges first in its completion, solve then in its input', () => {
    const d = diffRuns({ events: straight('a/0', { plan: 'add two' }), graph: TEAM }, { events: straight('b/0', { plan: 'add three' }), graph: TEAM });
    expect(d.first).toMatchObject({ nodeId: 'plan', attempt: 1, aspect: 'completion', difference: { at: 'call 0 completion', a: 'add two', b: 'add three', offset: 5 } });
    expect(d.firstBehaviour).toEqual(d.first);
    expect(d.nodes[0]!.differences.map((x) => x.aspect)).toEqual(['completion', 'output']);
    expect(d.nodes[1]!.differences.map((x) => `${x.aspect}:${x.at}`)).toEqual(['input:input plan', 'prompt:call 0 prompt']);
    expect(d.nodes[1]!.differences[0]).toEqual({ aspect: 'input', at: 'input plan', a: '"add two"', b: '"add three"' });
  });

  it('a loop taken in one run only: the verifier\'s verdict is named first, not the solver\'s second attempt', () => {
    const a = straight('a/0');
    const b = [
      ...straight('b/0', { verdict: 'revise' }).slice(0, 4),
      ev('b/0', 4, 'solve', 2, { inputs: { question: 'q', plan: 'add', feedback: { verdict: 'revise' } }, text: '{"expression":"2*2"}', output: { expression: '2*2' }, seed: 9 }),
      ev('b/0', 5, 'calculate', 2, { inputs: { expression: '2*2' }, output: { value: 4 } }),
      ev('b/0', 6, 'verify', 2, { inputs: { value: 4 }, text: 'ok', output: { verdict: 'ok' }, seed: 3 }),
      ev('b/0', 7, 'answer', 1, { inputs: { value: 4, review: { verdict: 'ok' } }, text: '4', output: { answer: 4 }, seed: 4 }),
    ];
    const d = diffRuns({ events: a, graph: TEAM }, { events: b, graph: TEAM });
    // Depth in b: solve#2 reads verify#1 (3) -> 4; calculate#2 5; verify#2 6; answer#1 7 (4 in a, the smaller is kept).
    expect(order(d)).toEqual(['plan#1', 'solve#1', 'calculate#1', 'verify#1', 'solve#2', 'answer#1', 'calculate#2', 'verify#2']);
    expect(d.nodes.map((n) => n.depth)).toEqual([0, 1, 2, 3, 4, 4, 5, 6]);
    expect(d.first).toMatchObject({ index: 3, nodeId: 'verify', attempt: 1, aspect: 'completion', difference: { a: 'ok', b: 'revise', offset: 0 } });
    expect(d.nodes[3]!.differences.map((x) => x.at)).toEqual(['call 0 completion', 'output']);
    expect(d.nodes.filter((n) => n.in === 'b').map((n) => `${n.nodeId}#${n.attempt}`)).toEqual(['solve#2', 'calculate#2', 'verify#2']);
    expect(d.nodes[4]!.differences).toEqual([{ aspect: 'presence', at: 'ran', b: 'ok' }]);
    expect(d.counts).toEqual({ nodes: 8, differing: 4, onlyA: 0, onlyB: 3 });
    // answer#1 ran in both, on the same values: no difference.
    expect(d.nodes[5]!.differences).toEqual([]);
  });

  it('two designs: the design node diverges first; each design\'s nodes are present in one run only', () => {
    const ga: DiffGraph = { nodes: [{ id: 'design' }, { id: 'x' }, { id: 'y' }], edges: [{ from: 'design', to: 'x' }, { from: 'x', to: 'y' }] };
    const gb: DiffGraph = { nodes: [{ id: 'design' }, { id: 'x' }, { id: 'z' }], edges: [{ from: 'design', to: 'x' }, { from: 'x', to: 'z' }] };
    const design = (run: string, text: string) => ({ ...ev(run, 0, 'design', 1, { text: 'd', output: { text } }), kind: 'agent' as const, calls: [modelCall({ completion: text })] });
    const a = [design('a/0', 'x then y'), ev('a/0', 1, 'x', 1, { output: 1 }), ev('a/0', 2, 'y', 1, { output: 2 })];
    const b = [design('b/0', 'x then z'), ev('b/0', 1, 'x', 1, { output: 1 }), ev('b/0', 2, 'z', 1, { status: 'failed', errorCode: 'DANGLING_EDGE', message: 'dangling' })];
    const d = diffRuns({ events: a, graph: ga }, { events: b, graph: gb });
    expect(order(d)).toEqual(['design#1', 'x#1', 'y#1', 'z#1']);
    expect(d.first).toMatchObject({ nodeId: 'design', aspect: 'completion', difference: { at: 'call 0 completion', a: 'x then y', b: 'x then z', offset: 7 } });
    expect(d.nodes.map((n) => n.in)).toEqual(['both', 'both', 'a', 'b']);
    expect(d.nodes[3]!.differences).toEqual([{ aspect: 'presence', at: 'ran', b: 'failed' }]);
    expect(d.counts).toEqual({ nodes: 4, differing: 3, onlyA: 1, onlyB: 1 });
  });

  it('a tool that failed in one run on the same input: its result differs first, then its status and error', () => {
    const a = [ev('a/0', 0, 'calculate', 1, { inputs: { expression: '2/0' }, output: { value: 4 } })];
    const b = [ev('b/0', 0, 'calculate', 1, { inputs: { expression: '2/0' }, status: 'failed', errorCode: 'TOOL_ERROR', message: 'division by zero' })];
    const d = diffRuns({ events: a, graph: TEAM }, { events: b, graph: TEAM });
    expect(d.nodes[0]!.differences).toEqual([
      { aspect: 'output', at: 'output', a: '{"value":4}' },
      { aspect: 'status', at: 'status', a: 'ok', b: 'failed', offset: 0 },
      { aspect: 'status', at: 'failure class', b: 'execution' },
      { aspect: 'status', at: 'error code', b: 'TOOL_ERROR' },
      { aspect: 'status', at: 'message', b: 'division by zero' },
    ]);
    expect(d.first!.aspect).toBe('output');
  });

  it('two tasks: the first node differs in its input port, named', () => {
    const a = [ev('a/0', 0, 'plan', 1, { inputs: { question: 'What is 2+2?' } })];
    const b = [ev('b/0', 0, 'plan', 1, { inputs: { question: 'What is 3+3?' } })];
    const d = diffRuns({ events: a, graph: TEAM }, { events: b, graph: TEAM });
    expect(d.first).toMatchObject({ aspect: 'input', difference: { at: 'input question', a: '"What is 2+2?"', b: '"What is 3+3?"' } });
    // A port only one side has is named too.
    const c = [ev('c/0', 0, 'plan', 1, { inputs: { question: 'What is 2+2?', hint: null } })];
    expect(diffRuns({ events: a }, { events: c }).first!.difference).toEqual({ aspect: 'input', at: 'input hint', b: 'null' });
  });

  it('a node that made one more model call than the other: the missing call is a prompt difference', () => {
    const a = ev('a/0', 0, 'plan', 1);
    const b = { ...a, calls: [...a.calls, modelCall({ callIndex: 1, prompt: 'retry' })] };
    expect(diffRuns({ events: [a] }, { events: [b] }).nodes[0]!.differences).toEqual([{ aspect: 'prompt', at: 'call 1', b: 'retry' }]);
  });

  it('without a graph: completion order; independent branches are ordered by the graph\'s topological rank, then document order', () => {
    const noGraph = diffRuns({ events: straight('a/0').reverse() }, { events: straight('b/0') });
    expect(order(noGraph)).toEqual(['plan#1', 'solve#1', 'calculate#1', 'verify#1', 'answer#1']);
    const fork: DiffGraph = { nodes: [{ id: 'root' }, { id: 'right' }, { id: 'left' }], edges: [{ from: 'root', to: 'left' }, { from: 'root', to: 'right' }] };
    // left finished first in a, right first in b: both are at depth 1; document order puts right first.
    const a = [ev('a/0', 0, 'root', 1), ev('a/0', 1, 'left', 1), ev('a/0', 2, 'right', 1)];
    const b = [ev('b/0', 0, 'root', 1), ev('b/0', 1, 'right', 1), ev('b/0', 2, 'left', 1, { output: 'other' })];
    const d = diffRuns({ events: a, graph: fork }, { events: b, graph: fork });
    expect(order(d)).toEqual(['root#1', 'right#1', 'left#1']);
    expect(d.first).toMatchObject({ nodeId: 'left', aspect: 'output' });
  });

  it('graphs whose union has a cycle (x -> y in one, y -> x in the other) still order every node', () => {
    const g1: DiffGraph = { nodes: [{ id: 'x' }, { id: 'y' }], edges: [{ from: 'x', to: 'y' }] };
    const g2: DiffGraph = { nodes: [{ id: 'y' }, { id: 'x' }], edges: [{ from: 'y', to: 'x' }] };
    const d = diffRuns({ events: [ev('a', 0, 'x', 1), ev('a', 1, 'y', 1)], graph: g1 }, { events: [ev('b', 0, 'y', 1), ev('b', 1, 'x', 1)], graph: g2 });
    expect(order(d)).toEqual(['x#1', 'y#1']);
    expect(d.same).toBe(true);
  });

  it('firstDifference: the index of the first differing character', () => {
    expect([firstDifference('abc', 'abd'), firstDifference('ab', 'abc'), firstDifference('', 'x')]).toEqual([2, 2, 0]);
  });
});
