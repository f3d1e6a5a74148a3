import { describe, expect, it } from 'vitest';
import { asRunId } from '../../ids.ts';
import { runWorkflow } from '../../engine/index.ts';
import { ScriptedProvider } from '../../model/scripted.ts';
import { defaultTools, ToolError, type Tool } from '../../tools/index.ts';
import { parseWorkflow } from '../../workflow/load.ts';
import { computeCredit } from './computeCredit.ts';
import { creditGraphOf } from './fromGraph.ts';

/** A two-port tool that fails on an empty argument (as the calculator fails on a bad expression). */
const joinTool: Tool = {
  name: 'join',
  description: 'Joins two strings; fails on an empty one.',
  inputs: { a: { type: 'string' }, b: { type: 'string' } },
  output: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  run(inputs) {
    if (!inputs.a || !inputs.b) throw new ToolError('BAD_INPUT', 'join: an empty argument');
    return { text: `${String(inputs.a)}${String(inputs.b)}` };
  },
};
const tools = defaultTools().register(joinTool);

const roles = 'roles: { solver: { kind: executor }, helper: { kind: executor }, designer: { kind: generator } }';
const agent = (id: string) => `  - { id: ${id}, role: ${id === 'solve' ? 'solver' : 'helper'}, prompt: go, output: { schema: { type: object, properties: { expression: { type: string }, a: { type: string } }, required: [expression, a] } } }`;

async function run(toolLine: string, extra: string[] = []) {
  const yaml = ['name: t', roles, 'nodes:', agent('solve'), ...extra, toolLine].join('\n');
  const { graph } = parseWorkflow(yaml, { tools });
  // The solver writes a bad expression and an empty string: the tools fail on what it wrote.
  const provider = new ScriptedProvider(() => '{"expression": "2 +", "a": ""}');
  const out = await runWorkflow(graph, { runId: asRunId('r'), taskKey: '0', taskInput: { word: 'w' }, seed: 1, provider, tools });
  const cg = creditGraphOf(graph);
  return { cg, credit: computeCredit(cg, out.events) };
}

describe('creditGraphOf: the author of a role-less tool node\'s argument', () => {
  it('one agent node wrote the whole argument (its single required producer): the tool error is that agent\'s', async () => {
    const { cg, credit } = await run('  - { id: calc, tool: calculator, wired_by: designer, inputs: { expression: solve.expression } }');
    expect(cg.nodes.find((n) => n.id === 'calc')).toEqual({ id: 'calc', wiredBy: ['designer'], runBy: undefined, argumentFrom: 'solve' });
    expect(credit.roots).toEqual([{ nodeId: 'calc', failureClass: 'execution', errorCode: 'TOOL_ERROR', blamed: 'solver', authorNode: 'solve' }]);
    expect(credit.ambiguous).toEqual([]);
    expect(credit.byRole.solver).toEqual({ rootFailures: ['calc'], authored: ['solve', 'calc'], credit: -0.5 });
  });

  it('two producers, a task input, or shared wiring: no recorded author, the fault stays ambiguous', async () => {
    const two = await run('  - { id: j, tool: join, inputs: { a: solve.a, b: help.a } }', [agent('help')]);
    expect(two.cg.nodes.find((n) => n.id === 'j')!.argumentFrom).toBeUndefined();
    expect(two.credit.roots[0]).toMatchObject({ nodeId: 'j', blamed: null, candidates: ['human', 'solver', 'helper'] });

    const task = await run('  - { id: j, tool: join, inputs: { a: solve.a, b: task.word } }');
    expect(task.cg.nodes.find((n) => n.id === 'j')!.argumentFrom).toBeUndefined();
    expect(task.credit.roots[0]).toMatchObject({ nodeId: 'j', blamed: null, candidates: ['human', 'solver'] });

    const shared = await run('  - { id: calc, tool: calculator, wired_by: [designer, solver], inputs: { expression: solve.expression } }');
    expect(shared.cg.nodes.find((n) => n.id === 'calc')!.argumentFrom).toBeUndefined();
    expect(shared.credit.roots[0]).toMatchObject({ nodeId: 'calc', blamed: null, candidates: ['designer', 'solver'] });
  });

  it('a tool node a role calls by name is that role\'s, as before; two ports from one node are still one author', async () => {
    const called = await run('  - { id: calc, tool: calculator, role: helper, inputs: { expression: solve.expression } }');
    expect(called.cg.nodes.find((n) => n.id === 'calc')!.argumentFrom).toBeUndefined();
    expect(called.credit.roots[0]).toMatchObject({ nodeId: 'calc', blamed: 'helper' });
    const both = await run('  - { id: j, tool: join, inputs: { a: solve.a, b: solve.expression } }');
    expect(both.credit.roots[0]).toMatchObject({ nodeId: 'j', blamed: 'solver', authorNode: 'solve' });
  });
});
