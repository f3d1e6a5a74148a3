import { describe, expect, it } from 'vitest';
import { asRunId } from '../ids.ts';
import { ModelError } from '../model/errors.ts';
import { ScriptedProvider, type Script } from '../model/scripted.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { runWorkflow, type RunOptions } from './runWorkflow.ts';
import type { RunnableTool } from './runNode.ts';

const upper: RunnableTool = {
  name: 'upper',
  inputs: { text: { type: 'string' } },
  output: { type: 'object', properties: { text: { type: 'string' } } },
  run: ({ text }) => {
    if (typeof text !== 'string' || text === 'boom') throw Object.assign(new Error(`cannot upper ${String(text)}`), { code: 'BAD_INPUT' });
    return { text: text.toUpperCase() };
  },
};
const toolMap = new Map([[upper.name, upper]]);
const tools = { get: (n: string) => toolMap.get(n), list: () => [...toolMap.values()] };

function graphOf(yaml: string) {
  return parseWorkflow(yaml, { tools }).graph;
}

function run(yaml: string, script: Script, extra: Partial<RunOptions> = {}) {
  const provider = new ScriptedProvider(script);
  return runWorkflow(graphOf(yaml), {
    runId: asRunId('r1'), taskKey: '0', taskInput: { question: 'q?' }, seed: 1, provider, tools, ...extra,
  });
}

const byNode = (events: { nodeId: string }[]) => events.map((e) => e.nodeId);
const statusOf = (events: Array<{ nodeId: string; status: string; attempt: number }>) =>
  Object.fromEntries(events.map((e) => [`${e.nodeId}#${e.attempt}`, e.status]));

const chain = `
name: chain
roles: { a: { kind: planner }, b: { kind: executor } }
nodes:
  - { id: first, role: a, prompt: "Q {{q}}", inputs: { q: task.question } }
  - { id: second, role: b, prompt: "P {{first}}", inputs: { first: first } }
  - { id: up, tool: upper, inputs: { text: second } }
`;

describe('engine ordering', () => {
  it('runs a chain in dependency order, passing outputs down and rendering prompts', async () => {
    const prompts: string[] = [];
    const out = await run(chain, (r) => { prompts.push(r.prompt); return r.prompt.startsWith('Q') ? 'plan' : 'done'; });
    expect(byNode(out.events)).toEqual(['first', 'second', 'up']);
    expect(prompts).toEqual(['Q q?', 'P plan']);
    expect(out.status).toBe('completed');
    expect(out.answer).toEqual({ text: 'DONE' });
    expect(out.events.map((e) => e.seq)).toEqual([0, 1, 2]);
    expect(out.events[1]!.inputs).toEqual({ first: 'plan' });
  });

  it('follows explicit hops order one node at a time', async () => {
    const yaml = `
name: hops
roles: { a: { kind: executor } }
nodes:
  - { id: x, role: a, prompt: x }
  - { id: y, role: a, prompt: y }
  - { id: z, role: a, prompt: "{{x}}{{y}}", inputs: { x: x, y: y } }
hops: [y, x, z]
`;
    let live = 0;
    let peak = 0;
    const out = await run(yaml, async (r) => { live++; peak = Math.max(peak, live); await new Promise((s) => setTimeout(s, 5)); live--; return r.prompt; });
    expect(byNode(out.events)).toEqual(['y', 'x', 'z']);
    expect(peak).toBe(1);
    expect(out.answer).toBe('xy');
  });

  it('runs independent nodes concurrently, never more than the limit', async () => {
    const yaml = `
name: fan
roles: { a: { kind: executor } }
limits: { concurrency: 3 }
nodes:
${[1, 2, 3, 4, 5, 6, 7].map((i) => `  - { id: n${i}, role: a, prompt: "${i}" }`).join('\n')}
  - { id: sink, role: a, prompt: sum, inputs: { ${[1, 2, 3, 4, 5, 6, 7].map((i) => `n${i}: n${i}`).join(', ')} } }
`;
    let live = 0;
    let peak = 0;
    const out = await run(yaml, async (r) => { live++; peak = Math.max(peak, live); await new Promise((s) => setTimeout(s, 20)); live--; return r.prompt; });
    expect(peak).toBe(3);
    expect(out.events).toHaveLength(8);
    expect(out.events[7]!.nodeId).toBe('sink');
    const peak2 = { v: 0 };
    live = 0;
    await run(yaml, async () => { live++; peak2.v = Math.max(peak2.v, live); await new Promise((s) => setTimeout(s, 10)); live--; return 'x'; }, { concurrency: 1 });
    expect(peak2.v).toBe(1);
  });
});

describe('engine failure classes', () => {
  it('execution: unparsable output under a schema, then downstream cascades (not run)', async () => {
    const yaml = `
name: schema
roles: { a: { kind: executor } }
nodes:
  - { id: s, role: a, prompt: p, output: { schema: { type: object, properties: { n: { type: number } }, required: [n] } } }
  - { id: t, role: a, prompt: "{{s}}", inputs: { s: s } }
  - { id: u, role: a, prompt: "{{t}}", inputs: { t: t } }
`;
    let calls = 0;
    const out = await run(yaml, () => { calls++; return '{"n": 1'; });
    expect(calls).toBe(1);
    const [s, t, u] = out.events;
    expect(s).toMatchObject({ nodeId: 's', status: 'failed', failureClass: 'execution', errorCode: 'UNPARSABLE_OUTPUT' });
    expect(s!.calls).toHaveLength(1);
    expect(s!.calls[0]!.completion).toBe('{"n": 1');
    expect(t).toMatchObject({ nodeId: 't', status: 'cascade', failureClass: 'cascade', causes: ['s'] });
    expect(u).toMatchObject({ nodeId: 'u', status: 'cascade', causes: ['t'] });
    expect(out.status).toBe('failed');
  });

  it('execution: schema-valid JSON that breaks the contract, and a failing named check', async () => {
    const yaml = `
name: contract
roles: { a: { kind: executor } }
nodes:
  - { id: s, role: a, prompt: p, output: { schema: { type: object, properties: { n: { type: number } }, required: [n] } } }
  - { id: c, role: a, prompt: p, output: { checks: [numeric_answer] } }
answer: s
`;
    const out = await run(yaml, (r) => (r.jsonSchema ? '{"n": "x"}' : 'seven'));
    const s = out.events.find((e) => e.nodeId === 's')!;
    const c = out.events.find((e) => e.nodeId === 'c')!;
    expect(s).toMatchObject({ status: 'failed', failureClass: 'execution', errorCode: 'CONTRACT_VIOLATION' });
    expect(s.message).toContain('output/n must be number');
    expect(c).toMatchObject({ status: 'failed', failureClass: 'execution', errorCode: 'CONTRACT_VIOLATION' });
    expect(c.message).toContain('numeric_answer');
  });

  it('execution: a node timeout is recorded as TIMEOUT and the call as errored', async () => {
    const yaml = `
name: slow
roles: { a: { kind: executor } }
nodes:
  - { id: s, role: a, prompt: p, timeout_ms: 30 }
`;
    // The late answer comes long after the 30 ms node timeout: ending well before it shows the timeout cut
    // the call. Both far apart (20 s, 10 s) so that a loaded machine's pauses cannot blur the two.
    const t0 = Date.now();
    const out = await run(yaml, (r) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve('late'), 20_000);
      r.signal?.addEventListener('abort', () => clearTimeout(timer));
    }));
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(out.events[0]).toMatchObject({ status: 'failed', failureClass: 'execution', errorCode: 'TIMEOUT' });
    expect(out.events[0]!.calls[0]!.error).toContain('TIMEOUT');
  });

  it('execution: a tool that throws on its input', async () => {
    const out = await run(chain, () => 'boom');
    expect(out.events[2]).toMatchObject({ nodeId: 'up', status: 'failed', failureClass: 'execution', errorCode: 'TOOL_ERROR' });
    expect(out.events[2]!.message).toContain('BAD_INPUT');
  });

  it('infrastructure: a model that fails to load is the harness\'s fault, and the run goes on', async () => {
    const out = await run(chain, () => { throw new ModelError('MODEL_NOT_FOUND', 'Model file not found: /x.gguf', '/x.gguf'); });
    expect(out.events[0]).toMatchObject({ status: 'failed', failureClass: 'infrastructure', errorCode: 'MODEL_NOT_FOUND' });
    expect(out.events.slice(1).map((e) => e.status)).toEqual(['cascade', 'cascade']);
  });

  it('execution: any other error thrown by the agent call', async () => {
    const out = await run(chain, () => { throw new Error('agent blew up'); });
    expect(out.events[0]).toMatchObject({ failureClass: 'execution', errorCode: 'AGENT_ERROR', message: 'agent blew up' });
  });

  it('wiring: a tool missing at run time, a missing output field, a missing task field, the hop limit', async () => {
    const noTools = { get: () => undefined };
    const out = await run(chain, () => 'x', { tools: noTools });
    expect(out.events[2]).toMatchObject({ nodeId: 'up', status: 'failed', failureClass: 'wiring', errorCode: 'UNKNOWN_TOOL' });

    const fieldYaml = `
name: field
roles: { a: { kind: executor } }
nodes:
  - { id: s, role: a, prompt: p, output: { schema: { type: object, properties: { a: { type: string } } } } }
  - { id: t, role: a, prompt: "{{v}}", inputs: { v: s.b } }
`;
    const f = await run(fieldYaml, () => '{"a":"x"}');
    expect(f.events[1]).toMatchObject({ nodeId: 't', status: 'failed', failureClass: 'wiring', errorCode: 'MISSING_FIELD' });

    const g = await run(chain, () => 'x', { taskInput: { other: 1 } });
    expect(g.events[0]).toMatchObject({ status: 'failed', failureClass: 'wiring', errorCode: 'MISSING_INPUT' });

    const h = await run(chain, () => 'x', { maxHops: 2 });
    expect(h.events.map((e) => e.errorCode ?? e.status)).toEqual(['ok', 'ok', 'HOP_LIMIT']);
    expect(h.events[2]!.failureClass).toBe('wiring');
  });
});

describe('engine edges, loops and cancellation', () => {
  const loop = `
name: loop
roles: { s: { kind: executor }, v: { kind: verifier } }
nodes:
  - { id: solve, role: s, prompt: "solve{{#feedback}} again{{/feedback}}" }
  - id: check
    role: v
    prompt: "check {{solve}}"
    inputs: { solve: solve }
    output: { schema: { type: object, properties: { verdict: { type: string } }, required: [verdict] } }
  - { id: final, role: s, prompt: "final {{solve}}", inputs: { solve: solve, check: check } }
edges:
  - { from: check, to: solve, port: feedback, condition: 'verdict == "revise"', max_iterations: 2 }
`;
  it('a bounded loop re-enters its target at most max_iterations times', async () => {
    const out = await run(loop, (r) => (r.prompt.startsWith('check') ? '{"verdict":"revise"}' : r.prompt));
    expect(out.events.map((e) => `${e.nodeId}#${e.attempt}`)).toEqual(['solve#1', 'check#1', 'solve#2', 'check#2', 'solve#3', 'check#3', 'final#1']);
    expect(out.events[2]!.calls[0]!.prompt).toBe('solve again');
    expect(out.answer).toBe('final solve again');
  });

  it('a loop with the literal condition `true` iterates to its bound', async () => {
    const out = await run(loop.replace(`condition: 'verdict == "revise"'`, "condition: 'true'"), (r) => (r.prompt.startsWith('check') ? '{"verdict":"ok"}' : r.prompt));
    expect(out.events.filter((e) => e.nodeId === 'solve').map((e) => e.attempt)).toEqual([1, 2, 3]);
  });

  it('a loop whose condition is false does not re-enter', async () => {
    const out = await run(loop, (r) => (r.prompt.startsWith('check') ? '{"verdict":"ok"}' : r.prompt));
    expect(out.events.map((e) => e.nodeId)).toEqual(['solve', 'check', 'final']);
  });

  it('a false condition skips the target; an optional input reads null instead of cascading', async () => {
    const yaml = `
name: cond
roles: { a: { kind: executor } }
nodes:
  - { id: gate, role: a, prompt: g, output: { schema: { type: object, properties: { go: { type: boolean } }, required: [go] } } }
  - { id: branch, role: a, prompt: b }
  - { id: broken, role: a, prompt: x, output: { schema: { type: object } } }
  - { id: join, role: a, prompt: "j {{branch}}|{{broken}}", inputs: { branch: { from: branch, optional: true }, broken: { from: broken, optional: true } } }
edges:
  - { from: gate, to: branch, type: control, condition: go }
`;
    const out = await run(yaml, (r) => (r.prompt === 'g' ? '{"go": false}' : r.prompt === 'x' ? 'not json' : r.prompt));
    expect(statusOf(out.events)).toEqual({ 'gate#1': 'ok', 'branch#1': 'skipped', 'broken#1': 'failed', 'join#1': 'ok' });
    expect(out.answer).toBe('j |');
  });

  it('each call gets a distinct deterministic seed', async () => {
    const seeds1: number[] = [];
    const seeds2: number[] = [];
    await run(chain, (r) => { seeds1.push(r.seed); return 'x'; });
    await run(chain, (r) => { seeds2.push(r.seed); return 'x'; });
    expect(seeds1).toEqual(seeds2);
    expect(new Set(seeds1).size).toBe(2);
    const seeds3: number[] = [];
    await run(chain, (r) => { seeds3.push(r.seed); return 'x'; }, { seed: 2 });
    expect(seeds3).not.toEqual(seeds1);
  });

  it('cancellation stops the run: in-flight call cancelled, the rest skipped', async () => {
    const ac = new AbortController();
    const out = await run(chain, (r) => new Promise((resolve) => {
      setTimeout(() => ac.abort(), 10);
      const t = setTimeout(() => resolve('late'), 1000);
      r.signal?.addEventListener('abort', () => clearTimeout(t));
    }), { signal: ac.signal });
    expect(out.status).toBe('cancelled');
    expect(out.events[0]).toMatchObject({ nodeId: 'first', status: 'failed', failureClass: 'infrastructure', errorCode: 'CANCELLED' });
    expect(out.events.slice(1).map((e) => e.status)).toEqual(['skipped', 'skipped']);
  });
});
