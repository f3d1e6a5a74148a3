import { describe, expect, it } from 'vitest';
import { asNodeId as N, asRoleName as R, HUMAN } from '../ids.ts';
import { computeCredit } from '../blame/credit/computeCredit.ts';
import type { CreditGraph } from '../blame/credit/types.ts';
import type { FailureClass, NodeStatus } from '../trace/events.ts';
import { computeLadder, DEFAULT_WEIGHTS } from './ladder.ts';

function ladderOf(
  nodes: Array<{ id: string; runBy?: string; wiredBy?: string[]; after?: string[] }>,
  evs: Array<[string, NodeStatus, FailureClass?, string?]>,
  roles: Array<{ name: string; weights?: Record<string, number> }>,
  outcome: { completed: boolean; score: number; correct?: boolean },
) {
  const g: CreditGraph = {
    nodes: nodes.map((n) => ({ id: N(n.id), runBy: n.runBy ? R(n.runBy) : undefined, wiredBy: (n.wiredBy ?? [HUMAN]).map(R) })),
    edges: nodes.flatMap((n) => (n.after ?? []).map((f) => ({ from: N(f), to: N(n.id) }))),
  };
  const events = evs.map(([id, status, failureClass, errorCode]) => ({ nodeId: N(id), attempt: 1, status, failureClass, errorCode }));
  const credit = computeCredit(g, events, { correct: outcome.correct ?? outcome.score === 1 });
  return computeLadder(roles.map((r) => ({ name: R(r.name), weights: r.weights })), g.nodes, events, credit, outcome);
}

describe('reward ladder: worked examples computed by hand', () => {
  it('defaults are the documented weights', () => {
    expect(DEFAULT_WEIGHTS).toEqual({ format: 0.1, validity: 0.1, completion: 0.2, correctness: 0.6, credit: 0.5 });
  });

  it('1. all green and correct: every rung, h = 0.1 + 0.1 + 0.2 + 0.6 = 1.0, rung 5', () => {
    const l = ladderOf([{ id: 's', runBy: 'solver' }], [['s', 'ok']], [{ name: 'solver' }], { completed: true, score: 1 });
    expect(l.solver).toMatchObject({ format: 1, validity: 1, completion: 1, correctness: 1, credit: 0, reward: 1, highestRung: 5, nodesRun: 1 });
  });

  it('2. the team run of the tiny model: solver breaks its contract, the rest cascades', () => {
    const nodes = [
      { id: 'plan', runBy: 'planner' },
      { id: 'solve', runBy: 'solver', after: ['plan'] },
      { id: 'calc', runBy: 'solver', after: ['solve'] },
      { id: 'verify', runBy: 'verifier', after: ['calc'] },
    ];
    const l = ladderOf(nodes, [['plan', 'ok'], ['solve', 'failed', 'execution', 'CONTRACT_VIOLATION'], ['calc', 'cascade', 'cascade'], ['verify', 'cascade', 'cascade']],
      [{ name: 'planner' }, { name: 'solver' }, { name: 'verifier' }], { completed: false, score: 0 });
    // planner: f = 1, v = 1, e = 0, a = 0, c = 0 -> h = 0.1 + 0.1 = 0.2; rungs 1, 2 passed.
    expect(l.planner).toMatchObject({ format: 1, validity: 1, completion: 0, correctness: 0, credit: 0, reward: 0.2, highestRung: 2 });
    // solver: ran solve only (calc cascaded): f = 1 (parsed), v = 0; authored solve+calc, 1 root: c = -1/2.
    // h = 0.1*1 + 0.1*0 + 0 + 0 + 0.5*(-0.5) = -0.15; rung 1.
    expect(l.solver).toMatchObject({ format: 1, validity: 0, credit: -0.5, reward: -0.15, highestRung: 1, nodesRun: 1 });
    // verifier never ran: f = v = 0, h = 0, rung 0.
    expect(l.verifier).toMatchObject({ format: 0, validity: 0, credit: 0, reward: 0, highestRung: 0, nodesRun: 0 });
  });

  it('3. per-role weights from the workflow replace the defaults rung by rung', () => {
    // Completed with a half-right answer (a = 0.5); solver weights correctness 2, credit 1.
    const l = ladderOf([{ id: 's', runBy: 'solver' }, { id: 't', runBy: 'solver', after: ['s'] }], [['s', 'ok'], ['t', 'ok']],
      [{ name: 'solver', weights: { correctness: 2, credit: 1 } }], { completed: true, score: 0.5 });
    // h = 0.1*1 + 0.1*1 + 0.2*1 + 2*0.5 + 1*0 = 1.4; rung 3 (a < 1 stops the climb).
    expect(l.solver).toMatchObject({ reward: 1.4, highestRung: 3, weights: { format: 0.1, validity: 0.1, completion: 0.2, correctness: 2, credit: 1 } });
  });

  it('4. unparsable output fails the format rung: f = 1/2 for a role with one good and one broken node', () => {
    const l = ladderOf([{ id: 'a', runBy: 'r' }, { id: 'b', runBy: 'r' }], [['a', 'ok'], ['b', 'failed', 'execution', 'UNPARSABLE_OUTPUT']], [{ name: 'r' }], { completed: true, score: 0 });
    // f = 0.5, v = 0.5, e = 1, a = 0, c = -1/2 -> h = 0.05 + 0.05 + 0.2 + 0 - 0.25 = 0.05; rung 0 (f < 1).
    expect(l.r).toMatchObject({ format: 0.5, validity: 0.5, completion: 1, credit: -0.5, reward: 0.05, highestRung: 0 });
  });

  it('5. a generator that wired three nodes, one with a wiring fault', () => {
    const nodes = [
      { id: 'a', runBy: 'solver', wiredBy: ['generator'] },
      { id: 'b', runBy: 'solver', wiredBy: ['generator'], after: ['a'] },
      { id: 'c', wiredBy: ['generator'], after: ['b'] },
    ];
    const l = ladderOf(nodes, [['a', 'ok'], ['b', 'ok'], ['c', 'failed', 'wiring', 'UNKNOWN_TOOL']], [{ name: 'generator' }, { name: 'solver' }], { completed: false, score: 0 });
    // generator: f = 3/3 = 1, v = 2/3, c = -1/3 -> h = 0.1 + 0.1*(2/3) - 0.5/3 = 0; rung 1.
    expect(l.generator!.format).toBe(1);
    expect(l.generator!.validity).toBeCloseTo(2 / 3, 12);
    expect(l.generator!.credit).toBeCloseTo(-1 / 3, 12);
    expect(l.generator!.reward).toBeCloseTo(0, 12);
    expect(l.generator!.highestRung).toBe(1);
    // solver ran a and b cleanly and is not blamed: f = v = 1, e = a = 0 -> h = 0.2; rung 2.
    expect(l.solver).toMatchObject({ format: 1, validity: 1, credit: 0, reward: 0.2, highestRung: 2 });
  });

  it('6. an infrastructure fault counts neither for nor against the role it stopped', () => {
    const l = ladderOf([{ id: 'a', runBy: 'r' }, { id: 'b', runBy: 'r' }], [['a', 'ok'], ['b', 'failed', 'infrastructure', 'MODEL_LOAD_FAILED']], [{ name: 'r' }], { completed: false, score: 0 });
    // Only a counts: f = v = 1; nobody blamed: c = 0; h = 0.2.
    expect(l.r).toMatchObject({ format: 1, validity: 1, credit: 0, reward: 0.2, highestRung: 2, nodesRun: 1 });
  });
});
