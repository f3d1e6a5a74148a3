import { describe, expect, it } from 'vitest';
import { foldGeneration, formPayload, initialForm, type GenerationView } from './playground.ts';

describe('foldGeneration', () => {
  it('follows a generation: opening, prompt, pieces with live counts and speed, end', () => {
    let v: GenerationView = foldGeneration(undefined, { type: 'generation', generationId: 'g', model: 'm.gguf', status: 'running' });
    expect(v).toEqual({ model: 'm.gguf', status: 'running', text: '', pieces: 0 });
    v = foldGeneration(v, { type: 'generation', generationId: 'g', model: 'm.gguf', status: 'running', renderedPrompt: 'Hi', promptForm: 'plain', promptTokens: 2 });
    v = foldGeneration(v, { type: 'generationText', generationId: 'g', text: 'Once', completionTokens: 1, ms: 20 });
    expect(v).toMatchObject({ text: 'Once', pieces: 1, completionTokens: 1, ms: 20, firstTokenMs: 20, tokensPerSecond: 50 });
    v = foldGeneration(v, { type: 'generationText', generationId: 'g', text: ' upon', completionTokens: 2, ms: 25 });
    // 2 tokens in 25 ms = 80 tokens/s; the first token's time stays.
    expect(v).toMatchObject({ text: 'Once upon', pieces: 2, completionTokens: 2, tokensPerSecond: 80, firstTokenMs: 20, renderedPrompt: 'Hi', promptTokens: 2 });
    v = foldGeneration(v, { type: 'generation', generationId: 'g', model: 'm.gguf', status: 'completed', text: 'Once upon', completionTokens: 3, ms: 40, firstTokenMs: 19.5, tokensPerSecond: 75, stopReason: 'eos', promptTokens: 2 });
    expect(v).toEqual({ model: 'm.gguf', status: 'completed', text: 'Once upon', pieces: 2, completionTokens: 3, ms: 40, firstTokenMs: 19.5, tokensPerSecond: 75, stopReason: 'eos', renderedPrompt: 'Hi', promptForm: 'plain', promptTokens: 2 });
    // A piece that arrives late does not reopen an ended generation.
    expect(foldGeneration(v, { type: 'generationText', generationId: 'g', text: '!', ms: 50 })).toBe(v);
  });

  it('counts pieces without tokens for an endpoint, and keeps the text of a cancelled reply', () => {
    let v = foldGeneration(undefined, { type: 'generationText', generationId: 'g', text: '{"a"', ms: 5 });
    expect(v).toEqual({ model: '', status: 'running', text: '{"a"', pieces: 1, ms: 5, firstTokenMs: 5 });
    v = foldGeneration(v, { type: 'generation', generationId: 'g', model: 'q', status: 'cancelled', message: 'cancelled' });
    expect([v.status, v.text, v.message]).toEqual(['cancelled', '{"a"', 'cancelled']);
  });
});

describe('formPayload', () => {
  const form = { ...initialForm('/m/a.gguf'), prompt: 'Once upon a time' };
  it('sends every setting, the defaults included', () => {
    expect(formPayload(form)).toEqual({ payload: { model: '/m/a.gguf', prompt: 'Once upon a time', temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, seed: 0, maxTokens: 256 } });
    expect(formPayload({ ...form, system: 'Brief.', jsonSchema: '{"type":"object"}', seed: '42' })).toMatchObject({ payload: { system: 'Brief.', jsonSchema: { type: 'object' }, seed: 42 } });
  });
  it('names the first problem', () => {
    expect(formPayload({ ...form, model: ' ' })).toEqual({ problem: 'Choose a model (or give an endpoint openai:<base-url>#<model>).' });
    expect(formPayload({ ...form, prompt: '' })).toEqual({ problem: 'Write a prompt.' });
    expect(formPayload({ ...form, topP: 'abc' })).toEqual({ problem: 'Top-p must be a number (it is "abc").' });
    expect(formPayload({ ...form, maxTokens: '' })).toEqual({ problem: 'Max tokens must be a number (it is "").' });
    expect(formPayload({ ...form, jsonSchema: '[1]' })).toEqual({ problem: 'JSON schema must be a JSON object, e.g. {"type": "object"}.' });
    expect(formPayload({ ...form, jsonSchema: '{"type":' })).toMatchObject({ problem: expect.stringMatching(/^JSON schema is not JSON: /) });
  });
});
