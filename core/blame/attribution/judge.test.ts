import { describe, expect, it } from 'vitest';
import { ModelError, ScriptedProvider, type GenerateRequest } from '../../model/index.ts';
import { cutText, fitSteps, JudgeBudgetError, judgeLog, judgeRecord, parseJsonReply, type JudgeCall } from './judge.ts';
import type { LogStep, WhoAndWhenLog } from './types.ts';

function log(n: number, opts: { long?: number } = {}): WhoAndWhenLog {
  const agents = ['Planner', 'Coder', 'Checker'];
  const steps: LogStep[] = Array.from({ length: n }, (_, index) => {
    const agent = index === 0 ? 'human' : agents[index % 3]!;
    const content = index === 0 ? 'Compute the sum of the list.' : `Message ${index} from ${agent}. ${'detail '.repeat(opts.long ?? 3)}`;
    return { index, agent, rawAgent: agent, content };
  });
  return {
    id: 'log-7',
    file: '/tmp/log-7.json',
    variant: 'hand-crafted',
    question: 'Compute the sum of the list.',
    groundTruth: '42',
    isCorrect: false,
    steps,
    agents: ['human', ...agents],
    label: { agent: 'Coder', rawAgent: 'Coder', step: 4, reason: '' },
  };
}

const steps = (n: number, len: number): LogStep[] => Array.from({ length: n }, (_, index) => ({ index, agent: 'A', rawAgent: 'A', content: 'x'.repeat(len) }));

describe('prompt budget', () => {
  it('cutText puts text on one line and marks the cut', () => {
    expect(cutText('a\n\n b  c', 10)).toBe('a b c');
    expect(cutText('abcdefghij', 4)).toBe('abcd [... 6 more chars]');
  });

  it('fitSteps keeps maxChars when it fits, cuts shorter when needed, then leaves out middle steps; it always says so', () => {
    const roomy = fitSteps(steps(3, 50), 10_000, 300);
    expect(roomy).toContain('at most 300 characters');
    expect(roomy).toContain(`[2] A: ${'x'.repeat(50)}`);

    const tight = fitSteps(steps(10, 500), 2500, 300);
    expect(tight.length).toBeLessThanOrEqual(2500);
    const cap = Number(/at most (\d+) characters/.exec(tight)![1]);
    expect(cap).toBeLessThan(300);
    expect(cap).toBeGreaterThanOrEqual(40);
    expect(tight).toContain('more chars]');
    expect(tight).not.toContain('left out');

    const elided = fitSteps(steps(100, 500), 1500, 300);
    expect(elided.length).toBeLessThanOrEqual(1500);
    expect(elided).toMatch(/Steps \d+–\d+ \(\d+ steps\) are left out to fit the budget/);
    expect(elided).toContain('[0] A:');
    expect(elided).toContain('[99] A:');

    expect(() => fitSteps(steps(5, 10), 20, 300)).toThrow(JudgeBudgetError);
    expect(fitSteps([], 10, 300)).toBe('(no steps)');
  });

  it('parseJsonReply reads a JSON object, also when wrapped in other text', () => {
    expect(parseJsonReply('{"agent": "A", "step": 2}')).toEqual({ agent: 'A', step: 2 });
    expect(parseJsonReply('Sure! {"half": "first"} done')).toEqual({ half: 'first' });
    expect(parseJsonReply('Once upon a time')).toBeNull();
    expect(parseJsonReply('[1]')).toBeNull();
  });
});

describe('judges over a scripted (simulated) provider', () => {
  it('all-at-once: one call, JSON answer under a schema, key and seed, prompt within budget', async () => {
    const requests: GenerateRequest[] = [];
    const provider = new ScriptedProvider((r) => {
      requests.push(r);
      return '{"agent": "Coder", "step": 4}';
    });
    const calls: JudgeCall[] = [];
    const out = await judgeLog(log(30, { long: 80 }), 'all-at-once', { provider, maxChars: 200, maxPromptChars: 3000, seed: 11, onCall: (c) => calls.push(c) });
    expect(out).toEqual({ prediction: { agent: 'Coder', step: 4 }, calls: 1, invalidAnswers: 0 });
    const r = requests[0]!;
    expect(r.key).toEqual({ taskKey: 'log-7', nodeId: 'judge', attempt: 1, callIndex: 0 });
    expect(r.seed).toBe(11);
    expect(r.role).toBe('judge');
    expect(r.model).toBe('default');
    expect(r.params.temperature).toBe(0);
    expect((r.system ?? '').length + r.prompt.length).toBeLessThanOrEqual(3000);
    expect(r.prompt).toContain('to fit the context budget');
    expect(r.prompt).toContain('Correct answer: 42');
    const props = (r.jsonSchema as { properties: Record<string, { enum: unknown[] }> }).properties;
    expect(props.agent!.enum).toEqual(['Coder', 'Checker', 'Planner']); // order of first appearance; no human
    expect(props.step!.enum).not.toContain(0); // the human's step is not a candidate
    expect(calls[0]!.answer).toEqual({ agent: 'Coder', step: 4 });
  });

  it('all-at-once: an unusable reply gives no prediction, never a guess', async () => {
    for (const reply of ['Once upon a time', '{"agent": "Nobody", "step": 2}', '{"agent": "Coder", "step": 99}', '{"agent": "human", "step": 0}']) {
      const out = await judgeLog(log(6), 'all-at-once', { provider: new ScriptedProvider(() => reply) });
      expect(out.prediction).toBeNull();
      expect(out.invalidAnswers).toBe(1);
    }
    const rec = await judgeRecord(log(6), 'all-at-once', { provider: new ScriptedProvider(() => '{}'), withGroundTruth: false });
    expect(rec).toMatchObject({ logId: 'log-7', prediction: null, calls: 1, label: { agent: 'Coder', step: 4 } });
  });

  it('step-by-step: asks about each agent step in order until the first yes', async () => {
    const requests: GenerateRequest[] = [];
    const provider = new ScriptedProvider((r) => {
      requests.push(r);
      return r.prompt.includes('Step to judge: [3] ') ? '{"answer": "yes"}' : '{"answer": "no"}';
    });
    const out = await judgeLog(log(8), 'step-by-step', { provider, seed: 5 });
    expect(out.prediction).toEqual({ agent: 'Planner', step: 3 });
    expect(requests.map((r) => r.key.callIndex)).toEqual([0, 1, 2]);
    expect(requests.map((r) => r.seed)).toEqual([5, 6, 7]);
    expect(requests[0]!.prompt).toContain('Step to judge: [1] Coder');
    expect(requests[2]!.prompt).toContain('[2] Checker: Message 2');
    const none = await judgeLog(log(5), 'step-by-step', { provider: new ScriptedProvider(() => '{"answer": "no"}') });
    expect(none).toEqual({ prediction: null, calls: 4, invalidAnswers: 0, note: 'the judge said no to every step' });
  });

  it('binary-search: halves the agent steps by the judge\'s answers', async () => {
    const target = 9;
    const requests: GenerateRequest[] = [];
    const provider = new ScriptedProvider((r) => {
      requests.push(r);
      const m = /first half \(steps (\d+)–(\d+)\)/.exec(r.prompt)!;
      return target <= Number(m[2]) ? '{"half": "first"}' : '{"half": "second"}';
    });
    const out = await judgeLog(log(20), 'binary-search', { provider });
    expect(out.prediction).toEqual({ agent: 'Planner', step: 9 });
    expect(out.calls).toBeLessThanOrEqual(Math.ceil(Math.log2(19)));
    expect(requests[0]!.prompt).toContain('steps 1–19');
    const bad = await judgeLog(log(20), 'binary-search', { provider: new ScriptedProvider(() => '{"half": "middle"}') });
    expect(bad).toMatchObject({ prediction: null, calls: 1, invalidAnswers: 1 });
  });

  it('a generation failure ends the log with no prediction; other errors are thrown; a budget too small is an error', async () => {
    const tooLong = new ScriptedProvider(() => {
      throw new ModelError('GENERATION_FAILED', 'Prompt of 5000 tokens does not fit');
    });
    const out = await judgeLog(log(6), 'all-at-once', { provider: tooLong });
    expect(out.prediction).toBeNull();
    expect(out.note).toContain('Prompt of 5000 tokens does not fit');
    const missing = new ScriptedProvider(() => {
      throw new ModelError('MODEL_NOT_FOUND', 'no file');
    });
    await expect(judgeLog(log(6), 'all-at-once', { provider: missing })).rejects.toThrow('no file');
    await expect(judgeLog(log(6), 'all-at-once', { provider: new ScriptedProvider(() => '{}'), maxPromptChars: 200 })).rejects.toThrow(JudgeBudgetError);
  });
});
