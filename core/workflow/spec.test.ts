import { describe, expect, it } from 'vitest';
import { SpecError, type SpecIssue } from './errors.ts';
import { loadWorkflowFile, parseWorkflow } from './load.ts';
import { workflowJsonSchema } from './spec.ts';

const calculator = {
  inputs: { expression: { type: 'string' as const } },
  output: { type: 'object', properties: { value: { type: 'number' } }, required: ['value'] },
};
const tools = { get: (n: string) => (n === 'calculator' ? calculator : undefined), list: () => [{ name: 'calculator' }] };

function issuesOf(yaml: string): SpecIssue[] {
  try {
    if (yaml === '') loadWorkflowFile('wf.yaml', { tools });
    parseWorkflow(yaml, { file: 'wf.yaml', tools });
  } catch (e) {
    expect(e).toBeInstanceOf(SpecError);
    return (e as SpecError).issues;
  }
  throw new Error('expected the workflow to be rejected');
}

const roles = 'roles: { planner: { kind: planner }, solver: { kind: executor } }';

describe('malformed workflows: each gets a located, specific error', () => {
  const cases: Array<{ name: string; yaml: string; code: string; message: RegExp; path?: string; line?: number }> = [
    {
      name: 'YAML syntax error',
      yaml: `name: x\nroles: { a: { kind: planner }\nnodes: []\n`,
      code: 'YAML_SYNTAX', message: /Flow map .* must .* end with a \}/, line: 3,
    },
    {
      name: 'unknown role on a node',
      yaml: `name: x\n${roles}\nnodes:\n  - id: a\n    role: critic\n    prompt: hi\n`,
      code: 'UNKNOWN_ROLE', message: /names role "critic", which is not defined \(roles: planner, solver\)/, path: 'nodes[0].role', line: 5,
    },
    {
      name: 'dangling edge',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\nedges:\n  - { from: a, to: ghost }\n`,
      code: 'DANGLING_EDGE', message: /edge a -> ghost: there is no node "ghost"/, path: 'edges[0].to', line: 6,
    },
    {
      name: 'duplicate node id',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\n  - { id: a, role: solver }\n`,
      code: 'DUPLICATE_ID', message: /duplicate node id "a" \(first defined at nodes\[0\]\)/, path: 'nodes[1].id', line: 5,
    },
    {
      name: 'unbounded cycle',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner, inputs: { b: b } }\n  - { id: b, role: solver, inputs: { a: a } }\n`,
      code: 'UNBOUNDED_CYCLE', message: /cycle (a -> b -> a|b -> a -> b) has no edge with `max_iterations`/,
    },
    {
      name: 'port type mismatch between a contract and a tool',
      yaml: `name: x\n${roles}\nnodes:\n  - id: a\n    role: solver\n    output: { schema: { type: object, properties: { n: { type: number } } } }\n  - { id: c, tool: calculator, inputs: { expression: a.n } }\n`,
      code: 'PORT_TYPE_MISMATCH', message: /port "expression" of "c" wants string but a\.n produces number/, path: 'nodes[1].inputs.expression',
    },
    {
      name: 'unknown tool',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: c, tool: websearch }\n`,
      code: 'UNKNOWN_TOOL', message: /unknown tool "websearch" \(known: calculator\)/, path: 'nodes[0].tool', line: 4,
    },
    {
      name: 'missing required field (schema)',
      yaml: `${roles}\nnodes:\n  - { id: a, role: planner }\n`,
      code: 'SCHEMA', message: /missing required field "name"|expected string/, path: 'name',
    },
    {
      name: 'unknown field (typo)',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner, promt: hi }\n`,
      code: 'SCHEMA', message: /unknown field\(s\): promt/, path: 'nodes[0]', line: 4,
    },
    {
      name: 'bad role kind',
      yaml: `name: x\nroles: { p: { kind: wizard } }\nnodes:\n  - { id: a, role: p }\n`,
      code: 'SCHEMA', message: /generator|planner/, path: 'roles.p.kind', line: 2,
    },
    {
      name: 'tool missing a required port',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: c, tool: calculator }\n`,
      code: 'MISSING_PORT', message: /tool "calculator" needs input port "expression" \(string\)/,
    },
    {
      name: 'unknown port on a tool',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: solver }\n  - { id: c, tool: calculator, inputs: { expression: a, extra: a } }\n`,
      code: 'UNKNOWN_PORT', message: /tool "calculator" has no input port "extra"/, path: 'nodes[1].inputs.extra',
    },
    {
      name: 'input from a node that does not exist',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: solver, inputs: { p: plan } }\n`,
      code: 'UNKNOWN_NODE', message: /reads from "plan", but there is no node "plan"/, path: 'nodes[0].inputs.p',
    },
    {
      name: 'template uses a port the node does not have',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: solver, prompt: "Use {{plan}}" }\n`,
      code: 'BAD_TEMPLATE', message: /uses \{\{plan\}\} but the node has no input port "plan"/, path: 'nodes[0].prompt',
    },
    {
      name: 'unknown named check in a contract',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: solver, output: { checks: [no_future_leakage] } }\n`,
      code: 'UNKNOWN_CHECK', message: /unknown check "no_future_leakage"/, path: 'nodes[0].output.checks[0]',
    },
    {
      name: 'bad condition syntax',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\n  - { id: b, role: solver }\nedges:\n  - { from: a, to: b, condition: "verdict === 'x'" }\n`,
      code: 'BAD_CONDITION', message: /condition "verdict === 'x'": unexpected character '=' at column 11/, path: 'edges[0].condition',
    },
    {
      name: 'a condition reading a field the source does not produce',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner, output: { schema: { type: object, properties: { verdict: { enum: [ok, revise] } } } } }\n  - { id: b, role: solver }\nedges:\n  - { from: a, to: b, condition: 'verdikt == "revise"' }\n`,
      code: 'BAD_CONDITION', message: /condition reads field "verdikt", but a outputs only verdict/, path: 'edges[0].condition',
    },
    {
      name: 'a condition comparing with a value outside the enum',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner, output: { schema: { type: object, properties: { verdict: { enum: [ok, revise] } } } } }\n  - { id: b, role: solver }\nedges:\n  - { from: a, to: b, condition: 'verdict == "revize"' }\n`,
      code: 'BAD_CONDITION', message: /compares verdict with "revize", which is not one of its values \("ok", "revise"\)/, path: 'edges[0].condition',
    },
    {
      name: 'a missing workflow file',
      yaml: '',
      code: 'FILE_NOT_FOUND', message: /workflow file not found/,
    },
    {
      name: 'mixed notations',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\nsteps:\n  - { id: b, role: solver }\n`,
      code: 'MIXED_NOTATION', message: /use one notation: found both `nodes` and `steps`/,
    },
    {
      name: 'hops that contradict a dependency',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\n  - { id: b, role: solver, inputs: { a: a } }\nhops: [b, a]\n`,
      code: 'BAD_HOPS', message: /hops put "b" before "a", but b depends on a/, path: 'hops',
    },
    {
      name: 'several sinks without an answer',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\n  - { id: b, role: solver }\n`,
      code: 'BAD_ANSWER', message: /2 final nodes \(a, b\); set `answer: <node>`/,
    },
    {
      name: 'agent node without a role',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, prompt: hi }\n`,
      code: 'MISSING_ROLE', message: /agent node "a" needs a `role`/,
    },
    {
      name: 'a role naming an undefined model',
      yaml: `name: x\nroles: { p: { kind: planner, model: big } }\nnodes:\n  - { id: a, role: p }\n`,
      code: 'UNKNOWN_MODEL', message: /role "p" names model "big", which is not in `models`/, path: 'roles.p.model',
    },
    {
      name: 'invalid JSON schema in a contract',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: solver, output: { schema: { type: nonsense } } }\n`,
      code: 'INVALID_SCHEMA', message: /not a valid JSON Schema/, path: 'nodes[0].output.schema',
    },
    {
      name: 'max_iterations on an edge that closes no loop',
      yaml: `name: x\n${roles}\nnodes:\n  - { id: a, role: planner }\n  - { id: b, role: solver }\nedges:\n  - { from: a, to: b, max_iterations: 2 }\nanswer: b\n`,
      code: 'UNBOUNDED_CYCLE', message: /not a loop/,
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      const issues = issuesOf(c.yaml);
      const hit = issues.find((i) => i.code === c.code);
      expect(hit, `issues were: ${JSON.stringify(issues)}`).toBeDefined();
      expect(hit!.message).toMatch(c.message);
      expect(hit!.file).toBe('wf.yaml');
      if (c.path !== undefined) {
        const p = hit!.path.reduce<string>((s, seg) => (typeof seg === 'number' ? `${s}[${seg}]` : s ? `${s}.${seg}` : String(seg)), '');
        expect(p).toBe(c.path);
      }
      if (c.line !== undefined) expect(hit!.line).toBe(c.line);
    });
  }

  it('the error message lists every issue with file, line and path', () => {
    try {
      parseWorkflow(`name: x\n${roles}\nnodes:\n  - { id: a, role: ghost }\n  - { id: c, tool: nope }\n`, { file: 'wf.yaml', tools });
      throw new Error('not rejected');
    } catch (e) {
      const msg = (e as Error).message;
      expect(msg).toContain('wf.yaml:4:');
      expect(msg).toContain('at nodes[0].role');
      expect(msg).toContain('[UNKNOWN_ROLE]');
      expect(msg).toContain('wf.yaml:5:');
      expect(msg).toContain('[UNKNOWN_TOOL]');
    }
  });
});

describe('notations compile to one graph', () => {
  const steps = `
name: s
${roles}
steps:
  - { id: plan, role: planner, prompt: "Q: {{task.question}}" }
  - { id: solve, role: solver, prompt: "{{plan}}", depends_on: [plan] }
`;
  const agents = `
name: s
${roles}
agents:
  - { name: plan, role: planner, prompt: "Q: {{task.question}}" }
  - { name: solve, role: solver, prompt: "{{plan}}" }
flows:
  - { source: plan, target: solve, type: data }
`;
  const nodes = `
name: s
${roles}
nodes:
  - { id: plan, role: planner, prompt: "Q: {{task.question}}" }
  - { id: solve, role: solver, prompt: "{{plan}}", inputs: { plan: plan } }
`;
  it('steps, agents+flows and nodes give the same nodes, edges and answer', () => {
    const shape = (yaml: string) => {
      const g = parseWorkflow(yaml, { tools }).graph;
      return {
        nodes: g.nodes.map((n) => ({ id: n.id, role: n.role, kind: n.kind, prompt: n.prompt, ports: n.inputs.map((p) => [p.name, p.source]) })),
        edges: g.edges.map((e) => [e.from, e.to, e.type, e.port]),
        answer: g.answer,
      };
    };
    const a = shape(steps);
    expect(a.edges).toEqual([['plan', 'solve', 'data', 'plan']]);
    expect(a.answer).toEqual({ node: 'solve' });
    expect(shape(agents)).toEqual(a);
    expect(shape(nodes)).toEqual(a);
  });

  it('a bounded loop with max_iterations is accepted and the loop port is optional', () => {
    const g = parseWorkflow(`
name: l
${roles}
nodes:
  - { id: a, role: solver, prompt: "{{#fb}}{{fb}}{{/fb}}" }
  - { id: b, role: planner, inputs: { a: a } }
edges:
  - { from: b, to: a, port: fb, max_iterations: 3 }
`, { tools }).graph;
    expect(g.nodes[0]!.inputs).toMatchObject([{ name: 'fb', optional: true, loop: true }]);
    expect(g.answer.node).toBe('b');
  });

  it('the generated JSON Schema describes the document', () => {
    const schema = workflowJsonSchema() as { properties: Record<string, unknown>; required: string[] };
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'roles']));
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['roles', 'nodes', 'steps', 'agents', 'flows', 'hops', 'limits']));
  });
});

describe('schema/workflow.schema.json', () => {
  it('is the schema generated from the zod spec (run `npm run schema` after changing spec.ts)', async () => {
    const { readFileSync } = await import('node:fs');
    const onDisk = JSON.parse(readFileSync(new URL('../../schema/workflow.schema.json', import.meta.url), 'utf8'));
    expect(onDisk).toEqual({ title: 'Flowlab workflow', ...workflowJsonSchema() });
  });
});
