/**
 * The recorded, on-policy sampling path (`GenerateRequest.recordTokens`): the ids fed
 * and sampled are the model tokenizer's, and they are exactly the completion text.
 */
import { existsSync } from 'node:fs';
import { LlamaLogLevel, type LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import type { GenerateRequest } from '../../core/model/index.ts';
import { LlamaProvider } from './index.ts';
import { sharedRuntime } from './runtime.ts';
import { STORIES } from './testing.ts';

function req(over: Partial<Omit<GenerateRequest, 'params'>> & { params?: Partial<GenerateRequest['params']> } = {}): GenerateRequest {
  const { params, ...rest } = over;
  return {
    role: asRoleName('writer'), model: 'default', prompt: 'Once upon a time', seed: 1,
    key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 }, recordTokens: true,
    ...rest,
    params: { temperature: 1, maxTokens: 24, ...params },
  };
}

describe.skipIf(!existsSync(STORIES))('recorded token ids (stories260K)', () => {
  let provider: LlamaProvider;
  let model: LlamaModel;
  beforeAll(async () => {
    provider = new LlamaProvider({ models: { default: { path: STORIES, contextSize: 256, sequences: 4, batching: 'mixed' } } });
    // An independent handle on the same file: its tokenizer is the reference.
    model = await (await sharedRuntime(false, LlamaLogLevel.error)).loadModel({ modelPath: STORIES, gpuLayers: 0 });
  });
  afterAll(async () => {
    await provider?.dispose();
    await model?.dispose();
  });

  it('prompt ids are BOS + the tokenizer\'s ids of the prompt; completion ids detokenize to the text', async () => {
    for (const prompt of ['Once upon a time', 'Tom went to the park. He saw a big tree.', 'Copy the number into JSON.\nNumber: 7\nJSON: {"n":']) {
      for (const seed of [1, 2, 3]) {
        const res = await provider.generate(req({ prompt, seed }));
        expect(res.promptTokenIds).toEqual([model.tokens.bos, ...model.tokenize(prompt, false, 'trimLeadingSpace')]);
        expect(res.tokens.prompt).toBe(res.promptTokenIds!.length);
        const ids = res.completionTokenIds!;
        expect(res.tokens.completion).toBe(ids.length);
        expect(ids.every((t) => Number.isInteger(t) && t >= 0 && t < 512)).toBe(true);
        const text = model.detokenize((res.stopReason === 'eos' ? ids.slice(0, -1) : ids) as never);
        expect(text).toBe(res.text);
        if (res.stopReason === 'eos') expect(model.isEogToken(ids[ids.length - 1] as never)).toBe(true);
        else expect(ids).toHaveLength(24);
      }
    }
  });

  it('samples what the standard path samples (same seed, same on-policy settings), reproducibly', async () => {
    for (const seed of [4, 5]) {
      const onPolicy = { temperature: 1, topK: 0, topP: 1, minP: 0 };
      const recorded = await provider.generate(req({ seed, params: onPolicy }));
      const again = await provider.generate(req({ seed, params: onPolicy }));
      const plain = await provider.generate(req({ seed, params: onPolicy, recordTokens: false }));
      expect(again.completionTokenIds).toEqual(recorded.completionTokenIds);
      expect(plain.text).toBe(recorded.text);
      expect(plain.promptTokenIds).toBeUndefined();
    }
    // Greedy: the known continuation.
    const greedy = await provider.generate(req({ params: { temperature: 0, maxTokens: 12 } }));
    expect(greedy.text.startsWith(', there was a little girl')).toBe(true);
  });

  it('stop strings end the text before them; their tokens stay in the sampled ids', async () => {
    const res = await provider.generate(req({ params: { temperature: 0, maxTokens: 40, stop: ['Lily'] } }));
    expect(res.stopReason).toBe('stop');
    expect(res.text).toBe(', there was a little girl named ');
    const all = model.detokenize(res.completionTokenIds as never);
    expect(all.startsWith(res.text)).toBe(true);
    expect(all).toContain('Lily');
  });

  it('JSON-schema grammars constrain the recorded path too', async () => {
    const res = await provider.generate(req({ prompt: 'Tool:', jsonSchema: { enum: ['calculator', 'weather', 'search'] }, params: { temperature: 1, maxTokens: 12 } }));
    expect(['calculator', 'weather', 'search']).toContain(JSON.parse(res.text));
    expect(model.detokenize(res.completionTokenIds!.filter((t) => !model.isEogToken(t as never)) as never).startsWith(res.text)).toBe(true);
  });
});
