/**
 * The provider conformance suite (`models/testing/providerConformance.ts`) for the OpenAI-compatible
 * provider against `flowlab serve-model`'s server (host/modelServer.ts) over loopback with the
 * tiny real model: json_schema outputs, same seed same text, usage, cancellation. Then what the
 * suite cannot see from the client: the server cancels the generation of a client that went
 * away, streams Server-Sent Events with the same text and usage (the provider's `onText` reads
 * them piece by piece), and lists its models.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEndpointRef } from '../../core/model/index.ts';
import { startModelServer, type ModelServer } from '../../host/modelServer.ts';
import { tinyModel } from '../../test/fixtures.ts';
import { conformanceRequests, describeProviderConformance } from '../testing/providerConformance.ts';
import { OpenAiProvider } from './index.ts';

const skip = existsSync(tinyModel) ? false : `${tinyModel} not found (set FLOWLAB_SHARED to the shared folder)`;
let server: ModelServer | undefined;
beforeAll(async () => {
  if (!skip) server = await startModelServer({ models: { stories260K: tinyModel }, threads: 1, contextSize: 1024 });
});
afterAll(async () => {
  await server?.close();
});
const provider = () => new OpenAiProvider({ models: { default: parseEndpointRef(`openai:${server!.baseUrl}#stories260K&retries=0`) } });

describeProviderConformance('openai-compatible (serve-model, stories260K)', provider, {
  skip,
  loadsModels: false,
  abortsMidCall: true,
  unknownRefCode: 'MODEL_UNKNOWN_REF',
});

describe.skipIf(skip !== false)('serve-model over loopback', () => {
  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${server!.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal && { signal }) });
  const story = { model: 'stories260K', messages: [{ role: 'user', content: 'Once upon a time' }], seed: 5, temperature: 0.8 };

  it('a client that disconnects cancels its generation; the server goes on answering', async () => {
    const before = server!.stats.cancelled;
    const p = provider();
    const ac = new AbortController();
    const pending = p.generate({ ...conformanceRequests().long, params: { temperature: 0.8, maxTokens: 0 }, signal: ac.signal });
    setTimeout(() => ac.abort(), 150);
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    const end = Date.now() + 10_000;
    while (server!.stats.cancelled === before && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(server!.stats.cancelled).toBe(before + 1);
    expect((await p.generate(conformanceRequests().plain)).text.length).toBeGreaterThan(0);
    await p.dispose();
  });

  it('stream: true sends chat.completion.chunk events with the same text and usage as the plain reply, then [DONE]', async () => {
    const plain = (await (await post({ ...story, max_tokens: 12 })).json()) as { choices: Array<{ message: { content: string } }>; usage: Record<string, number> };
    const res = await post({ ...story, max_tokens: 12, stream: true, stream_options: { include_usage: true } });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string; choices: Array<{ delta: { content?: string }; finish_reason: string | null }>; usage?: Record<string, number> });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).join('')).toBe(plain.choices[0]!.message.content);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage).toEqual(plain.usage);
    expect(plain.usage).toEqual({ prompt_tokens: plain.usage['prompt_tokens'], completion_tokens: 12, total_tokens: plain.usage['prompt_tokens']! + 12 });
  });

  it('onText: the provider streams from the server piece by piece; the pieces add up to the non-streamed text (greedy, one seed)', async () => {
    const p = provider();
    const call = { ...conformanceRequests().plain, params: { temperature: 0, maxTokens: 40 } };
    const whole = await p.generate(call);
    const pieces: string[] = [];
    const streamed = await p.generate({ ...call, onText: (t) => pieces.push(t) });
    expect(pieces.length).toBeGreaterThan(10);
    expect(pieces.join('')).toBe(whole.text);
    expect([streamed.text, streamed.tokens]).toEqual([whole.text, whole.tokens]);
    await p.dispose();
  });

  it('lists its models, and refuses an unknown model (404) and a bad field (400) naming the param', async () => {
    const models = (await (await fetch(`${server!.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
    expect(models.data.map((m) => m.id)).toEqual(['stories260K']);
    const unknown = await post({ ...story, model: 'gpt-9' });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('model_not_found');
    const bad = await post({ ...story, temperature: 7 });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { param: string } }).error.param).toBe('temperature');
  });
});
