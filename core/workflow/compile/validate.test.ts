import { describe, expect, it } from 'vitest';
import { asNodeId, asRoleName } from '../../ids.ts';
import type { GraphEdge, GraphNode } from '../graph.ts';
import { validateWorkflowGraph } from './validate.ts';
import type { GraphDraft } from './types.ts';

const calculator = { inputs: { expression: { type: 'string' as const } }, output: { type: 'object', properties: { value: { type: 'number' } } } };
const tools = { get: (n: string) => (n === 'calculator' ? calculator : undefined) };
const node = (id: string, i: number, extra: Partial<GraphNode> = {}): GraphNode => ({
  id: asNodeId(id), kind: 'agent', role: asRoleName('r'), wiredBy: asRoleName('human'), inputs: [], maxTokens: 128, temperature: 0, path: ['nodes', i], ...extra,
});
const edge = (i: number, from: string, to: string, extra: Partial<GraphEdge> = {}): GraphEdge => ({ from: asNodeId(from), to: asNodeId(to), type: 'data', port: from, path: ['edges', i], ...extra });
const port = (name: string, from: string, i: number, field?: string) => ({ name, source: { kind: 'node' as const, node: asNodeId(from), field }, optional: false, path: ['nodes', i, 'inputs', name] });

/** The diamond a -> b, a -> c, b -> d, c -> d. */
const diamond = (): GraphDraft => ({
  nodes: [node('a', 0), node('b', 1, { inputs: [port('a', 'a', 1)], prompt: '{{a}}' }), node('c', 2, { inputs: [port('a', 'a', 2)] }), node('d', 3, { inputs: [port('b', 'b', 3), port('c', 'c', 3)] })],
  edges: [edge(0, 'a', 'b'), edge(1, 'a', 'c'), edge(2, 'b', 'd'), edge(3, 'c', 'd')],
});

describe('validate stage: GraphDraft -> whole-graph checks, hops and answer', () => {
  it('a valid diamond: the answer is its only sink, hops resolve to node ids, no issue', () => {
    expect(validateWorkflowGraph(diamond(), {}, tools)).toEqual({ hops: undefined, answer: { node: 'd' }, issues: [] });
    expect(validateWorkflowGraph(diamond(), { hops: ['a', 'c', 'b', 'd'], answer: 'b' }, tools)).toEqual({ hops: ['a', 'c', 'b', 'd'], answer: { node: 'b', field: undefined }, issues: [] });
  });

  it('an unbounded cycle is located at the edge that closes it, and no answer is guessed', () => {
    const draft: GraphDraft = { nodes: [node('a', 0), node('b', 1)], edges: [edge(0, 'a', 'b'), edge(1, 'b', 'a')] };
    const r = validateWorkflowGraph(draft, {}, tools);
    expect(r.answer).toBeUndefined();
    expect(r.issues).toEqual([{ code: 'UNBOUNDED_CYCLE', path: ['edges', 1], message: 'cycle a -> b -> a has no edge with `max_iterations`; bound the loop' }]);
    // Bounded, the same loop is fine and the answer is the node the forward edges end at.
    const bounded = { ...draft, edges: [edge(0, 'a', 'b'), edge(1, 'b', 'a', { maxIterations: 2 })] };
    expect(validateWorkflowGraph(bounded, {}, tools)).toEqual({ hops: undefined, answer: { node: 'b' }, issues: [] });
  });

  it('located errors: ports against a tool, port types, templates, hops and the answer', () => {
    const draft: GraphDraft = {
      nodes: [
        node('a', 0, { contract: { schema: { type: 'object', properties: { n: { type: 'number' } } }, checks: [] } }),
        node('c', 1, { kind: 'tool', role: undefined, tool: 'calculator', inputs: [port('x', 'a', 1, 'n')] }),
        node('e', 2, { kind: 'tool', role: undefined, tool: 'calculator', inputs: [port('expression', 'a', 2, 'n')], prompt: '{{plan}}' }),
      ],
      edges: [edge(0, 'a', 'c', { port: 'x' }), edge(1, 'a', 'e', { port: 'expression' })],
    };
    const r = validateWorkflowGraph(draft, { hops: ['a', 'a', 'c'], answer: 'ghost' }, tools);
    expect(r.issues.map((i) => [i.code, i.path])).toEqual([
      ['MISSING_PORT', ['nodes', 1, 'inputs']],
      ['UNKNOWN_PORT', ['nodes', 1, 'inputs', 'x']],
      ['PORT_TYPE_MISMATCH', ['nodes', 2, 'inputs', 'expression']],
      ['BAD_TEMPLATE', ['nodes', 2, 'prompt']],
      ['BAD_HOPS', ['hops', 1]],
      ['BAD_HOPS', ['hops']],
      ['BAD_ANSWER', ['answer']],
    ]);
    expect(r.issues[2]!.message).toBe('port "expression" of "e" wants string but a.n produces number');
    expect(r.issues[5]!.message).toBe('hops leave out node(s): e');
    expect(r.answer).toBeUndefined();
  });

  it('the answer must name a field its node outputs (a text node has none; a schema lists them)', () => {
    const draft: GraphDraft = {
      nodes: [node('a', 0, { contract: { schema: { type: 'object', properties: { plan: { type: 'object', properties: { steps: { type: 'array' } } } } }, checks: [] } }), node('t', 1)],
      edges: [edge(0, 'a', 't')],
    };
    const at = (answer: string) => validateWorkflowGraph(draft, { answer }, tools);
    expect(at('t.nosuchfield').issues).toEqual([{ code: 'BAD_ANSWER', path: ['answer'], message: 'answer "t.nosuchfield": t writes text (no contract schema), which has no field "nosuchfield"' }]);
    expect(at('a.plam').issues.map((i) => i.message)).toEqual(['answer "a.plam": a outputs only plan, not "plam"']);
    expect(at('a.plan.step').issues.map((i) => i.message)).toEqual(['answer "a.plan.step": a.plan outputs only steps, not "step"']);
    expect(at('a.plan.steps')).toEqual({ hops: undefined, answer: { node: 'a', field: 'plan.steps' }, issues: [] });
    expect(at('t').answer).toEqual({ node: 't', field: undefined });
  });

  it('a condition must read a field its source declares, with a value of its enum', () => {
    const draft: GraphDraft = {
      nodes: [node('a', 0, { contract: { schema: { type: 'object', properties: { verdict: { enum: ['ok', 'revise'] } } }, checks: [] } }), node('b', 1)],
      edges: [edge(0, 'a', 'b', { type: 'control', port: undefined, condition: { op: '==', path: ['verdict'], value: 'revize' } }), edge(1, 'a', 'b', { type: 'control', port: undefined, condition: { op: 'truthy', path: ['verdikt'] } })],
    };
    const r = validateWorkflowGraph(draft, {}, tools);
    expect(r.issues.map((i) => [i.code, i.path, i.message])).toEqual([
      ['BAD_CONDITION', ['edges', 0, 'condition'], 'condition compares verdict with "revize", which is not one of its values ("ok", "revise")'],
      ['BAD_CONDITION', ['edges', 1, 'condition'], 'condition reads field "verdikt", but a outputs only verdict'],
    ]);
  });
});
