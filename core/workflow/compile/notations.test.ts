import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { defaultTools } from '../../tools/index.ts';
import { compileWorkflow } from '../compile.ts';
import type { Graph } from '../graph.ts';
import { loadWorkflowFile } from '../load.ts';
import { WorkflowSpec } from '../spec.ts';

const tools = defaultTools();
const example = (n: string) => new URL(`../../../examples/notations/${n}.yaml`, import.meta.url).pathname;

/** A graph as plain data without what differs by notation: the notation and document paths. */
function shape(g: Graph) {
  return {
    nodes: g.nodes.map(({ path: _path, inputs, ...n }) => ({ ...n, inputs: inputs.map(({ path: _p, ...port }) => port) })),
    edges: g.edges.map(({ path: _path, ...e }) => e).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    answer: g.answer,
    roles: g.roles,
    skills: g.skills,
    limits: g.limits,
  };
}

describe('the worked example in all four notations (examples/notations/)', () => {
  const graphs = Object.fromEntries(['steps', 'graph', 'states', 'code'].map((n) => [n, loadWorkflowFile(example(n), { tools }).graph]));

  it('each file compiles, under its own notation', () => {
    expect(Object.values(graphs).map((g) => g.notation)).toEqual(['steps', 'graph', 'states', 'code']);
  });

  it('the graph notation gives plan -> solve -> calc -> verify with a bounded revise loop back to solve', () => {
    const g = shape(graphs.graph!);
    expect(g.nodes.map((n) => [n.id, n.kind, n.role, n.inputs.map((p) => [p.name, p.source, p.optional, p.loop ?? false])])).toEqual([
      ['plan', 'agent', 'planner', [['question', { kind: 'task', field: 'question' }, false, false]]],
      ['solve', 'agent', 'solver', [
        ['question', { kind: 'task', field: 'question' }, false, false],
        ['plan', { kind: 'node', node: 'plan', field: undefined }, false, false],
        ['feedback', { kind: 'node', node: 'verify' }, true, true],
      ]],
      ['calc', 'tool', 'solver', [['expression', { kind: 'node', node: 'solve', field: 'expression' }, false, false]]],
      ['verify', 'agent', 'verifier', [['question', { kind: 'task', field: 'question' }, false, false], ['value', { kind: 'node', node: 'calc', field: 'value' }, false, false]]],
    ]);
    expect(g.edges).toEqual([
      { from: 'calc', to: 'verify', type: 'data', port: 'value' },
      { from: 'plan', to: 'solve', type: 'data', port: 'plan' },
      { from: 'solve', to: 'calc', type: 'data', port: 'expression' },
      { from: 'verify', to: 'solve', type: 'data', port: 'feedback', condition: { op: '==', path: ['verdict'], value: 'revise' }, maxIterations: 2 },
    ]);
    expect(g.answer).toEqual({ node: 'calc', field: 'value' });
  });

  for (const n of ['steps', 'states', 'code']) {
    it(`${n} compiles to the same graph as the graph notation (nodes, inputs, edges, answer)`, () => {
      expect(shape(graphs[n]!)).toEqual(shape(graphs.graph!));
    });
  }

  it('each node keeps the path of its own notation', () => {
    expect(Object.values(graphs).map((g) => g.nodes.find((x) => x.id === 'calc')!.path)).toEqual([['steps', 2], ['nodes', 2], ['states', 2], ['code', 'calc']]);
    expect(Object.values(graphs).map((g) => g.edges.find((e) => e.maxIterations)!.path)).toEqual([['steps', 1, 'depends_on', 1], ['edges', 0], ['transitions', 3], ['code', 'loop', 0]]);
  });

  it('the comparison sees a difference: the code with max_iterations 3 compiles to another graph', () => {
    const doc = WorkflowSpec.parse(parseYaml(readFileSync(example('code'), 'utf8')));
    const { graph } = compileWorkflow({ ...doc, code: doc.code!.replace('max_iterations: 2', 'max_iterations: 3') }, { tools });
    expect(graph!.edges.find((e) => e.maxIterations)!.maxIterations).toBe(3);
    expect(shape(graph!)).not.toEqual(shape(graphs.graph!));
  });

  it('a design document object ({ code } or { states, ... } beside the roles) compiles through compileWorkflow alike', () => {
    for (const n of ['states', 'code']) {
      const doc = WorkflowSpec.parse(parseYaml(readFileSync(example(n), 'utf8')));
      const { graph, issues } = compileWorkflow(doc, { tools });
      expect(issues).toEqual([]);
      expect(shape(graph!)).toEqual(shape(graphs.graph!));
    }
  });
});
