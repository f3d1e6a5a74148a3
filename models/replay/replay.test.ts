import { NodeFailure } from '../../core/engine/failure.ts';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { asNodeId, asRoleName, asRunId, HUMAN } from '../../core/ids.ts';
import { ModelError, type CallKey, type GenerateRequest } from '../../core/model/index.ts';
import { computeWorkflowHash, openStore, type Store } from '../../core/store/index.ts';
import type { ModelCallRecord, NodeEvent } from '../../core/trace/index.ts';
import { ReplayProvider, type RecordedCall } from './index.ts';

function recorded(taskIndex: number, nodeId: string, attempt: number, callIndex: number, over: Partial<ModelCallRecord> = {}): RecordedCall {
  return {
    taskIndex,
    nodeId,
    attempt,
    callIndex,
    role: asRoleName('solver'),
    modelRef: 'solver',
    model: 'tiny-q8.gguf',
    system: 'You solve arithmetic.',
    prompt: `Task ${taskIndex}: what is 2+${callIndex}?`,
    params: { temperature: 0.8, maxTokens: 32 },
    seed: 1000 + taskIndex,
    completion: `${2 + callIndex}`,
    promptTokens: 17,
    completionTokens: 2,
    ms: 250,
    startedAt: 1_700_000_000_000,
    stopReason: 'eos',
    ...over,
  };
}

function request(key: CallKey, over: Partial<GenerateRequest> = {}): GenerateRequest {
  return {
    role: asRoleName('solver'),
    model: 'solver',
    system: 'You solve arithmetic.',
    prompt: `Task ${key.taskKey}: what is 2+${key.callIndex}?`,
    params: { temperature: 0.8, maxTokens: 32 },
    seed: 1,
    key,
    ...over,
  };
}

async function rejection(p: Promise<unknown>): Promise<ModelError> {
  try {
    await p;
  } catch (err) {
    expect(err instanceof ModelError || err instanceof NodeFailure).toBe(true);
    return err as ModelError;
  }
  throw new Error('expected a rejection');
}

const key = (taskKey: string, nodeId: string, attempt: number, callIndex: number): CallKey => ({ taskKey, nodeId, attempt, callIndex });

describe('ReplayProvider', () => {
  it('returns the recorded completion, tokens, seed and model', async () => {
    const p = new ReplayProvider([recorded(0, 'solve', 1, 0), recorded(0, 'solve', 1, 1), recorded(3, 'solve', 2, 0)]);
    expect(p.name).toBe('replay');
    expect(p.modelsLoaded()).toBe(0);
    const r = await p.generate(request(key('0', 'solve', 1, 1), { seed: 999 }));
    expect(r).toMatchObject({ text: '3', tokens: { prompt: 17, completion: 2 }, seed: 1000, model: 'tiny-q8.gguf', stopReason: 'eos' });
    expect(r.ms).toBeGreaterThanOrEqual(0);
    expect(r.ms).toBeLessThan(250); // real lookup time, not the recorded 250 ms
    const r3 = await p.generate(request(key('3', 'solve', 2, 0)));
    expect(r3.seed).toBe(1003);
    expect(p.unusedCalls()).toEqual([key('0', 'solve', 1, 0)]);
    expect(p.modelsLoaded()).toBe(0);
    await p.dispose();
  });

  it('throws REPLAY_MISSING naming the key', async () => {
    const p = new ReplayProvider([recorded(0, 'solve', 1, 0)]);
    for (const k of [key('1', 'solve', 1, 0), key('0', 'check', 1, 0), key('0', 'solve', 2, 0), key('0', 'solve', 1, 1)]) {
      const err = await rejection(p.generate(request(k)));
      expect(err.code).toBe('REPLAY_MISSING');
      expect(err.message).toContain(`task ${k.taskKey} node ${k.nodeId} attempt ${k.attempt} call ${k.callIndex}`);
    }
  });

  it('throws REPLAY_PROMPT_MISMATCH with a diff hint', async () => {
    const p = new ReplayProvider([recorded(0, 'solve', 1, 0)]);
    const err = await rejection(p.generate(request(key('0', 'solve', 1, 0), { prompt: 'Task 0: what is 2+5?' })));
    expect(err.code).toBe('REPLAY_PROMPT_MISMATCH');
    expect(err.message).toContain('prompt differs from the recording at character 18');
    expect(err.message).toContain('recorded "Task 0: what is 2+0?" vs requested "Task 0: what is 2+5?"');
    const sys = await rejection(p.generate(request(key('0', 'solve', 1, 0), { system: 'Be brief.' })));
    expect(sys.code).toBe('REPLAY_PROMPT_MISMATCH');
    expect(sys.message).toContain('system differs');
    const long = new ReplayProvider([recorded(0, 'solve', 1, 0, { prompt: 'x'.repeat(100) + 'recorded tail' + 'y'.repeat(100) })]);
    const far = await rejection(long.generate(request(key('0', 'solve', 1, 0), { prompt: 'x'.repeat(100) + 'edited tail' })));
    expect(far.message).toContain('at character 100 (recorded 213 chars, requested 111)');
    expect(far.message).toContain(`recorded "…${'x'.repeat(20)}recorded tail${'y'.repeat(27)}…"`);
    expect(far.message).toContain(`requested "…${'x'.repeat(20)}edited tail"`);
    // with checking off, the key alone decides
    const lax = new ReplayProvider([recorded(0, 'solve', 1, 0)], { checkPrompts: false });
    expect((await lax.generate(request(key('0', 'solve', 1, 0), { prompt: 'edited' }))).text).toBe('2');
  });

  it('replays recorded failures as they were classed: GENERATION_FAILED, a node TIMEOUT, ABORTED', async () => {
    const p = new ReplayProvider([
      recorded(0, 'solve', 1, 0, { error: 'llama runtime: out of memory', completion: '' }),
      recorded(0, 'solve', 1, 1, { error: 'TIMEOUT: generation timed out after 30000 ms', completion: '' }),
      recorded(0, 'solve', 1, 2, { error: 'stopped', stopReason: 'abort', completion: '' }),
    ]);
    const failed = await rejection(p.generate(request(key('0', 'solve', 1, 0))));
    expect(failed.code).toBe('GENERATION_FAILED');
    expect(failed.message).toContain('llama runtime: out of memory');
    const timeout = await rejection(p.generate(request(key('0', 'solve', 1, 1))));
    expect(timeout.code).toBe('TIMEOUT');
    expect((timeout as unknown as { failureClass: string }).failureClass).toBe('execution');
    expect((await rejection(p.generate(request(key('0', 'solve', 1, 2))))).code).toBe('ABORTED');
  });

  it('honours an already aborted signal and a custom task key', async () => {
    const p = new ReplayProvider([recorded(4, 'solve', 1, 0)], { taskKeyOf: (i) => `task-${i}` });
    const ctl = new AbortController();
    ctl.abort();
    expect((await rejection(p.generate(request(key('task-4', 'solve', 1, 0), { signal: ctl.signal })))).code).toBe('ABORTED');
    const r = await p.generate(request(key('task-4', 'solve', 1, 0), { prompt: 'Task 4: what is 2+0?' }));
    expect(r.text).toBe('2');
  });

  it('refuses two recordings for one key', () => {
    expect(() => new ReplayProvider([recorded(0, 'solve', 1, 0), recorded(0, 'solve', 1, 0)])).toThrow(/two recorded calls for task 0 node solve/);
  });

  it('never imports node-llama-cpp', () => {
    const src = readFileSync(new URL('./ReplayProvider.ts', import.meta.url), 'utf8');
    const imports = [...src.matchAll(/from\s+'([^']+)'/g)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    for (const i of imports) expect(i).toMatch(/^\.\.\/\.\.\/core\//);
  });
});

describe('ReplayProvider over a stored experiment', () => {
  let store: Store | undefined;
  afterEach(() => store?.close());

  it('replays what the store recorded, keyed by task index', async () => {
    store = openStore(':memory:');
    const yaml = 'name: one\n';
    const exp = store.createExperiment({
      kind: 'run', workflowName: 'one', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml),
      dataset: 'd', split: 'test', seed: 1, config: {},
      tasks: [{ taskIndex: 0, taskId: 'a', input: 'x' }, { taskIndex: 1, taskId: 'b', input: 'y' }],
    });
    const runId = asRunId('r1');
    const c = recorded(1, 'solve', 1, 0);
    const { taskIndex: _t, nodeId: _n, attempt: _a, ...callRecord } = c;
    const ev: NodeEvent = {
      runId, nodeId: asNodeId('solve'), attempt: 1, seq: 0, kind: 'agent', role: asRoleName('solver'), wiredBy: HUMAN,
      runBy: asRoleName('solver'), inputs: { q: 'y' }, output: '2', status: 'ok', calls: [callRecord], startedAt: 1, endedAt: 2,
    };
    store.saveRun(
      { runId, experimentId: exp.id, taskIndex: 1, taskId: 'b', status: 'completed', answer: '2', score: 1, correct: true, seed: 1,
        promptTokens: 17, completionTokens: 2, startedAt: 1, endedAt: 2, failures: {} },
      [ev],
    );
    const p = new ReplayProvider(store.getExperimentCalls(exp.id));
    expect(p.size).toBe(1);
    const r = await p.generate(request(key('1', 'solve', 1, 0)));
    expect(r).toMatchObject({ text: '2', seed: 1001, model: 'tiny-q8.gguf', tokens: { prompt: 17, completion: 2 } });
    expect((await rejection(p.generate(request(key('0', 'solve', 1, 0))))).code).toBe('REPLAY_MISSING');
  });
});
