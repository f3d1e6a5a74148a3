/** The playground's payload schema (every field bounded, refused by name), its event check and its speed figure. */
import { describe, expect, it } from 'vitest';
import { ApiError, isLabEvent, tokensPerSecond, validatePayload } from '../index.ts';

const bad = (payload: unknown, method: 'startGeneration' | 'cancelGeneration' = 'startGeneration'): ApiError => {
  try {
    validatePayload(method, payload);
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected BAD_REQUEST');
};

const OK = { model: '/models/stories260K.gguf', prompt: 'Once upon a time', maxTokens: 32 };

describe('startGeneration payload', () => {
  it('accepts a local file or an endpoint with every sampling setting', () => {
    const full = { ...OK, system: 'Be brief.', temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, seed: 4_294_967_295, jsonSchema: { type: 'object' }, threads: 1 };
    expect(validatePayload('startGeneration', full)).toEqual(full);
    expect(validatePayload('startGeneration', { ...OK, model: 'openai:http://127.0.0.1:8080/v1#qwen' })).toMatchObject({ model: 'openai:http://127.0.0.1:8080/v1#qwen' });
    expect(validatePayload('startGeneration', { ...OK, model: 'C:\\models\\m.GGUF' })).toMatchObject({ model: 'C:\\models\\m.GGUF' });
  });

  it('bounds max tokens to 1..4096', () => {
    expect(validatePayload('startGeneration', { ...OK, maxTokens: 4096 })).toMatchObject({ maxTokens: 4096 });
    const over = bad({ ...OK, maxTokens: 4097 });
    expect([over.code, over.field, over.message]).toEqual(['BAD_REQUEST', 'maxTokens', 'startGeneration: payload field "maxTokens": must be at most 4096']);
    expect(bad({ ...OK, maxTokens: 0 }).field).toBe('maxTokens');
    expect(bad({ ...OK, maxTokens: 2.5 }).field).toBe('maxTokens');
    expect(bad({ model: OK.model, prompt: OK.prompt }).field).toBe('maxTokens');
  });

  it('refuses each bad sampling value by name', () => {
    expect(bad({ ...OK, temperature: 5.01 }).field).toBe('temperature');
    expect(bad({ ...OK, temperature: -0.1 }).field).toBe('temperature');
    expect(bad({ ...OK, topK: 1001 }).field).toBe('topK');
    expect(bad({ ...OK, topP: 1.5 }).field).toBe('topP');
    expect(bad({ ...OK, minP: -0.01 }).field).toBe('minP');
    expect(bad({ ...OK, seed: -1 }).field).toBe('seed');
    expect(bad({ ...OK, seed: 2 ** 32 }).field).toBe('seed');
    expect(bad({ ...OK, threads: 0 }).field).toBe('threads');
    expect(bad({ ...OK, temperature: '0.7' }).field).toBe('temperature');
  });

  it('refuses a model that is neither an absolute .gguf path nor an endpoint', () => {
    for (const model of ['stories260K.gguf', '/models/readme.txt', '', 'http://127.0.0.1:8080/v1']) {
      const err = bad({ ...OK, model });
      expect(err.field).toBe('model');
    }
    expect(bad({ ...OK, model: 'models/m.gguf' }).message).toBe('startGeneration: payload field "model": must be an absolute path of a .gguf file or an endpoint reference openai:<base-url>#<model>');
  });

  it('bounds the texts and the schema, and takes no other field', () => {
    expect(bad({ ...OK, prompt: '' }).field).toBe('prompt');
    expect(bad({ ...OK, prompt: 'x'.repeat(32_001) }).message).toBe('startGeneration: payload field "prompt": must be at most 32000 characters');
    expect(validatePayload('startGeneration', { ...OK, prompt: 'x'.repeat(32_000) })).toMatchObject({ maxTokens: 32 });
    expect(bad({ ...OK, system: 's'.repeat(32_001) }).field).toBe('system');
    expect(bad({ ...OK, jsonSchema: ['type', 'object'] }).field).toBe('jsonSchema');
    expect(bad({ ...OK, jsonSchema: 'object' }).field).toBe('jsonSchema');
    expect(bad({ ...OK, jsonSchema: { description: 'd'.repeat(64_000) } }).field).toBe('jsonSchema');
    expect(bad({ ...OK, stream: true }).message).toMatch(/stream/);
  });

  it('refuses a schema nested deeper than MAX_NESTING_DEPTH by name, before measuring its size (a 6,000-deep one overflowed the stack)', () => {
    let deep: unknown = {};
    for (let i = 0; i < 6000; i++) deep = { items: deep };
    const err = bad({ ...OK, jsonSchema: deep });
    expect(err.field).toBe('jsonSchema');
    expect(err.message).toContain('nested deeper than 64 levels');
    let ok: unknown = {};
    for (let i = 0; i < 63; i++) ok = { items: ok };
    expect(validatePayload('startGeneration', { ...OK, jsonSchema: ok })).toMatchObject({ jsonSchema: ok });
  });

  it('cancelGeneration takes a generation id', () => {
    expect(validatePayload('cancelGeneration', { generationId: 'gen-1' })).toEqual({ generationId: 'gen-1' });
    expect(bad({ generationId: '' }, 'cancelGeneration').field).toBe('generationId');
  });
});

describe('playground events', () => {
  it('are LabEvents when well formed, and refused field by field', () => {
    expect(isLabEvent({ type: 'generation', generationId: 'g', model: 'm.gguf', status: 'running' })).toBe(true);
    expect(isLabEvent({ type: 'generation', generationId: 'g', model: 'm.gguf', status: 'running', renderedPrompt: '<s>[INST] hi [/INST]', promptForm: 'template', promptTokens: 9 })).toBe(true);
    expect(isLabEvent({ type: 'generation', generationId: 'g', model: 'm.gguf', status: 'completed', text: 'x', promptTokens: 5, completionTokens: 3, ms: 12.5, firstTokenMs: 2, tokensPerSecond: 240, stopReason: 'maxTokens', seed: 7 })).toBe(true);
    expect(isLabEvent({ type: 'generationText', generationId: 'g', text: ' the', completionTokens: 2, ms: 3.1 })).toBe(true);
    expect(isLabEvent({ type: 'generationText', generationId: 'g', text: ' the', ms: 3.1 })).toBe(true);
    expect(isLabEvent({ type: 'generationText', generationId: 'g', text: '', ms: 1 })).toBe(false);
    expect(isLabEvent({ type: 'generationText', generationId: 'g', text: 'a', ms: -1 })).toBe(false);
    expect(isLabEvent({ type: 'generation', generationId: 'g', model: 'm', status: 'done' })).toBe(false);
    expect(isLabEvent({ type: 'generation', generationId: 'g', model: 'm', status: 'running', promptForm: 'chat' })).toBe(false);
    expect(isLabEvent({ type: 'generation', generationId: 'g', model: 'm', status: 'completed', completionTokens: 1.5 })).toBe(false);
    expect(isLabEvent({ type: 'generation', generationId: '', model: 'm', status: 'running' })).toBe(false);
  });
});

describe('tokensPerSecond', () => {
  it('is completion tokens over the generation time, to 0.1', () => {
    expect(tokensPerSecond(48, 1500)).toBe(32);
    expect(tokensPerSecond(10, 3000)).toBe(3.3);
    expect(tokensPerSecond(256, 400)).toBe(640);
    expect(tokensPerSecond(0, 100)).toBeUndefined();
    expect(tokensPerSecond(5, 0)).toBeUndefined();
  });
});
