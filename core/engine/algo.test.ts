import { describe, expect, it } from 'vitest';
import { asNodeId, asRunId, type NodeId } from '../ids.ts';
import { parseWorkflow } from '../workflow/load.ts';
import {
  admitRun,
  decideNode,
  edgeInput,
  finishNode,
  initialRunState,
  isReady,
  loopToTake,
  nodeEvent,
  reenterLoop,
  reentrySet,
  runAnswer,
  settleRun,
  startRun,
  tokenTotals,
  topologyOf,
  type RunState,
  type Topology,
} from './algo.ts';

const tools = { get: () => undefined };
const graphOf = (yaml: string) => parseWorkflow(yaml, { tools }).graph;
const id = asNodeId;

/** a -> b, a -> c, b.x -> d, c -> d (d's `c` port optional when asked). */
const diamond = (opts: { optionalC?: boolean; condition?: string } = {}) => graphOf(`
name: diamond
roles: { r: { kind: executor } }
nodes:
  - { id: a, role: r, inputs: { q: task.question } }
  - { id: b, role: r, inputs: { a: a } }
  - { id: c, role: r }
  - { id: d, role: r, inputs: { b: b.x, c: { from: c, optional: ${opts.optionalC ?? false} } } }
edges:
  - { from: a, to: c, type: control${opts.condition ? `, condition: '${opts.condition}'` : ''} }
`);

/** a -> b, and b -> a back while b says revise, at most twice. */
const loop = graphOf(`
name: loop
roles: { r: { kind: executor } }
nodes:
  - { id: a, role: r, prompt: "{{#fb}}{{fb}}{{/fb}}" }
  - { id: b, role: r, inputs: { a: a } }
edges:
  - { from: b, to: a, port: fb, max_iterations: 2, condition: 'verdict == "revise"' }
`);

const ready = (topo: Topology, state: RunState) => topo.order.filter((n) => isReady(topo, state, n));

describe('readiness and input gathering on a diamond', () => {
  it('splits edges into forward in/out and loop out, in document order', () => {
    const topo = topologyOf(diamond());
    expect(topo.order).toEqual(['a', 'b', 'c', 'd']);
    expect(topo.forwardIn.get(id('d'))!.map((e) => [e.from, e.port])).toEqual([['b', 'b'], ['c', 'c']]);
    expect(topo.forwardOut.get(id('a'))!.map((e) => [e.to, e.type])).toEqual([['c', 'control'], ['b', 'data']]);
    expect([...topo.loopOut.values()].flat()).toEqual([]);
  });

  it('a node is ready once every forward predecessor is done', () => {
    const g = diamond();
    const topo = topologyOf(g);
    const state = initialRunState(g);
    expect(ready(topo, state)).toEqual(['a']);
    startRun(state, id('a'));
    expect(ready(topo, state)).toEqual([]);
    finishNode(state, id('a'), 'ok', 'A');
    expect(ready(topo, state)).toEqual(['b', 'c']);
    finishNode(state, id('b'), 'ok', { x: 1 });
    expect(ready(topo, state)).toEqual(['c']);
    finishNode(state, id('c'), 'ok', 'C');
    expect(ready(topo, state)).toEqual(['d']);
  });

  it('gathers inputs from the task and from upstream outputs and their fields', () => {
    const g = diamond();
    const topo = topologyOf(g);
    const state = initialRunState(g);
    expect(decideNode(topo, state, id('a'), { question: 'q?' })).toEqual({ action: 'run', inputs: { q: 'q?' } });
    finishNode(state, id('a'), 'ok', 'A');
    expect(decideNode(topo, state, id('b'), {})).toEqual({ action: 'run', inputs: { a: 'A' } });
    finishNode(state, id('b'), 'ok', { x: [1, 2] });
    finishNode(state, id('c'), 'ok', 'C');
    expect(decideNode(topo, state, id('d'), {})).toEqual({ action: 'run', inputs: { b: [1, 2], c: 'C' } });
  });

  it('a missing task field or output field on a required port is a wiring failure of the node', () => {
    const g = diamond();
    const topo = topologyOf(g);
    const state = initialRunState(g);
    const noTask = decideNode(topo, state, id('a'), { other: 1 });
    expect(noTask.action === 'wiring' && [noTask.failure.code, noTask.failure.failureClass, noTask.failure.message]).toEqual(['MISSING_INPUT', 'wiring', 'input "q" reads task.question, which this task does not have (task fields: other)']);
    finishNode(state, id('b'), 'ok', { y: 1 });
    finishNode(state, id('c'), 'ok', 'C');
    const noField = decideNode(topo, state, id('d'), {});
    expect(noField.action === 'wiring' && noField.failure.code).toBe('MISSING_FIELD');
    expect(noField.action === 'wiring' && noField.inputs).toEqual({});
  });
});

describe('cascade and skip decisions', () => {
  it('a required input from a failed or cascaded node cascades, naming each cause once', () => {
    const g = diamond();
    const topo = topologyOf(g);
    const state = initialRunState(g);
    finishNode(state, id('b'), 'failed');
    finishNode(state, id('c'), 'ok', 'C');
    expect(decideNode(topo, state, id('d'), {})).toEqual({ action: 'cascade', causes: ['b'] });
    finishNode(state, id('c'), 'cascade');
    expect(decideNode(topo, state, id('d'), {})).toEqual({ action: 'cascade', causes: ['b', 'c'] });
  });

  it('an optional input from a failed node reads null instead', () => {
    const g = diamond({ optionalC: true });
    const topo = topologyOf(g);
    const state = initialRunState(g);
    finishNode(state, id('b'), 'ok', { x: 'X' });
    finishNode(state, id('c'), 'failed');
    expect(decideNode(topo, state, id('d'), {})).toEqual({ action: 'run', inputs: { b: 'X', c: null } });
  });

  it('a false condition or a skipped source makes the edge inactive and the node skipped', () => {
    const g = diamond({ condition: 'go == true' });
    const topo = topologyOf(g);
    const state = initialRunState(g);
    const toC = topo.forwardIn.get(id('c'))![0]!;
    finishNode(state, id('a'), 'ok', { go: false });
    expect(edgeInput(toC, state.nodes.get(id('a'))!)).toBe('inactive');
    expect(decideNode(topo, state, id('c'), {})).toEqual({ action: 'skip', why: 'inactive input from a (condition false)' });
    finishNode(state, id('a'), 'ok', { go: true });
    expect(edgeInput(toC, state.nodes.get(id('a'))!)).toBe('active');
    finishNode(state, id('b'), 'ok', { x: 1 });
    finishNode(state, id('c'), 'skipped');
    expect(decideNode(topo, state, id('d'), {})).toEqual({ action: 'skip', why: 'inactive input from c (skipped)' });
  });
});

describe('hop-limit accounting', () => {
  it('a run at the limit becomes HOP_LIMIT with its inputs; below it, and non-run decisions, pass unchanged', () => {
    const run = { action: 'run' as const, inputs: { a: 1 } };
    expect(admitRun(run, 2, 3)).toBe(run);
    const limited = admitRun(run, 3, 3);
    expect(limited.action).toBe('wiring');
    expect(limited.action === 'wiring' && [limited.failure.code, limited.failure.message, limited.inputs]).toEqual(['HOP_LIMIT', 'hop limit reached: 3 node runs in this task run', { a: 1 }]);
    const cascade = { action: 'cascade' as const, causes: [id('x')] };
    expect(admitRun(cascade, 9, 3)).toBe(cascade);
  });

  it('startRun uses one hop and returns the attempt it runs as', () => {
    const state = initialRunState(loop);
    expect(startRun(state, id('a'))).toBe(1);
    expect(state.hops).toBe(1);
    expect(state.nodes.get(id('a'))!.phase).toBe('running');
  });
});

describe('loop re-entry and max_iterations bookkeeping', () => {
  const back = loop.edges.find((e) => e.maxIterations)!;

  it('a loop edge is taken while its count is below max_iterations and its condition holds', () => {
    expect(loopToTake([back], new Map(), { verdict: 'revise' })).toBe(back);
    expect(loopToTake([back], new Map([[back, 1]]), { verdict: 'revise' })).toBe(back);
    expect(loopToTake([back], new Map([[back, 2]]), { verdict: 'revise' })).toBeUndefined();
    expect(loopToTake([back], new Map(), { verdict: 'ok' })).toBeUndefined();
  });

  it('the re-entry set is the target and everything it reaches by forward edges', () => {
    const g = diamond();
    expect(reentrySet(topologyOf(g), id('b'))).toEqual(['b', 'd']);
    expect(reentrySet(topologyOf(g), id('a'))).toEqual(['a', 'c', 'b', 'd']);
  });

  it('settling an ok output that takes the loop re-enters: next attempts, the loop port carries the output', () => {
    const topo = topologyOf(loop);
    const state = initialRunState(loop);
    finishNode(state, id('a'), 'ok', 'draft 1');
    startRun(state, id('b'));
    const verdict = { verdict: 'revise', why: 'too short' };
    expect(settleRun(state, topo, id('b'), 1, { ok: true, output: verdict })).toEqual({ next: 'done', loop: back });
    expect([...state.nodes.values()].map((s) => [s.node.id, s.phase, s.attempt, s.status])).toEqual([['a', 'pending', 2, undefined], ['b', 'pending', 2, undefined]]);
    expect(state.loopCount.get(back)).toBe(1);
    expect(decideNode(topo, state, id('a'), {})).toEqual({ action: 'run', inputs: { fb: verdict } });
    // A failed run never loops.
    expect(settleRun(state, topo, id('b'), 2, { ok: false })).toEqual({ next: 'done' });
    expect(state.nodes.get(id('b'))!.status).toBe('failed');
  });

  it('a node re-entered while it runs is stale: its result is superseded and it reruns as attempt + 1', () => {
    const topo = topologyOf(loop);
    const state = initialRunState(loop);
    startRun(state, id('a'));
    reenterLoop(state, topo, back, { verdict: 'revise' });
    expect(state.nodes.get(id('a'))).toMatchObject({ phase: 'pending', attempt: 1, stale: true });
    expect(settleRun(state, topo, id('a'), 1, { ok: true, output: 'late' })).toEqual({ next: 'rerun' });
    expect(state.nodes.get(id('a'))).toMatchObject({ phase: 'pending', attempt: 2, stale: false, output: undefined });
  });

  /** Drives the algebra synchronously, every node run finishing at once with `output(id, attempt)`. */
  function drive(maxHops: number, output: (n: NodeId, attempt: number) => unknown): string[] {
    const topo = topologyOf(loop);
    const state = initialRunState(loop);
    const log: string[] = [];
    for (let progressed = true; progressed;) {
      progressed = false;
      for (const n of topo.order) {
        if (!isReady(topo, state, n)) continue;
        progressed = true;
        const d = admitRun(decideNode(topo, state, n, {}), state.hops, maxHops);
        if (d.action !== 'run') {
          log.push(`${n}#${state.nodes.get(n)!.attempt}:${d.action === 'wiring' ? d.failure.code : d.action}`);
          finishNode(state, n, 'failed');
          continue;
        }
        const attempt = startRun(state, n);
        log.push(`${n}#${attempt}`);
        settleRun(state, topo, n, attempt, { ok: true, output: output(n, attempt) });
      }
    }
    return log;
  }

  it('a loop that always asks to revise runs 1 + max_iterations times, then stops', () => {
    expect(drive(64, () => ({ verdict: 'revise' }))).toEqual(['a#1', 'b#1', 'a#2', 'b#2', 'a#3', 'b#3']);
  });

  it('a loop that is satisfied on the second pass stops there', () => {
    expect(drive(64, (_n, attempt) => ({ verdict: attempt < 2 ? 'revise' : 'ok' }))).toEqual(['a#1', 'b#1', 'a#2', 'b#2']);
  });

  it('with a hop limit of 3 the fourth node run fails as HOP_LIMIT', () => {
    expect(drive(3, () => ({ verdict: 'revise' }))).toEqual(['a#1', 'b#1', 'a#2', 'b#2:HOP_LIMIT']);
  });
});

describe('events and the outcome', () => {
  it('a node event carries the node, its attempt and its completion order', () => {
    const node = loop.nodes[1]!;
    expect(nodeEvent(asRunId('r'), node, 2, 5, { inputs: {}, status: 'ok', calls: [], startedAt: 1, endedAt: 2 })).toEqual({
      runId: 'r', nodeId: 'b', attempt: 2, seq: 5, kind: 'agent', role: 'r', wiredBy: 'human', runBy: 'r', inputs: {}, status: 'ok', calls: [], startedAt: 1, endedAt: 2,
    });
  });

  it('the answer is the answer node output or its field; the run completes only with an answer', () => {
    const g = { ...diamond(), answer: { node: id('d'), field: 'result.value' } };
    const state = initialRunState(g);
    expect(runAnswer(g, state, false)).toEqual({ status: 'failed', answer: undefined });
    finishNode(state, id('d'), 'ok', { result: { value: 42 } });
    expect(runAnswer(g, state, false)).toEqual({ status: 'completed', answer: 42 });
    expect(runAnswer(g, state, true)).toEqual({ status: 'cancelled', answer: 42 });
    finishNode(state, id('d'), 'ok', { result: {} });
    expect(runAnswer(g, state, false)).toEqual({ status: 'failed', answer: undefined });
  });

  it('token totals sum every call of every event', () => {
    const call = (p: number, c: number) => ({ promptTokens: p, completionTokens: c }) as never;
    const ev = (calls: never[]) => ({ calls }) as never;
    expect(tokenTotals([ev([call(10, 3), call(5, 2)]), ev([]), ev([call(1, 1)])])).toEqual({ promptTokens: 16, completionTokens: 6 });
  });
});
