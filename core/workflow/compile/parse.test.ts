import { describe, expect, it } from 'vitest';
import type { WorkflowDoc } from '../spec.ts';
import { parseWorkflowDoc } from './parse.ts';

const tools = { get: (n: string) => (n === 'calculator' ? { inputs: { expression: { type: 'string' as const } }, output: { type: 'object' } } : undefined), list: () => [{ name: 'calculator' }] };
const roles = { planner: { kind: 'planner' as const }, solver: { kind: 'executor' as const, model: 'big' } };

describe('parse stage: document -> ParsedWorkflow', () => {
  it('reads the steps notation: defaults applied, input sources resolved, depends_on listed as declared edges', () => {
    const doc: WorkflowDoc = {
      name: 's',
      models: { big: { path: 'big.gguf', context_size: 2048 } },
      roles,
      steps: [
        { id: 'plan', role: 'planner', prompt: 'Q: {{q}}', inputs: { q: 'task.question' } },
        { id: 'solve', role: 'solver', inputs: { p: { from: 'plan.steps', type: 'array' } }, depends_on: ['plan'], max_tokens: 64, wired_by: ['planner', 'human'] },
      ],
    };
    const { parsed, issues } = parseWorkflowDoc(doc, { tools });
    expect(issues).toEqual([]);
    expect(parsed!.notation).toBe('steps');
    expect(parsed!.models.get('big')).toEqual({ name: 'big', path: 'big.gguf', contextSize: 2048, threads: undefined, gpu: undefined });
    expect(parsed!.roles.get('solver' as never)).toMatchObject({ kind: 'executor', model: 'big', instructions: '', hintSlots: 0 });
    const [plan, solve] = parsed!.nodes;
    expect(plan).toMatchObject({ id: 'plan', kind: 'agent', wiredBy: 'human', maxTokens: 128, temperature: 0, path: ['steps', 0] });
    expect(plan!.inputs).toEqual([{ name: 'q', source: { kind: 'task', field: 'question' }, type: undefined, optional: false, path: ['steps', 0, 'inputs', 'q'] }]);
    expect(solve).toMatchObject({ maxTokens: 64, wiredBy: 'planner', sharedWiredBy: ['human'] });
    expect(solve!.inputs[0]!.source).toEqual({ kind: 'node', node: 'plan', field: 'steps' });
    expect(solve!.inputs[0]!.type).toBe('array');
    expect(parsed!.declaredEdges).toEqual([
      { from: 'plan', to: 'solve', type: 'data', path: ['steps', 1, 'depends_on', 0], fromPath: ['steps', 1, 'depends_on', 0], toPath: ['steps', 1, 'depends_on', 0] },
    ]);
  });

  it('reads agents + flows into the same edge shape, each endpoint located at its own key', () => {
    const doc: WorkflowDoc = {
      name: 'a',
      roles: { planner: { kind: 'planner' } },
      agents: [{ name: 'x', role: 'planner' }, { name: 'y', role: 'planner' }],
      flows: [{ source: 'x', target: 'y', condition: 'ok == true', max_iterations: 2 }],
    };
    const { parsed } = parseWorkflowDoc(doc, { tools });
    expect(parsed!.nodes.map((n) => n.id)).toEqual(['x', 'y']);
    expect(parsed!.declaredEdges).toEqual([
      { from: 'x', to: 'y', type: undefined, port: undefined, condition: 'ok == true', maxIterations: 2, path: ['flows', 0], fromPath: ['flows', 0, 'source'], toPath: ['flows', 0, 'target'] },
    ]);
  });

  it('locates each naming problem and still returns what it could read', () => {
    const doc: WorkflowDoc = {
      name: 'bad',
      roles: { planner: { kind: 'planner' } },
      nodes: [
        { id: 'a', role: 'critic', inputs: { p: 'ghost.x' } },
        { id: 'c', tool: 'websearch' },
        { id: 'a', role: 'planner' },
        { id: 'd', role: 'planner', output: { checks: ['no_such_check'] } },
      ],
    };
    const { parsed, issues } = parseWorkflowDoc(doc, { tools });
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['UNKNOWN_ROLE', ['nodes', 0, 'role']],
      ['UNKNOWN_TOOL', ['nodes', 1, 'tool']],
      ['DUPLICATE_ID', ['nodes', 2, 'id']],
      ['UNKNOWN_CHECK', ['nodes', 3, 'output', 'checks', 0]],
      ['UNKNOWN_NODE', ['nodes', 0, 'inputs', 'p']],
    ]);
    expect(issues[1]!.message).toBe('unknown tool "websearch" (known: calculator)');
    expect(issues[2]!.message).toBe('duplicate node id "a" (first defined at nodes[0])');
    expect(parsed!.nodes.map((n) => n.id)).toEqual(['a', 'c', 'd']);
  });

  it('stops with no ParsedWorkflow when there is no single notation', () => {
    const none = parseWorkflowDoc({ name: 'n', roles: {} }, { tools });
    expect(none).toEqual({ parsed: null, issues: [{ code: 'NO_NODES', path: [], message: 'the workflow has no `nodes`, `steps` or `agents`' }] });
    const mixed = parseWorkflowDoc({ name: 'm', roles: {}, nodes: [], agents: [] }, { tools });
    expect(mixed.parsed).toBeNull();
    expect(mixed.issues.map((i) => [i.code, i.path])).toEqual([['MIXED_NOTATION', ['agents']]]);
  });
});
