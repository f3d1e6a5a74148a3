import { describe, expect, it } from 'vitest';
import { asRunId } from '../ids.ts';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../model/provider.ts';
import { parseWorkflow } from '../workflow/load.ts';
import { runWorkflow } from './runWorkflow.ts';

const tools = { get: () => undefined, list: () => [] };

/** A provider that answers like a local reasoning model: thinking apart, settings and evaluated tokens reported. */
class Reasoner implements ModelProvider {
  readonly name = 'reasoner (test)';
  constructor(private readonly answer: (r: GenerateRequest) => string) {}
  async generate(r: GenerateRequest): Promise<GenerateResult> {
    return {
      text: this.answer(r), thinking: 'The answer is {"n": "not a number"}, no: 4.', tokens: { prompt: 30, completion: 9 }, promptTokensEvaluated: 7,
      ms: 1, seed: r.seed, model: 'm.gguf', stopReason: 'eos', renderedPrompt: `<|im_start|>user\n${r.prompt}<|im_end|>\n<|im_start|>assistant\n<think>\n`,
      applied: { sampler: { temperature: 0, topK: 40, topP: 0.95, minP: 0, seed: r.seed }, threads: 1, contextSize: 1024, batchSize: 512, source: { threads: 'tuned', batchSize: 'flag' }, prefixReuse: true },
    };
  }
  modelsLoaded() { return 0; }
  async dispose() {}
}

const yaml = `
name: think
roles: { a: { kind: executor } }
nodes:
  - { id: s, role: a, prompt: "Q {{q}}", inputs: { q: task.question }, output: { schema: { type: object, properties: { n: { type: number } }, required: [n] } } }
`;

describe('a model call record keeps what the call ran with', () => {
  it('the contract sees the answer only; thinking, rendered prompt, settings and evaluated tokens are on the record', async () => {
    const out = await runWorkflow(parseWorkflow(yaml, { tools }).graph, {
      runId: asRunId('r1'), taskKey: '0', taskInput: { question: '2+2?' }, seed: 1, provider: new Reasoner(() => '{"n": 4}'), tools,
    });
    expect(out.status).toBe('completed');
    expect(out.answer).toEqual({ n: 4 });
    const [call] = out.events[0]!.calls;
    expect(call).toMatchObject({ completion: '{"n": 4}', thinking: 'The answer is {"n": "not a number"}, no: 4.', promptTokens: 30, promptTokensEvaluated: 7 });
    expect(call!.renderedPrompt).toBe('<|im_start|>user\nQ 2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n');
    expect(call!.applied?.source).toEqual({ threads: 'tuned', batchSize: 'flag' });
  });

  it('an answer that breaks the contract fails even when the thinking holds valid JSON', async () => {
    const out = await runWorkflow(parseWorkflow(yaml, { tools }).graph, {
      runId: asRunId('r2'), taskKey: '0', taskInput: { question: '2+2?' }, seed: 1, provider: new Reasoner(() => 'four'), tools,
    });
    expect(out.events[0]!.errorCode).toBe('UNPARSABLE_OUTPUT');
  });
});
