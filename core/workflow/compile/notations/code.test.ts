import { describe, expect, it } from 'vitest';
import { defaultTools } from '../../../tools/index.ts';
import { SpecError, formatPath, type SpecIssue } from '../../errors.ts';
import { parseWorkflow } from '../../load.ts';

const tools = defaultTools();
const head = 'name: c\nroles: { planner: { kind: planner }, solver: { kind: executor } }\nskills: { ask: { prompt: "Ask {{q}}" } }\n';
/** The workflow with `lines` as its code block (`code: |` is line 4; code line L is file line 4 + L, column C file column 2 + C). */
const withCode = (...lines: string[]) => `${head}code: |\n${lines.map((l) => '  ' + l).join('\n')}\n`;

function issuesOf(yaml: string): SpecIssue[] {
  try {
    parseWorkflow(yaml, { file: 'c.yaml', tools });
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return (e as SpecError).issues;
  }
  throw new Error('expected the code block to be rejected');
}
const brief = (issues: SpecIssue[]) => issues.map((i) => [i.code, formatPath(i.path), i.message]);

describe('code blocks: the subset', () => {
  it('agent, tool and skill calls are nodes; inputs name earlier nodes, their fields and task fields; return is the answer', () => {
    const g = parseWorkflow(withCode(
      "const ask = skill('ask', 'planner', { q: task.question });",
      "const solve = agent('solver', { ask, hint: { from: ask, type: 'string', optional: true } }, { max_tokens: 16, temperature: 0.5, stop: ['\\n'] });",
      "const calc = tool('calculator', { expression: solve }, { role: 'solver', timeout_ms: 500 });",
      'return calc.value;',
    ), { tools }).graph;
    expect(g.notation).toBe('code');
    expect(g.nodes.map((n) => [n.id, n.kind, n.role, n.skill ?? n.tool, n.prompt, n.maxTokens, n.temperature, n.stop, n.timeoutMs])).toEqual([
      ['ask', 'skill', 'planner', 'ask', 'Ask {{q}}', 128, 0, undefined, undefined],
      ['solve', 'agent', 'solver', undefined, undefined, 16, 0.5, ['\n'], undefined],
      ['calc', 'tool', 'solver', 'calculator', undefined, 128, 0, undefined, 500],
    ]);
    expect(g.nodes[1]!.inputs.map((p) => [p.name, p.source, p.type, p.optional])).toEqual([
      ['ask', { kind: 'node', node: 'ask', field: undefined }, undefined, false],
      ['hint', { kind: 'node', node: 'ask', field: undefined }, 'string', true],
    ]);
    expect(g.edges.map((e) => [e.from, e.to, e.port])).toEqual([['ask', 'solve', 'ask'], ['ask', 'solve', 'hint'], ['solve', 'calc', 'expression']]);
    expect(g.answer).toEqual({ node: 'calc', field: 'value' });
  });

  it('without `return` the answer is the only final node; comments and template literals without ${} are fine', () => {
    const g = parseWorkflow(withCode(
      '// plan, then answer',
      "const plan = agent('planner', { q: task.q }, { prompt: `Q: {{q}}` });",
      "const answer = agent('solver', { plan });",
    ), { tools }).graph;
    expect(g.nodes.map((n) => n.prompt)).toEqual(['Q: {{q}}', undefined]);
    expect(g.answer).toEqual({ node: 'answer' });
  });
});

describe('code blocks: malformed, each with its code, path, line:column in the code and in the file', () => {
  const cases: Array<{ name: string; code: string[]; issues: Array<[string, string, string]>; at?: [number, number] }> = [
    {
      name: 'a syntax error (acorn)',
      code: ["const plan = agent('planner', { q: task.q );"],
      issues: [['CODE_SYNTAX', 'code', 'code 1:43: Unexpected token']], at: [5, 45],
    },
    {
      name: 'a name declared twice',
      code: ["const plan = agent('planner', {});", "const plan = agent('solver', {});"],
      issues: [['DUPLICATE_ID', 'code.plan', 'code 2:7: duplicate node id "plan": `plan` is declared twice']], at: [6, 9],
    },
    {
      name: 'a function declaration',
      code: ['function helper() { return 1; }', "const plan = agent('planner', {});"],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 1:1: function declarations are not allowed: every node is `const <id> = agent(...)`, `tool(...)` or `skill(...)`']], at: [5, 3],
    },
    {
      name: 'a member call',
      code: ["const plan = console.log('x');"],
      issues: [['CODE_UNSUPPORTED', 'code.plan', 'code 1:14: member calls (`a.b()`) are not allowed: a node is agent(), tool() or skill()']], at: [5, 16],
    },
    {
      name: 'eval',
      code: ["const plan = eval('agent()');"],
      issues: [['CODE_UNSUPPORTED', 'code.plan', 'code 1:14: `eval` is not allowed: the code is never run']], at: [5, 16],
    },
    {
      name: 'import',
      code: ["import fs from 'node:fs';", "const plan = agent('planner', {});"],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 1:1: `import` is not allowed: the code uses only agent, tool, skill, loop and task']], at: [5, 3],
    },
    {
      name: 'a template literal with an expression',
      code: ["const plan = agent('planner', {}, { prompt: `Q: ${task.q}` });"],
      issues: [['CODE_UNSUPPORTED', 'code.plan.prompt', 'code 1:51: template literals with `${...}` are not allowed: a prompt reads its ports as {{port}}']], at: [5, 53],
    },
    {
      name: 'a computed key',
      code: ["const plan = agent('planner', { ['q']: task.q });"],
      issues: [['CODE_UNSUPPORTED', 'code.plan.inputs', 'code 1:34: computed keys (`[k]: v`) are not allowed']], at: [5, 36],
    },
    {
      name: 'a computed member access in an input',
      code: ["const plan = agent('planner', { q: task['q'] });"],
      issues: [['CODE_UNSUPPORTED', 'code.plan.inputs.q', 'code 1:41: computed member access (`a[...]`) is not allowed: write `a.field`']],
    },
    {
      name: 'assignment to an existing variable',
      code: ["const plan = agent('planner', {});", "plan = agent('solver', {});"],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 2:1: assignment to an existing variable is not allowed: every value is a new `const`']], at: [6, 3],
    },
    {
      name: 'spread in the inputs',
      code: ["const plan = agent('planner', { ...task });"],
      issues: [['CODE_UNSUPPORTED', 'code.plan.inputs', 'code 1:33: spread (`...`) is not allowed']],
    },
    {
      name: 'an unbounded while loop',
      code: ["const plan = agent('planner', {});", 'while (true) {}'],
      issues: [['UNBOUNDED_CYCLE', 'code', 'code 2:1: a `while` loop has no bound: go back with loop({ from, to, while, max_iterations }) instead']], at: [6, 3],
    },
    {
      name: 'a for loop',
      code: ["const plan = agent('planner', {});", 'for (let i = 0; i < 2; i++) {}'],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 2:1: `for` is not part of the subset: a loop is loop({ from, to, while, max_iterations })']],
    },
    {
      name: 'loop() without max_iterations',
      code: ["const plan = agent('planner', {});", "const check = agent('solver', { plan });", "loop({ from: check, to: plan, while: 'retry' });"],
      issues: [['UNBOUNDED_CYCLE', 'code.loop[0]', 'code 3:1: loop check -> plan has no max_iterations: an unbounded loop is rejected; give it `max_iterations: <n>`']], at: [7, 3],
    },
    {
      name: 'a loop condition that does not parse',
      code: ["const plan = agent('planner', {});", "const check = agent('solver', { plan });", "loop({ from: check, to: plan, while: 'verdict = 1', max_iterations: 2 });"],
      issues: [['BAD_CONDITION', 'code.loop[0].condition', 'code 3:31: condition "verdict = 1": unexpected character \'=\' at column 9']], at: [7, 33],
    },
    {
      name: 'a loop back to a name that is no node',
      code: ["const plan = agent('planner', {});", "loop({ from: plan, to: ghost, max_iterations: 2 });"],
      issues: [['DANGLING_EDGE', 'code.loop[0].to', 'code 2:20: edge plan -> ghost: there is no node "ghost"']],
    },
    {
      name: 'an unknown role',
      code: ["const plan = agent('critic', {});"],
      issues: [['UNKNOWN_ROLE', 'code.plan.role', 'code 1:20: node "plan" names role "critic", which is not defined (roles: planner, solver)']], at: [5, 22],
    },
    {
      name: 'an unknown tool',
      code: ["const look = tool('websearch', { q: task.q });"],
      issues: [['UNKNOWN_TOOL', 'code.look.tool', 'code 1:19: unknown tool "websearch" (known: calculator, extract_number, weather, search, math, use_tool, dispatch, retrieve, call_tool, memory_recall, memory_append)']],
    },
    {
      name: 'an input from a name that is no node',
      code: ["const solve = agent('solver', { plan: plann });"],
      issues: [['UNKNOWN_NODE', 'code.solve.inputs.plan', 'code 1:33: input "plan" of "solve" reads from "plann", but there is no node "plann" (nodes: solve)']],
    },
    {
      name: 'a name used before its definition',
      code: ["const solve = agent('solver', { plan });", "const plan = agent('planner', {});"],
      issues: [['UNKNOWN_NODE', 'code.solve.inputs.plan', 'code 1:33: `plan` is used before it is defined (at 2:7): values flow forward, and back only through loop(...)']],
    },
    {
      name: 'a tool without its required port (a later stage, placed in the code)',
      code: ["const calc = tool('calculator', {});"],
      issues: [['MISSING_PORT', 'code.calc.inputs', 'code 1:33: tool "calculator" needs input port "expression" (string), which node "calc" does not wire']], at: [5, 35],
    },
    {
      name: 'a bad option value and an unknown option',
      code: ["const plan = agent('planner', {}, { max_tokens: 0, promt: 'hi' });"],
      issues: [
        ['SCHEMA', 'code.plan.max_tokens', 'code 1:37: max_tokens: Too small: expected number to be >0'],
        ['SCHEMA', 'code.plan', 'code 1:52: unknown field(s): promt'],
      ],
    },
    {
      name: 'the role given as an option',
      code: ["const plan = agent('planner', {}, { role: 'solver' });"],
      issues: [['SCHEMA', 'code.plan.role', "code 1:37: `role` is an argument of agent('<role>', { inputs }, { options }?), not an option"]],
    },
    {
      name: 'a role written as a name, not a string',
      code: ['const plan = agent(planner, {});'],
      issues: [['CODE_UNSUPPORTED', 'code.plan.role', "code 1:20: the role of agent() is a string literal, e.g. 'solver': `planner` is a name"]],
    },
    {
      name: 'a call inside the inputs',
      code: ["const plan = agent('planner', { q: agent('solver', {}) });"],
      issues: [['CODE_UNSUPPORTED', 'code.plan.inputs.q', 'code 1:36: a call inside an input: assign it to a name first (`const <id> = ...`), then use the name']],
    },
    {
      name: 'a node call without a name',
      code: ["agent('planner', {});"],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 1:1: a node call is given a name: `const <id> = agent(...)`']],
    },
    {
      name: 'let instead of const',
      code: ["let plan = agent('planner', {});"],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 1:1: `let` declares a variable that may change: declare each node once, `const <id> = agent(...)`']],
    },
    {
      name: 'an if statement',
      code: ["const plan = agent('planner', {});", 'if (plan) {}'],
      issues: [['CODE_UNSUPPORTED', 'code', "code 2:1: `if` is not part of the subset: a condition is a loop's `while`"]],
    },
    {
      name: 'a return that names no node',
      code: ["const plan = agent('planner', {});", 'return task.q;'],
      issues: [['BAD_ANSWER', 'code.return', "code 2:8: return task.q: the answer is a node's output, not a task field (nodes: plan)"]],
    },
    {
      name: 'a statement after return',
      code: ["const plan = agent('planner', {});", 'return plan;', "const more = agent('solver', {});"],
      issues: [['CODE_UNSUPPORTED', 'code', 'code 3:1: nothing may follow `return` (at 2:1)']],
    },
    {
      name: 'no node at all',
      code: ['// nothing here'],
      issues: [['NO_NODES', 'code', 'code 1:1: the code makes no node: call agent(), tool() or skill()']],
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const issues = issuesOf(withCode(...c.code));
      expect(brief(issues)).toEqual(c.issues);
      expect(issues[0]!.inCode).toEqual({ line: Number(/^code (\d+):/.exec(issues[0]!.message)![1]), column: Number(/^code \d+:(\d+)/.exec(issues[0]!.message)![1]) });
      if (c.at) expect([issues[0]!.line, issues[0]!.column]).toEqual(c.at);
    });
  }

  it('`answer:` beside a return: the answer is given once', () => {
    const issues = issuesOf(`${withCode("const plan = agent('planner', {});", 'return plan;')}answer: plan\n`);
    expect(brief(issues)).toEqual([['BAD_ANSWER', 'answer', 'the code gives its answer by `return`: drop `answer:` or the `return`']]);
  });

  it('code in a quoted string (JSON): the message holds the place in the code, the file position is the string', () => {
    const json = JSON.stringify({ name: 'c', roles: { planner: { kind: 'planner' } }, code: "const plan = agent('planner', {});\nconst x = eval('1');" });
    const issues = issuesOf(json);
    expect(brief(issues)).toEqual([['CODE_UNSUPPORTED', 'code.x', 'code 2:11: `eval` is not allowed: the code is never run']]);
    expect([issues[0]!.line, issues[0]!.column]).toEqual([1, json.indexOf('"const') + 1]);
  });
});
