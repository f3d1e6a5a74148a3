import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { applyGraphEdit, graphOf, type GraphEdit } from './graphEdits.ts';
import { parseWorkflowGraph } from './workflowGraph.ts';

const TEAM = readFileSync(new URL('../../examples/gsm8k-team.yaml', import.meta.url), 'utf8');

function edit(text: string, e: GraphEdit): string {
  const r = applyGraphEdit(text, e);
  if (!r.ok) throw new Error(r.message);
  return r.text;
}

function changedLines(a: string, b: string): Array<[string | undefined, string | undefined]> {
  const x = a.split('\n');
  const y = b.split('\n');
  const out: Array<[string | undefined, string | undefined]> = [];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if (x[i] !== y[i]) out.push([x[i], y[i]]);
  return out;
}

describe('parseWorkflowGraph', () => {
  it('reads the example: nodes with kinds and roles, implied data edges, the loop edge', () => {
    const p = parseWorkflowGraph(TEAM);
    expect(p.ok).toBe(true);
    if (!p.ok) return;
    const g = p.graph;
    expect(g.notation).toBe('nodes');
    expect(g.nodes.map((n) => [n.id, n.kind, n.role])).toEqual([
      ['plan', 'agent', 'planner'],
      ['solve', 'agent', 'solver'],
      ['calculate', 'tool', 'solver'],
      ['verify', 'agent', 'verifier'],
      ['answer', 'agent', 'answerer'],
    ]);
    expect(g.roles.map((r) => r.name)).toEqual(['planner', 'solver', 'verifier', 'answerer']);
    const loop = g.edges.find((e) => e.maxIterations);
    expect(loop).toMatchObject({ from: 'verify', to: 'solve', type: 'data', port: 'feedback', maxIterations: 2, origin: 'edges' });
    expect(g.edges.filter((e) => e.origin === 'inputs').map((e) => `${e.from}>${e.to}`)).toEqual([
      'plan>solve', 'solve>calculate', 'solve>verify', 'calculate>verify', 'calculate>answer', 'verify>answer',
    ]);
    expect(g.answer).toBe('answer');
    expect(g.nodes[0]!.line).toBe(25);
  });

  it('reads the steps and agents notations', () => {
    const steps = graphOf('name: s\nroles: {r: {kind: executor}}\nsteps:\n  - {id: a, role: r}\n  - {id: b, role: r, depends_on: [a]}\n')!;
    expect(steps.edges).toMatchObject([{ from: 'a', to: 'b', origin: 'depends_on', path: ['steps', 1, 'depends_on', 0] }]);
    const agents = graphOf('name: s\nroles: {r: {kind: executor}}\nagents:\n  - {name: a, role: r}\n  - {name: b, role: r}\nflows:\n  - {source: a, target: b, type: control}\n')!;
    expect(agents.nodes.map((n) => n.id)).toEqual(['a', 'b']);
    expect(agents.edges).toMatchObject([{ from: 'a', to: 'b', type: 'control', origin: 'flows' }]);
  });

  it('reports text that is not YAML with its line', () => {
    const p = parseWorkflowGraph('name: x\nroles: [\n');
    expect(p.ok).toBe(false);
    if (!p.ok) expect(p.line).toBeGreaterThan(0);
  });
});

describe('applyGraphEdit', () => {
  it('changes a role and keeps every other line byte for byte (comments, flow lists, spacing)', () => {
    const out = edit(TEAM, { op: 'setRole', id: 'calculate', role: 'verifier' });
    expect(changedLines(TEAM, out)).toEqual([
      ["    role: solver          # the solver's tool call: an execution fault here is the solver's", "    role: verifier # the solver's tool call: an execution fault here is the solver's"],
    ]);
    expect(graphOf(out)!.nodes.find((n) => n.id === 'calculate')!.role).toBe('verifier');
  });

  it('refuses an unknown role', () => {
    expect(applyGraphEdit(TEAM, { op: 'setRole', id: 'plan', role: 'nobody' })).toMatchObject({ ok: false, message: expect.stringContaining('no role "nobody"') });
  });

  it('adds and removes a node, round-tripping to the original text', () => {
    const added = edit(TEAM, { op: 'addNode', node: { id: 'review', kind: 'agent', role: 'verifier' } });
    expect(graphOf(added)!.nodes.map((n) => n.id)).toContain('review');
    expect(added).toContain('\n  - id: review\n    role: verifier\n');
    const removed = edit(added, { op: 'removeNode', id: 'review' });
    expect(removed).toBe(TEAM);
  });

  it('adds a control edge and a loop edge, then removes them back to the original', () => {
    const a = edit(TEAM, { op: 'addEdge', from: 'plan', to: 'answer', type: 'control' });
    expect(a).toContain('  - { from: plan, to: answer, type: control }');
    const g = graphOf(a)!;
    const control = g.edges.find((e) => e.type === 'control')!;
    expect(control).toMatchObject({ from: 'plan', to: 'answer' });
    const b = edit(a, { op: 'addEdge', from: 'answer', to: 'plan', type: 'data', maxIterations: 3 });
    expect(graphOf(b)!.edges.find((e) => e.from === 'answer' && e.to === 'plan')).toMatchObject({ maxIterations: 3 });
    const c = edit(b, { op: 'removeEdge', edgeId: graphOf(b)!.edges.find((e) => e.from === 'answer' && e.to === 'plan')!.id });
    const d = edit(c, { op: 'removeEdge', edgeId: graphOf(c)!.edges.find((e) => e.type === 'control')!.id });
    expect(d).toBe(TEAM);
  });

  it('refuses a duplicate edge and an unbounded self-loop', () => {
    expect(applyGraphEdit(TEAM, { op: 'addEdge', from: 'plan', to: 'solve', type: 'data' })).toMatchObject({ ok: false });
    expect(applyGraphEdit(TEAM, { op: 'addEdge', from: 'plan', to: 'plan', type: 'data' })).toMatchObject({ ok: false, message: expect.stringContaining('max_iterations') });
  });

  it('removes an input-implied edge by deleting the input port', () => {
    const g = graphOf(TEAM)!;
    const e = g.edges.find((x) => x.from === 'plan' && x.to === 'solve')!;
    const out = edit(TEAM, { op: 'removeEdge', edgeId: e.id });
    expect(changedLines(TEAM, out)).toEqual([['    inputs: { question: task.question, plan: plan }', '    inputs: { question: task.question }']]);
  });

  it('removing a node removes the edges and inputs that name it, and nothing else', () => {
    const out = edit(TEAM, { op: 'removeNode', id: 'verify' });
    const g = graphOf(out)!;
    expect(g.nodes.map((n) => n.id)).toEqual(['plan', 'solve', 'calculate', 'answer']);
    expect(g.edges.some((e) => e.from === 'verify' || e.to === 'verify')).toBe(false);
    expect(out).not.toContain('review: verify');
    expect(out).not.toMatch(/^edges:/m);
    // Comments at the top survive.
    expect(out.startsWith(TEAM.split('\n').slice(0, 4).join('\n'))).toBe(true);
    expect(out).toContain("role: solver          # the solver's tool call");
  });

  it('edits the steps notation through depends_on', () => {
    const text = 'name: s\nroles: {r: {kind: executor}}\nsteps:\n  - id: a\n    role: r\n  - id: b\n    role: r\n';
    const out = edit(text, { op: 'addEdge', from: 'a', to: 'b', type: 'data' });
    expect(graphOf(out)!.edges).toMatchObject([{ from: 'a', to: 'b', origin: 'depends_on' }]);
    expect(applyGraphEdit(text, { op: 'addEdge', from: 'a', to: 'b', type: 'control' })).toMatchObject({ ok: false });
    const back = edit(out, { op: 'removeEdge', edgeId: graphOf(out)!.edges[0]!.id });
    expect(graphOf(back)!.edges).toEqual([]);
  });

  it('adds the first node to an empty workflow', () => {
    const out = edit('name: x\nroles:\n  r: { kind: executor }\n', { op: 'addNode', node: { id: 'n1', kind: 'agent', role: 'r' } });
    expect(graphOf(out)!.nodes).toMatchObject([{ id: 'n1', role: 'r', path: ['nodes', 0] }]);
  });

  it('refuses to edit text that is not YAML', () => {
    expect(applyGraphEdit('a: [', { op: 'removeNode', id: 'x' })).toMatchObject({ ok: false, message: expect.stringContaining('does not parse') });
  });
});
