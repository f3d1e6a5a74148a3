import { describe, expect, it } from 'vitest';
import { asNodeId, asRoleName } from '../../ids.ts';
import type { GraphNode, InputPort } from '../graph.ts';
import { buildWorkflowGraph } from './build.ts';
import type { DeclaredEdge, ParsedWorkflow } from './types.ts';

const node = (id: string, i: number, inputs: Array<[string, string]> = []): GraphNode => ({
  id: asNodeId(id), kind: 'agent', role: asRoleName('r'), wiredBy: asRoleName('human'), inputs: inputs.map(([name, from]): InputPort => ({ name, source: { kind: 'node', node: asNodeId(from) }, optional: false, path: ['nodes', i, 'inputs', name] })),
  maxTokens: 128, temperature: 0, path: ['nodes', i],
});
const edge = (i: number, from: string, to: string, extra: Partial<DeclaredEdge> = {}): DeclaredEdge => ({ from, to, path: ['edges', i], fromPath: ['edges', i, 'from'], toPath: ['edges', i, 'to'], ...extra });
const parsedOf = (nodes: GraphNode[], declaredEdges: DeclaredEdge[]): ParsedWorkflow => ({ name: 'w', notation: 'nodes', roles: new Map(), models: new Map(), skills: new Map(), nodes, declaredEdges });

describe('build stage: ParsedWorkflow -> GraphDraft', () => {
  it('a diamond: declared edges first (ports wired into their targets), then one implied edge per node-sourced port', () => {
    // a -> b (declared), a -> c (c's input), b -> d and c -> d (d's inputs), a -> d control.
    const parsed = parsedOf([node('a', 0), node('b', 1), node('c', 2, [['a', 'a']]), node('d', 3, [['left', 'b'], ['right', 'c']])], [edge(0, 'a', 'b'), edge(1, 'a', 'd', { type: 'control' })]);
    const { draft, issues } = buildWorkflowGraph(parsed);
    expect(issues).toEqual([]);
    expect(draft.edges.map((e) => [e.from, e.to, e.type, e.port, e.path])).toEqual([
      ['a', 'b', 'data', 'a', ['edges', 0]],
      ['a', 'd', 'control', undefined, ['edges', 1]],
      ['a', 'c', 'data', 'a', ['nodes', 2, 'inputs', 'a']],
      ['b', 'd', 'data', 'left', ['nodes', 3, 'inputs', 'left']],
      ['c', 'd', 'data', 'right', ['nodes', 3, 'inputs', 'right']],
    ]);
    expect(draft.nodes[1]!.inputs).toEqual([{ name: 'a', source: { kind: 'node', node: 'a' }, optional: false, loop: undefined, path: ['edges', 0] }]);
    // Pure: the parsed node did not get the port.
    expect(parsed.nodes[1]!.inputs).toEqual([]);
  });

  it('a loop edge (max_iterations) adds an optional loop port and parses its condition', () => {
    const parsed = parsedOf([node('a', 0), node('b', 1, [['a', 'a']])], [edge(0, 'b', 'a', { port: 'fb', maxIterations: 3, condition: 'verdict == "revise"' })]);
    const { draft, issues } = buildWorkflowGraph(parsed);
    expect(issues).toEqual([]);
    expect(draft.nodes[0]!.inputs).toEqual([{ name: 'fb', source: { kind: 'node', node: 'b' }, optional: true, loop: true, path: ['edges', 0] }]);
    expect(draft.edges[0]).toMatchObject({ from: 'b', to: 'a', port: 'fb', maxIterations: 3, condition: { op: '==', path: ['verdict'], value: 'revise' } });
  });

  it('located errors: a dangling endpoint, a condition that does not parse, an unbounded self-loop, a port fed twice', () => {
    const parsed = parsedOf([node('a', 0), node('b', 1, [['a', 'a']])], [
      edge(0, 'a', 'ghost'),
      edge(1, 'a', 'b', { type: 'control', condition: 'x ===' }),
      edge(2, 'b', 'b', { type: 'control' }),
      edge(3, 'b', 'b', { port: 'a', maxIterations: 2 }),
    ]);
    const { draft, issues } = buildWorkflowGraph(parsed);
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['DANGLING_EDGE', ['edges', 0, 'to']],
      ['BAD_CONDITION', ['edges', 1, 'condition']],
      ['UNBOUNDED_CYCLE', ['edges', 2]],
      ['PORT_TYPE_MISMATCH', ['edges', 3]],
    ]);
    expect(issues[0]!.message).toBe('edge a -> ghost: there is no node "ghost"');
    expect(issues[3]!.message).toBe('edge b -> b feeds port "a", which already reads from a');
    // The dangling edge and the unbounded self-loop are dropped.
    expect(draft.edges.map((e) => e.path)).toEqual([['edges', 1], ['edges', 3], ['nodes', 1, 'inputs', 'a']]);
  });
});
