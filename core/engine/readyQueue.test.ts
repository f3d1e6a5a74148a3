import { describe, expect, it } from 'vitest';
import { asNodeId, type NodeId } from '../ids.ts';
import type { Graph } from '../workflow/graph.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { admitRun, beginPass, decideNode, finishNode, initialRunState, isReady, nextReady, reenterLoop, settleRun, startRun, topologyOf, type RunState, type Topology } from './algo.ts';
import { beginPass as beginQueuePass, enqueue, newReadyQueue, takeReady } from './readyQueue.ts';

const tools = { get: () => undefined };
const graphOf = (yaml: string) => parseWorkflow(yaml, { tools }).graph;
const id = asNodeId;
const ids = (...names: string[]) => names.map(id);

/** Readiness by its definition: pending, and every forward predecessor done. */
const readyByDefinition = (topo: Topology, state: RunState, n: NodeId) =>
  state.nodes.get(n)!.phase === 'pending' && topo.forwardIn.get(n)!.every((e) => state.nodes.get(e.from)!.phase === 'done');
const waiting = (state: RunState) => Object.fromEntries([...state.nodes.values()].map((s) => [s.node.id, s.waiting]));
/** Every node's counter-kept readiness agrees with the definition. */
const agrees = (topo: Topology, state: RunState) => topo.order.every((n) => isReady(topo, state, n) === readyByDefinition(topo, state, n));

describe('the ready queue walks the start order like a scan', () => {
  it('meets queued places in order, ahead of the cursor in this pass, behind it in the next', () => {
    const q = newReadyQueue(ids('a', 'b', 'c', 'd'));
    const yes = () => true;
    enqueue(q, id('c'));
    enqueue(q, id('a'));
    beginQueuePass(q);
    expect(takeReady(q, yes)).toBe('a');
    expect(q.cursor).toBe(0);
    enqueue(q, id('b')); // place 1, ahead of the cursor: this pass
    expect(takeReady(q, yes)).toBe('b');
    enqueue(q, id('a')); // place 0, behind the cursor (1): the next pass
    expect([q.pass, q.next]).toEqual([[2], [0]]);
    expect(takeReady(q, yes)).toBe('c');
    expect(takeReady(q, yes)).toBe('a');
    expect(q.cursor).toBe(0);
    expect(takeReady(q, yes)).toBeUndefined();
  });

  it('drops places whose node is no longer ready; a node listed twice is met at each place', () => {
    const q = newReadyQueue(ids('x', 'y', 'x'));
    expect(q.places.get(id('x'))).toEqual([0, 2]);
    enqueue(q, id('x'));
    enqueue(q, id('y'));
    beginQueuePass(q);
    const met: string[] = [];
    const taken = new Set<string>();
    for (let n = takeReady(q, (n) => n !== 'y' && !taken.has(n)); n !== undefined; n = takeReady(q, (n) => n !== 'y' && !taken.has(n))) {
      met.push(`${n}@${q.cursor}`);
      taken.add(n);
    }
    expect(met).toEqual(['x@0']);
    expect([q.pass, q.next]).toEqual([[], []]);
  });
});

describe('in-degree counters under the transitions', () => {
  const chain = graphOf(`
name: chain
roles: { r: { kind: executor } }
nodes:
  - { id: a, role: r }
  - { id: b, role: r, inputs: { a: a } }
  - { id: c, role: r, inputs: { b: b } }
`);

  it('a chain: each node waits on one edge, and finishing a node releases only its successor', () => {
    const topo = topologyOf(chain);
    const state = initialRunState(chain);
    expect(waiting(state)).toEqual({ a: 0, b: 1, c: 1 });
    beginPass(state);
    expect(nextReady(topo, state)).toBe('a');
    startRun(state, id('a'));
    expect(nextReady(topo, state)).toBeUndefined();
    settleRun(state, topo, id('a'), 1, { ok: true, output: 'A' });
    expect(waiting(state)).toEqual({ a: 0, b: 0, c: 1 });
    beginPass(state);
    expect(nextReady(topo, state)).toBe('b');
    finishNode(state, id('b'), 'failed');
    expect(waiting(state)).toEqual({ a: 0, b: 0, c: 0 });
    expect(nextReady(topo, state)).toBe('c');
    finishNode(state, id('c'), 'cascade');
    expect(nextReady(topo, state)).toBeUndefined();
    // Finishing a done node again changes no count.
    finishNode(state, id('a'), 'ok', 'A');
    expect(waiting(state)).toEqual({ a: 0, b: 0, c: 0 });
  });

  it('a diamond: the join waits on both branches, one count per edge', () => {
    const g = graphOf(`
name: diamond
roles: { r: { kind: executor } }
nodes:
  - { id: a, role: r }
  - { id: b, role: r, inputs: { a: a } }
  - { id: c, role: r }
  - { id: d, role: r, inputs: { b: b, b2: b.x, c: c } }
edges:
  - { from: a, to: c, type: control }
`);
    const topo = topologyOf(g);
    const state = initialRunState(g);
    expect(waiting(state)).toEqual({ a: 0, b: 1, c: 1, d: 3 });
    beginPass(state);
    expect(nextReady(topo, state)).toBe('a');
    finishNode(state, id('a'), 'ok', 'A');
    expect(nextReady(topo, state)).toBe('b');
    finishNode(state, id('b'), 'ok', { x: 1 });
    expect(waiting(state)).toMatchObject({ c: 0, d: 1 });
    expect(nextReady(topo, state)).toBe('c');
    finishNode(state, id('c'), 'ok', 'C');
    expect(nextReady(topo, state)).toBe('d');
    expect(agrees(topo, state)).toBe(true);
  });

  it('a node that becomes ready behind the pass is met after the rest of the pass', () => {
    // Document order y, x, z; y reads x, so it becomes ready at place 0 while the pass stands on x (place 1).
    const g = graphOf(`
name: behind
roles: { r: { kind: executor } }
nodes:
  - { id: y, role: r, inputs: { x: x } }
  - { id: x, role: r }
  - { id: z, role: r }
answer: y
`);
    const topo = topologyOf(g);
    const state = initialRunState(g);
    const met: string[] = [];
    beginPass(state);
    for (let n = nextReady(topo, state); n !== undefined; n = nextReady(topo, state)) {
      met.push(n);
      finishNode(state, n, 'ok', n);
    }
    expect(met).toEqual(['x', 'z', 'y']);
  });

  it('a loop re-entry: the target is ready again at once, its successors wait on it again', () => {
    const g = graphOf(`
name: loop
roles: { r: { kind: executor } }
nodes:
  - { id: a, role: r, prompt: "{{#fb}}{{fb}}{{/fb}}" }
  - { id: b, role: r, inputs: { a: a } }
  - { id: c, role: r, inputs: { b: b } }
edges:
  - { from: b, to: a, port: fb, max_iterations: 2, condition: 'verdict == "revise"' }
`);
    const topo = topologyOf(g);
    const state = initialRunState(g);
    beginPass(state);
    expect(nextReady(topo, state)).toBe('a');
    finishNode(state, id('a'), 'ok', 'draft');
    expect(nextReady(topo, state)).toBe('b');
    startRun(state, id('b'));
    expect(waiting(state)).toEqual({ a: 0, b: 0, c: 1 });
    settleRun(state, topo, id('b'), 1, { ok: true, output: { verdict: 'revise' } });
    // b done then re-entered with a: a pending (nothing to wait on), b waits on a, c on b.
    expect(waiting(state)).toEqual({ a: 0, b: 1, c: 1 });
    expect(agrees(topo, state)).toBe(true);
    beginPass(state);
    expect(nextReady(topo, state)).toBe('a');
    expect(nextReady(topo, state)).toBeUndefined();
    finishNode(state, id('a'), 'ok', 'draft 2');
    expect(nextReady(topo, state)).toBe('b');
    // A second re-entry while a is done and b pending: a leaves done, so b waits on it again.
    reenterLoop(state, topo, g.edges.find((e) => e.maxIterations)!, { verdict: 'revise' });
    expect(waiting(state)).toEqual({ a: 0, b: 1, c: 1 });
    expect(state.nodes.get(id('a'))!.attempt).toBe(3);
    expect(agrees(topo, state)).toBe(true);
  });
});

describe('the queue-driven pump starts nodes exactly as a rescan of the start order does', () => {
  /** Park-Miller minimal standard generator (CACM 31(10), 1988), seeded. */
  const lcg = (seed: number) => () => (seed = (seed * 48271) % 2147483647) / 2147483647;

  /** A random graph, its nodes listed in random order: data inputs (some optional), control edges (some conditional), loops back along forward paths, sometimes hops. */
  function randomYaml(rnd: () => number): string {
    const ri = (n: number) => Math.floor(rnd() * n);
    const k = 2 + ri(10);
    const lines = ['name: random', 'roles: { r: { kind: executor } }', 'nodes:'];
    const nodeLines: string[] = [];
    const edges: string[] = [];
    const succ = [...Array(k)].map(() => new Set<number>());
    for (let i = 0; i < k; i++) {
      const ins: string[] = [];
      if (i > 0) for (let t = 0; t < 1 + ri(2); t++) { const s = ri(i); succ[s]!.add(i); ins.push(rnd() < 0.3 ? `p${t}: { from: n${s}, optional: true }` : `p${t}: n${s}`); }
      if (i > 1 && rnd() < 0.3) { const s = ri(i); succ[s]!.add(i); edges.push(`  - { from: n${s}, to: n${i}, type: control${rnd() < 0.6 ? `, condition: 'go == true'` : ''} }`); }
      nodeLines.push(`  - { id: n${i}, role: r, prompt: "s${i}${ins.map((_, t) => ` {{p${t}}}`).join('')}"${ins.length ? `, inputs: { ${ins.join(', ')} }` : ''} }`);
    }
    // Listed in a random order, so that nodes also become ready behind a pass's cursor.
    for (let i = nodeLines.length - 1; i > 0; i--) { const j = ri(i + 1); [nodeLines[i], nodeLines[j]] = [nodeLines[j]!, nodeLines[i]!]; }
    lines.push(...nodeLines);
    const reaches = (a: number, b: number): boolean => a === b || [...succ[a]!].some((x) => reaches(x, b));
    for (let j = 1; j < k; j++) {
      const i = ri(j);
      if (rnd() < 0.35 && reaches(i, j)) edges.push(`  - { from: n${j}, to: n${i}, ${rnd() < 0.5 ? `port: fb${j}` : 'type: control'}, max_iterations: ${1 + ri(3)}${rnd() < 0.7 ? `, condition: 'verdict == "revise"'` : ''} }`);
    }
    if (edges.length) lines.push('edges:', ...edges);
    if (rnd() < 0.3) lines.push(`hops: [${[...Array(k).keys()].map((i) => `n${i}`).join(', ')}]`);
    lines.push(`answer: n${k - 1}`);
    return lines.join('\n');
  }

  /**
   * Drives the algebra with `concurrency` runs in flight, finishing a random one each step, and
   * logs every start (`n#a>`), finish (`n#a<`) and non-run decision. `scan` picks ready nodes the
   * way a full rescan does (by the definition of readiness); otherwise the ready queue does.
   */
  function drive(g: Graph, seed: number, scan: boolean): string[] {
    const rnd = lcg(seed);
    const concurrency = 1 + Math.floor(rnd() * 4);
    const maxHops = [5, 12, 64][Math.floor(rnd() * 3)]!;
    const topo = topologyOf(g);
    const state = initialRunState(g);
    const running: Array<[NodeId, number]> = [];
    const log: string[] = [];
    const handle = (n: NodeId) => {
      const d = admitRun(decideNode(topo, state, n, {}), state.hops, maxHops);
      if (d.action === 'run') {
        const attempt = startRun(state, n);
        running.push([n, attempt]);
        log.push(`${n}#${attempt}>`);
      } else {
        log.push(`${n}#${state.nodes.get(n)!.attempt}:${d.action}`);
        finishNode(state, n, d.action === 'cascade' ? 'cascade' : d.action === 'skip' ? 'skipped' : 'failed');
      }
    };
    const pump = () => {
      if (scan) {
        for (let progressed = true; progressed;) {
          progressed = false;
          for (const n of topo.order) {
            if (running.length >= concurrency) break;
            if (!readyByDefinition(topo, state, n)) continue;
            progressed = true;
            handle(n);
          }
        }
      } else {
        beginPass(state);
        for (let n: NodeId | undefined; running.length < concurrency && (n = nextReady(topo, state)) !== undefined;) handle(n);
      }
    };
    pump();
    while (running.length) {
      const [n, attempt] = running.splice(Math.floor(rnd() * running.length), 1)[0]!;
      const r = rnd();
      log.push(`${n}#${attempt}<`);
      settleRun(state, topo, n, attempt, r < 0.1 ? { ok: false } : { ok: true, output: { verdict: r < 0.6 ? 'revise' : 'ok', go: r < 0.85 } });
      expect(agrees(topo, state)).toBe(true);
      pump();
    }
    return log;
  }

  it('on 150 random graphs with loops, conditions, failures and the hop limit', () => {
    const rnd = lcg(20261201);
    let steps = 0;
    for (let c = 0; c < 150; c++) {
      const yaml = randomYaml(rnd);
      const g = graphOf(yaml);
      const seed = 1 + Math.floor(rnd() * 1e6);
      const byScan = drive(g, seed, true);
      expect(drive(g, seed, false), yaml).toEqual(byScan);
      steps += byScan.length;
    }
    expect(steps).toBeGreaterThan(1500);
  });
});
