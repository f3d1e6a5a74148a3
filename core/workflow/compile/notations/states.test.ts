import { describe, expect, it } from 'vitest';
import { defaultTools } from '../../../tools/index.ts';
import { SpecError, formatPath, type SpecIssue } from '../../errors.ts';
import { parseWorkflow } from '../../load.ts';

const tools = defaultTools();
const head = 'name: sm\nroles: { planner: { kind: planner }, solver: { kind: executor } }\n';
/** states a (planner), b (solver), c (solver), written from line 4 on. */
const abc = 'states:\n  - { id: a, role: planner }\n  - { id: b, role: solver }\n  - { id: c, role: solver }\n';

function issuesOf(yaml: string): SpecIssue[] {
  try {
    parseWorkflow(head + yaml, { file: 'sm.yaml', tools });
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return (e as SpecError).issues;
  }
  throw new Error('expected the state machine to be rejected');
}
const brief = (issues: SpecIssue[]) => issues.map((i) => [i.code, formatPath(i.path), i.message]);

describe('state machines: semantics', () => {
  it('a transition feeds the port that reads from its source, else a port named after it, else `port`; the answer is the terminal state', () => {
    const g = parseWorkflow(`${head}states:
  - { id: a, role: solver, prompt: "{{#again}}{{again}}{{/again}}", output: { schema: { type: object, properties: { expression: { type: string } } } } }
  - { id: c, tool: calculator, inputs: { expression: a.expression } }
  - { id: d, role: planner, prompt: "{{c}}" }
transitions:
  - { from: a, to: c }
  - { from: c, to: d }
  - { from: d, to: a, port: again, max_iterations: 1 }
start: a
terminal: [d]
`, { tools }).graph;
    expect(g.notation).toBe('states');
    expect(g.edges.map((e) => [e.from, e.to, e.port, e.maxIterations])).toEqual([['a', 'c', 'expression', undefined], ['c', 'd', 'c', undefined], ['d', 'a', 'again', 1]]);
    expect(g.nodes[0]!.inputs.map((p) => [p.name, p.loop, p.optional])).toEqual([['again', true, true]]);
    expect(g.answer).toEqual({ node: 'd' });
  });

  it('a branch on conditions: each branch ends in a terminal state; with two, `answer` picks the one that answers', () => {
    const yaml = `${abc}transitions:
  - { from: a, to: b, condition: 'ok' }
  - { from: a, to: c, condition: '!ok' }
start: a
terminal: [b, c]
`;
    expect(brief(issuesOf(yaml))).toEqual([['BAD_ANSWER', '', 'the workflow has 2 final nodes (b, c); set `answer: <node>`']]);
    const g = parseWorkflow(`${head}${yaml}answer: c\n`, { tools }).graph;
    expect(g.answer).toEqual({ node: 'c' });
    expect(g.edges.map((e) => [e.from, e.to, e.condition])).toEqual([['a', 'b', { op: 'truthy', path: ['ok'] }], ['a', 'c', { op: 'not', arg: { op: 'truthy', path: ['ok'] } }]]);
  });
});

describe('state machines: malformed, each with its code, path, message and line', () => {
  const cases: Array<{ name: string; yaml: string; issues: Array<[string, string, string]>; line?: number }> = [
    {
      name: 'no start state',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\nterminal: [c]\n`,
      issues: [['BAD_START', 'start', 'a state machine needs `start: <state>` (states: a, b, c)']],
    },
    {
      name: 'start is not a state',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\nstart: plan\nterminal: [c]\n`,
      issues: [['BAD_START', 'start', 'start "plan" is not a state (states: a, b, c)']], line: 10,
    },
    {
      name: 'no terminal states',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\nstart: a\nterminal: []\n`,
      issues: [
        ['BAD_TERMINAL', 'terminal', 'a state machine needs `terminal: [<state>, ...]`, the states where it stops (states: a, b, c)'],
        ['BAD_TERMINAL', 'states[2]', 'state "c" has no transition out and is not terminal: add a transition from it or list it in `terminal`'],
      ], line: 11,
    },
    {
      name: 'a terminal that is not a state',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\nstart: a\nterminal: [c, done]\n`,
      issues: [['BAD_TERMINAL', 'terminal[1]', 'terminal "done" is not a state (states: a, b, c)']], line: 11,
    },
    {
      name: 'a terminal state listed twice',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\nstart: a\nterminal: [c, c]\n`,
      issues: [['BAD_TERMINAL', 'terminal[1]', 'terminal state "c" is listed twice']],
    },
    {
      name: 'a terminal state with a forward transition out',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\nstart: a\nterminal: [b, c]\n`,
      issues: [['BAD_TERMINAL', 'terminal[0]', 'terminal state "b" has a transition to "c" (transitions[1]); the machine stops at a terminal state (only a loop transition with max_iterations may leave it)']], line: 11,
    },
    {
      name: 'a state with no transition out that is not terminal (a dead end)',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: a, to: c }\nstart: a\nterminal: [b]\nanswer: b\n`,
      issues: [['BAD_TERMINAL', 'states[2]', 'state "c" has no transition out and is not terminal: add a transition from it or list it in `terminal`']], line: 6,
    },
    {
      name: 'a state unreachable from the start state',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: c, to: b }\nstart: a\nterminal: [b]\n`,
      issues: [['UNREACHABLE_STATE', 'states[2]', 'state "c" cannot be reached from the start state "a" by transitions']], line: 6,
    },
    {
      name: 'an unbounded back-transition (a loop without max_iterations)',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\n  - { from: b, to: a, condition: 'retry' }\nstart: a\nterminal: [c]\n`,
      issues: [['UNBOUNDED_CYCLE', 'transitions[2]', 'cycle a -> b -> a has no edge with `max_iterations`; bound the loop']], line: 10,
    },
    {
      name: 'a transition to no state',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c }\n  - { from: c, to: done }\nstart: a\nterminal: [c]\n`,
      issues: [['DANGLING_EDGE', 'transitions[2].to', 'edge c -> done: there is no node "done"']], line: 10,
    },
    {
      name: 'a transition condition that does not parse',
      yaml: `${abc}transitions:\n  - { from: a, to: b, condition: 'verdict = "ok"' }\n  - { from: b, to: c }\nstart: a\nterminal: [c]\n`,
      issues: [['BAD_CONDITION', 'transitions[0].condition', 'condition "verdict = "ok"": unexpected character \'=\' at column 9']], line: 8,
    },
    {
      name: 'max_iterations on a forward transition (no loop)',
      yaml: `${abc}transitions:\n  - { from: a, to: b }\n  - { from: b, to: c, max_iterations: 2 }\nstart: a\nterminal: [c]\n`,
      issues: [
        ['BAD_TERMINAL', 'states[1]', 'state "b" has no transition out and is not terminal: add a transition from it or list it in `terminal`'],
        ['UNBOUNDED_CYCLE', 'transitions[1].max_iterations', 'edge b -> c has max_iterations but c does not lead back to b: it is not a loop'],
      ],
    },
    {
      name: 'a transition into a tool that does not read its source: the source-named port is unknown',
      yaml: 'states:\n  - { id: a, role: solver }\n  - { id: calc, tool: calculator }\ntransitions:\n  - { from: a, to: calc }\nstart: a\nterminal: [calc]\n',
      issues: [
        ['MISSING_PORT', 'states[1].inputs', 'tool "calculator" needs input port "expression" (string), which node "calc" does not wire'],
        ['UNKNOWN_PORT', 'transitions[0]', 'tool "calculator" has no input port "a" (ports: expression)'],
      ],
    },
    {
      name: 'transitions beside another notation',
      yaml: 'nodes:\n  - { id: a, role: planner }\ntransitions:\n  - { from: a, to: a }\n',
      issues: [['MIXED_NOTATION', 'transitions', '`transitions` belong to the `states` notation']], line: 6,
    },
    {
      name: 'a state id used twice',
      yaml: 'states:\n  - { id: a, role: planner }\n  - { id: a, role: solver }\ntransitions: []\nstart: a\nterminal: [a]\n',
      issues: [['DUPLICATE_ID', 'states[1].id', 'duplicate node id "a" (first defined at states[0])']], line: 5,
    },
    {
      name: 'an unknown field on a transition (schema)',
      yaml: `${abc}transitions:\n  - { from: a, to: b, when: ok }\nstart: a\nterminal: [b]\n`,
      issues: [['SCHEMA', 'transitions[0]', 'unknown field(s): when']], line: 8,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const issues = issuesOf(c.yaml);
      expect(brief(issues)).toEqual(c.issues);
      expect(issues[0]!.file).toBe('sm.yaml');
      if (c.line !== undefined) expect(issues[0]!.line).toBe(c.line);
    });
  }
});
