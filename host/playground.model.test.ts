/**
 * The playground with the real tiny model (stories260K, 1 thread) through the lab API: the
 * streamed pieces add up to the completed text, which equals the non-streamed completion of the
 * same request (same seed and settings) by a provider of its own; the same request again gives the
 * same text (the model kept loaded); another seed gives another; the live token count reaches the
 * final one; the prompt shown is what the model was fed (no chat template: the plain prompt).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandlers, type FlowlabApi, type LabEvent, type PlaygroundEvent, type StartGenerationRequest } from '../core/api/index.ts';
import { openStore, type Store } from '../core/store/index.ts';
import { llamaProvider } from '../models/factory.ts';
import { haveShared, noteSkip, tinyModel } from '../test/fixtures.ts';
import { createLabHost, type LabHostHandle } from './labHost.ts';
import { playgroundRequest } from './playground.ts';

if (!haveShared) noteSkip('playground model', 'streaming with the tiny model', tinyModel);

const ROOT = path.resolve(import.meta.dirname, '..');

describe.skipIf(!haveShared)('the playground streams the real model (stories260K, 1 thread)', () => {
  let store: Store;
  let lab: LabHostHandle;
  let api: FlowlabApi;
  const events: LabEvent[] = [];
  beforeAll(() => {
    store = openStore(':memory:');
    lab = createLabHost({ store, dbFile: ':memory:', modelDir: path.dirname(tinyModel), examplesDir: path.join(ROOT, 'examples'), emit: (e) => events.push(e) });
    api = createHandlers({ store, version: '1', lab });
  });
  afterAll(async () => {
    await lab?.dispose();
    store?.close();
  });

  const generate = async (req: StartGenerationRequest) => {
    const { generationId } = await api.startGeneration(req);
    await lab.playground.settled(generationId);
    const mine = events.filter((e): e is PlaygroundEvent => (e.type === 'generation' || e.type === 'generationText') && e.generationId === generationId);
    const pieces = mine.filter((e): e is Extract<PlaygroundEvent, { type: 'generationText' }> => e.type === 'generationText');
    const end = mine.at(-1) as Extract<PlaygroundEvent, { type: 'generation' }>;
    const prompt = mine.find((e) => e.type === 'generation' && e.promptForm !== undefined) as Extract<PlaygroundEvent, { type: 'generation' }>;
    return { pieces, end, prompt };
  };
  const sampled: StartGenerationRequest = { model: tinyModel, prompt: 'Once upon a time', maxTokens: 48, temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, seed: 7, threads: 1 };

  it('streams many pieces whose concatenation is the non-streamed completion of the same seed', async () => {
    const { pieces, end, prompt } = await generate(sampled);
    expect(end.status).toBe('completed');
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.map((p) => p.text).join('')).toBe(end.text);
    expect(end.text!.length).toBeGreaterThan(20);

    const own = await llamaProvider({ models: { default: tinyModel }, roleModels: {}, gpu: false, threads: 1 });
    try {
      const whole = await own.generate(playgroundRequest(sampled));
      expect(end.text).toBe(whole.text);
      expect([end.completionTokens, end.promptTokens]).toEqual([whole.tokens.completion, whole.tokens.prompt]);
    } finally {
      await own.dispose();
    }
    // No chat template in stories260K: the model was fed the prompt as plain text.
    expect([prompt.promptForm, prompt.renderedPrompt, prompt.promptTokens]).toEqual(['plain', 'Once upon a time', end.promptTokens]);
    // Token counts arrive with the pieces, rising to the final count; the speed is tokens over the generation's ms.
    const counts = pieces.map((p) => p.completionTokens!);
    expect(counts.every((c, i) => i === 0 || c >= counts[i - 1]!)).toBe(true);
    expect(counts.at(-1)).toBeLessThanOrEqual(end.completionTokens!);
    expect(counts.at(-1)).toBeGreaterThanOrEqual(end.completionTokens! - 1);
    expect(end.tokensPerSecond).toBe(Math.round((end.completionTokens! / (end.ms! / 1000)) * 10) / 10);
  });

  it('gives the same text for the same seed and settings again, and another text for another seed', async () => {
    const first = (await generate(sampled)).end.text;
    const again = (await generate(sampled)).end.text;
    const other = (await generate({ ...sampled, seed: 8 })).end.text;
    expect(again).toBe(first);
    expect(other).not.toBe(first);
  });
});
