import { describe, expect, it } from 'vitest';
import { asNodeId as N, asRoleName as R, HUMAN } from '../../ids.ts';
import type { FailureClass, NodeStatus } from '../../trace/events.ts';
import { computeCredit } from './computeCredit.ts';
import type { CreditGraph } from './types.ts';

type Spec = Record<string, { wiredBy?: string | string[]; runBy?: string; after?: string[]; optional?: string[] }>;
function graph(spec: Spec): CreditGraph {
  return {
    nodes: Object.entries(spec).map(([id, s]) => ({
      id: N(id),
      wiredBy: (Array.isArray(s.wiredBy) ? s.wiredBy : [s.wiredBy ?? HUMAN]).map(R),
      runBy: s.runBy ? R(s.runBy) : undefined,
    })),
    edges: Object.entries(spec).flatMap(([id, s]) => [
      ...(s.after ?? []).map((f) => ({ from: N(f), to: N(id) })),
      ...(s.optional ?? []).map((f) => ({ from: N(f), to: N(id), optional: true })),
    ]),
  };
}
type Ev = [string, NodeStatus, FailureClass?, string?, number?];
const events = (list: Ev[]) => list.map(([id, status, failureClass, errorCode, attempt]) => ({ nodeId: N(id), status, failureClass, errorCode, attempt: attempt ?? 1 }));
const rootIds = (r: ReturnType<typeof computeCredit>) => r.roots.map((x) => x.nodeId);

describe('structure-aware credit on hand-built traces', () => {
  it('chain: the first failure is the root, everything below is its cascade', () => {
    const g = graph({ a: { runBy: 'planner' }, b: { runBy: 'solver', after: ['a'] }, c: { runBy: 'answerer', after: ['b'] } });
    const r = computeCredit(g, events([['a', 'ok'], ['b', 'failed', 'execution', 'CONTRACT_VIOLATION'], ['c', 'cascade', 'cascade']]));
    expect(r.roots).toEqual([{ nodeId: 'b', failureClass: 'execution', errorCode: 'CONTRACT_VIOLATION', blamed: 'solver' }]);
    expect(r.cascades).toEqual([{ nodeId: 'c', status: 'cascade', roots: ['b'] }]);
    expect(r.byRole.solver).toEqual({ rootFailures: ['b'], authored: ['b'], credit: -1 });
    expect(r.byRole.answerer!.credit).toBe(0);
    expect(r.byRole.human).toEqual({ rootFailures: [], authored: ['a', 'b', 'c'], credit: 0 });
  });

  it('diamond: one root at the top, both branches and the join cascade from it', () => {
    const g = graph({ a: { runBy: 'p' }, b: { runBy: 's', after: ['a'] }, c: { runBy: 's', after: ['a'] }, d: { runBy: 'v', after: ['b', 'c'] } });
    const r = computeCredit(g, events([['a', 'failed', 'execution', 'TIMEOUT'], ['b', 'cascade', 'cascade'], ['c', 'cascade', 'cascade'], ['d', 'cascade', 'cascade']]));
    expect(rootIds(r)).toEqual(['a']);
    expect(r.cascades.map((c) => [c.nodeId, c.roots])).toEqual([['b', ['a']], ['c', ['a']], ['d', ['a']]]);
    expect(r.byRole.p!.credit).toBe(-1);
    expect(r.byRole.s!.credit).toBe(0);
  });

  it('fan-in with an optional input: a failure on the optional side does not make the join a cascade', () => {
    const g = graph({ a: { runBy: 'x' }, b: { runBy: 'y' }, c: { runBy: 'z', after: ['a'], optional: ['b'] } });
    const ok = computeCredit(g, events([['a', 'ok'], ['b', 'failed', 'execution', 'AGENT_ERROR'], ['c', 'ok']]));
    expect(rootIds(ok)).toEqual(['b']);
    expect(ok.cascades).toEqual([]);
    // If the join then fails on its own, it is a second root, blamed on its own runner.
    const bad = computeCredit(g, events([['a', 'ok'], ['b', 'failed', 'execution', 'AGENT_ERROR'], ['c', 'failed', 'execution', 'UNPARSABLE_OUTPUT']]));
    expect(bad.roots.map((x) => [x.nodeId, x.blamed])).toEqual([['b', 'y'], ['c', 'z']]);
  });

  it('a wiring failure below a failed node is a root of its own (a designed node the validator rejected); what it feeds cascades from it', () => {
    const g = graph({ a: { runBy: 'ex', wiredBy: 'designer' }, b: { wiredBy: 'designer', after: ['a'] }, c: { runBy: 'ex', wiredBy: 'designer', after: ['b'] } });
    const r = computeCredit(g, events([['a', 'failed', 'execution', 'CONTRACT_VIOLATION'], ['b', 'failed', 'wiring', 'UNKNOWN_TOOL'], ['c', 'cascade', 'cascade']]));
    expect(r.roots.map((x) => [x.nodeId, x.failureClass, x.blamed])).toEqual([['a', 'execution', 'ex'], ['b', 'wiring', 'designer']]);
    expect(r.cascades).toEqual([{ nodeId: 'c', status: 'cascade', roots: ['b'] }]);
    // An execution failure below a failure is still a cascade.
    const exec = computeCredit(g, events([['a', 'failed', 'execution', 'CONTRACT_VIOLATION'], ['b', 'failed', 'execution', 'TOOL_ERROR'], ['c', 'cascade', 'cascade']]));
    expect(rootIds(exec)).toEqual(['a']);
  });

  it('two independent roots, one wiring and one execution, blamed on the wirer and the runner', () => {
    const g = graph({ a: { runBy: 'p', wiredBy: 'gen' }, b: { runBy: 's', wiredBy: 'gen' }, c: { runBy: 'v', after: ['a'] }, d: { runBy: 'v', after: ['b'] } });
    const r = computeCredit(g, events([['a', 'failed', 'execution', 'CONTRACT_VIOLATION'], ['b', 'failed', 'wiring', 'MISSING_FIELD'], ['c', 'cascade', 'cascade'], ['d', 'cascade', 'cascade']]));
    expect(r.roots.map((x) => [x.nodeId, x.failureClass, x.blamed])).toEqual([['a', 'execution', 'p'], ['b', 'wiring', 'gen']]);
    expect(r.cascades.map((c) => [c.nodeId, c.roots])).toEqual([['c', ['a']], ['d', ['b']]]);
    expect(r.byRole.gen).toEqual({ rootFailures: ['b'], authored: ['a', 'b'], credit: -0.5 });
  });

  it('a root below a cascade-free branch: the failure deep in one branch is the root; the other branch is clean', () => {
    const g = graph({ a: { runBy: 'p' }, b: { runBy: 's', after: ['a'] }, c: { runBy: 's', after: ['b'] }, d: { runBy: 'v', after: ['a'] }, e: { runBy: 'v', after: ['c', 'd'] } });
    const r = computeCredit(g, events([['a', 'ok'], ['b', 'ok'], ['d', 'ok'], ['c', 'failed', 'execution', 'TOOL_ERROR'], ['e', 'cascade', 'cascade']]));
    expect(rootIds(r)).toEqual(['c']);
    expect(r.cascades).toEqual([{ nodeId: 'e', status: 'cascade', roots: ['c'] }]);
    expect(r.byRole.s).toEqual({ rootFailures: ['c'], authored: ['b', 'c'], credit: -0.5 });
  });

  it('a wiring fault in a generator-wired tool is blamed on the generator, not the role calling the tool', () => {
    const g = graph({ plan: { runBy: 'planner', wiredBy: 'generator' }, calc: { runBy: 'solver', wiredBy: 'generator', after: ['plan'] } });
    const r = computeCredit(g, events([['plan', 'ok'], ['calc', 'failed', 'wiring', 'UNKNOWN_TOOL']]));
    expect(r.roots).toEqual([{ nodeId: 'calc', failureClass: 'wiring', errorCode: 'UNKNOWN_TOOL', blamed: 'generator' }]);
    expect(r.byRole.generator!.credit).toBe(-0.5);
    expect(r.byRole.solver!.credit).toBe(0);
  });

  it('a timeout is an execution fault of the runner', () => {
    const g = graph({ a: { runBy: 'slow' } });
    const r = computeCredit(g, events([['a', 'failed', 'execution', 'TIMEOUT']]));
    expect(r.roots[0]!.blamed).toBe('slow');
  });

  it('an infrastructure fault is blamed on no role, and its cascades are not blamed either', () => {
    const g = graph({ a: { runBy: 'p' }, b: { runBy: 's', after: ['a'] } });
    const r = computeCredit(g, events([['a', 'failed', 'infrastructure', 'MODEL_NOT_FOUND'], ['b', 'cascade', 'cascade']]));
    expect(r.roots).toEqual([{ nodeId: 'a', failureClass: 'infrastructure', errorCode: 'MODEL_NOT_FOUND', blamed: null }]);
    expect(r.infrastructure).toEqual(['a']);
    expect(r.cascades[0]!.roots).toEqual(['a']);
    expect(Object.values(r.byRole).every((x) => x.credit === 0)).toBe(true);
  });

  it('shared authorship is reported as ambiguous with its candidates, and counted for no role', () => {
    const g = graph({ a: { runBy: 's', wiredBy: ['generator', 'planner'] } });
    const r = computeCredit(g, events([['a', 'failed', 'wiring', 'MISSING_PORT']]));
    expect(r.roots[0]).toMatchObject({ nodeId: 'a', blamed: null, candidates: ['generator', 'planner'] });
    expect(r.ambiguous).toEqual([{ nodeId: 'a', candidates: ['generator', 'planner'], reason: 'wiring fault in a node wired by generator and planner' }]);
    expect(r.byRole.generator!.credit).toBe(0);
    // An execution fault in a tool no role runs: its wirer and its producers are candidates.
    const t = graph({ src: { runBy: 'solver', wiredBy: 'gen' }, tool: { wiredBy: 'gen', after: ['src'] } });
    const rt = computeCredit(t, events([['src', 'ok'], ['tool', 'failed', 'execution', 'TOOL_ERROR']]));
    expect(rt.ambiguous[0]!.candidates).toEqual(['gen', 'solver']);
    // Even with a human wirer and one producer: still ambiguous, never silently the producer's.
    const h = graph({ src: { runBy: 'solver' }, tool: { after: ['src'] } });
    const rh = computeCredit(h, events([['src', 'ok'], ['tool', 'failed', 'execution', 'TOOL_ERROR']]));
    expect(rh.roots[0]).toMatchObject({ nodeId: 'tool', blamed: null, candidates: ['human', 'solver'] });
    expect(rh.byRole.solver!.credit).toBe(0);
  });

  it('an execution fault in a role-less node that ran an argument one agent wrote (argumentFrom) is that author\'s, naming its node', () => {
    const withAuthor = (spec: Spec, tool: string, from: string): CreditGraph => {
      const g = graph(spec);
      g.nodes.find((x) => x.id === tool)!.argumentFrom = N(from);
      return g;
    };
    // A human-wired terminal runs the code the coder wrote: the coder's fault, at the coder's node.
    const g = withAuthor({ code: { runBy: 'coder' }, term: { after: ['code'] } }, 'term', 'code');
    const r = computeCredit(g, events([['code', 'ok'], ['term', 'failed', 'execution', 'NONZERO_EXIT']]));
    expect(r.roots).toEqual([{ nodeId: 'term', failureClass: 'execution', errorCode: 'NONZERO_EXIT', blamed: 'coder', authorNode: 'code' }]);
    expect(r.ambiguous).toEqual([]);
    expect(r.byRole.coder).toEqual({ rootFailures: ['term'], authored: ['code', 'term'], credit: -0.5 });
    // Other producers besides the author (context) do not change whose argument it was.
    const ctx = withAuthor({ plan: { runBy: 'planner' }, code: { runBy: 'coder', after: ['plan'] }, term: { after: ['plan', 'code'] } }, 'term', 'code');
    expect(computeCredit(ctx, events([['plan', 'ok'], ['code', 'ok'], ['term', 'failed', 'execution', 'TOOL_ERROR']])).roots[0]!.blamed).toBe('coder');
    // Shared wiring stays ambiguous: the author and every wirer are candidates.
    const shared = withAuthor({ code: { runBy: 'coder' }, term: { wiredBy: ['gen', 'planner'], after: ['code'] } }, 'term', 'code');
    const rs = computeCredit(shared, events([['code', 'ok'], ['term', 'failed', 'execution', 'TOOL_ERROR']]));
    expect(rs.roots[0]).toMatchObject({ blamed: null, candidates: ['gen', 'planner', 'coder'] });
    // An author with no edge to the node, an optional edge, or an author no role ran is not read.
    const noEdge = withAuthor({ code: { runBy: 'coder' }, other: { runBy: 'x' }, term: { after: ['other'] } }, 'term', 'code');
    expect(computeCredit(noEdge, events([['code', 'ok'], ['other', 'ok'], ['term', 'failed', 'execution', 'TOOL_ERROR']])).roots[0]).toMatchObject({ blamed: null, candidates: ['human', 'x'] });
    const optional = withAuthor({ code: { runBy: 'coder' }, term: { optional: ['code'] } }, 'term', 'code');
    expect(computeCredit(optional, events([['code', 'ok'], ['term', 'failed', 'execution', 'TOOL_ERROR']])).roots[0]!.blamed).toBeNull();
    const roleless = withAuthor({ src: {}, term: { after: ['src'] } }, 'term', 'src');
    expect(computeCredit(roleless, events([['src', 'ok'], ['term', 'failed', 'execution', 'TOOL_ERROR']])).roots[0]!.blamed).toBeNull();
    // A wiring fault there is still the wirer's; a failed author makes the node a cascade.
    const wired = withAuthor({ code: { runBy: 'coder' }, term: { wiredBy: 'orchestrator', after: ['code'] } }, 'term', 'code');
    expect(computeCredit(wired, events([['code', 'ok'], ['term', 'failed', 'wiring', 'NO_CODE']])).roots[0]).toMatchObject({ blamed: 'orchestrator' });
    expect(computeCredit(g, events([['code', 'failed', 'execution', 'AGENT_ERROR'], ['term', 'failed', 'execution', 'NONZERO_EXIT']])).cascades).toEqual([{ nodeId: 'term', status: 'failed', roots: ['code'] }]);
  });

  it('a bounded loop: only the final attempt of each node counts', () => {
    const g = graph({ solve: { runBy: 's' }, check: { runBy: 'v', after: ['solve'] } });
    // Attempt 1 went through; the verifier sent it back; attempt 2 of solve failed.
    const r = computeCredit(g, events([['solve', 'ok', undefined, undefined, 1], ['check', 'ok', undefined, undefined, 1], ['solve', 'failed', 'execution', 'UNPARSABLE_OUTPUT', 2], ['check', 'cascade', 'cascade', undefined, 2]]));
    expect(rootIds(r)).toEqual(['solve']);
    expect(r.cascades).toEqual([{ nodeId: 'check', status: 'cascade', roots: ['solve'] }]);
    // And a loop that recovered: attempt 1 failed? (cannot loop on failure) — attempt 2 ok supersedes an earlier ok.
    const ok = computeCredit(g, events([['solve', 'ok', undefined, undefined, 1], ['check', 'ok', undefined, undefined, 1], ['solve', 'ok', undefined, undefined, 2], ['check', 'ok', undefined, undefined, 2]]), { correct: true });
    expect(ok.roots).toEqual([]);
  });

  it('a silent wrong answer: no failed node, wrong grade -> silent, nobody blamed', () => {
    const g = graph({ a: { runBy: 'p' }, b: { runBy: 's', after: ['a'] } });
    const r = computeCredit(g, events([['a', 'ok'], ['b', 'ok']]), { correct: false });
    expect(r).toMatchObject({ roots: [], cascades: [], ambiguous: [], silent: true });
    expect(Object.values(r.byRole).every((x) => x.credit === 0)).toBe(true);
  });

  it('an all-green run: nothing to blame, not silent', () => {
    const g = graph({ a: { runBy: 'p' }, b: { runBy: 's', after: ['a'] } });
    const r = computeCredit(g, events([['a', 'ok'], ['b', 'ok']]), { correct: true });
    expect(r).toEqual({
      roots: [], cascades: [], ambiguous: [], infrastructure: [], silent: false,
      byRole: { human: { rootFailures: [], authored: ['a', 'b'], credit: 0 }, p: { rootFailures: [], authored: ['a'], credit: 0 }, s: { rootFailures: [], authored: ['b'], credit: 0 } },
    });
  });

  it('a failed node fed by a failed node is a cascade even if it ran (imported traces)', () => {
    const g = graph({ a: { runBy: 'p' }, b: { runBy: 's', after: ['a'] } });
    const r = computeCredit(g, events([['a', 'failed', 'execution', 'AGENT_ERROR'], ['b', 'failed', 'execution', 'AGENT_ERROR']]));
    expect(rootIds(r)).toEqual(['a']);
    expect(r.cascades).toEqual([{ nodeId: 'b', status: 'failed', roots: ['a'] }]);
  });
});
