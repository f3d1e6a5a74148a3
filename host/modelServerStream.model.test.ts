/**
 * `flowlab serve-model` streams token by token: with the tiny real model over loopback, a
 * `stream: true` reply arrives in many content chunks whose concatenation is the non-streamed
 * text for the same seed (greedy and sampled), a JSON-schema (grammar-constrained) reply streams
 * the same way, and a client that goes away after its first chunks cancels the generation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GENERATED_TOKENS } from '../core/limits.ts';
import { jsonSchemaValidator } from '../core/workflow/index.ts';
import { haveShared, noteSkip, tinyModel } from '../test/fixtures.ts';
import { startModelServer, type ModelServer } from './modelServer.ts';

if (!haveShared) noteSkip('serve-model stream', 'streaming over loopback', tinyModel);

type Chunk = { object: string; choices: Array<{ delta: { role?: string; content?: string }; finish_reason: string | null }>; usage?: Record<string, number> };

describe.skipIf(!haveShared)('serve-model streams token by token (stories260K, 1 thread)', () => {
  let server: ModelServer;
  beforeAll(async () => {
    server = await startModelServer({ models: { stories260K: tinyModel }, threads: 1, contextSize: 1024 });
  });
  afterAll(() => server?.close());

  const post = (body: Record<string, unknown>, signal?: AbortSignal) =>
    fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal && { signal }) });
  const plainText = async (body: Record<string, unknown>) => ((await (await post(body)).json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
  const streamed = async (body: Record<string, unknown>) => {
    const res = await post({ ...body, stream: true });
    const events = (await res.text()).split('\n\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Chunk);
    const content = chunks.flatMap((c) => c.choices.map((ch) => ch.delta.content ?? '')).filter((t) => t !== '');
    return { chunks, content };
  };
  const story = { model: 'stories260K', messages: [{ role: 'user', content: 'Once upon a time' }], seed: 11 };

  it('greedy: many content chunks, their concatenation equal to the non-streamed text', async () => {
    const body = { ...story, temperature: 0, max_tokens: 40 };
    const whole = await plainText(body);
    const { chunks, content } = await streamed(body);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(content.length).toBeGreaterThan(10);
    expect(content.join('')).toBe(whole);
    expect(whole).toMatch(/^, there was a little girl named Lily\./);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('length');
  });

  it('sampled (temperature 0.8, one seed): the same text streamed and whole', async () => {
    const body = { ...story, temperature: 0.8, max_tokens: 30 };
    const { content } = await streamed(body);
    expect(content.length).toBeGreaterThan(5);
    expect(content.join('')).toBe(await plainText(body));
  });

  it('a JSON-schema reply streams too, and the streamed text is valid under the schema', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string', maxLength: 40 } }, required: ['answer'], additionalProperties: false };
    const body = { ...story, temperature: 0, max_tokens: 60, response_format: { type: 'json_schema', json_schema: { name: 'a', schema } } };
    const whole = await plainText(body);
    const { content } = await streamed(body);
    expect(content.length).toBeGreaterThan(3);
    expect(content.join('')).toBe(whole);
    expect(jsonSchemaValidator.validate(schema, JSON.parse(whole))).toBe(true);
  });

  it('a client that disconnects mid-stream cancels its generation; the server goes on answering', async () => {
    const before = server.stats.cancelled;
    const ac = new AbortController();
    // The longest generation allowed (max_tokens 0 is refused since issue 30): it runs to the context's end unless cancelled.
    const res = await post({ ...story, temperature: 0.8, max_tokens: MAX_GENERATED_TOKENS, stream: true }, ac.signal);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = '';
    while ((seen.match(/"content":"[^"]/g) ?? []).length < 3) {
      const chunk = await reader.read();
      if (chunk.done) throw new Error(`the stream ended before three content chunks: ${seen.slice(0, 300)}`);
      seen += new TextDecoder().decode(chunk.value);
    }
    ac.abort();
    const end = Date.now() + 10_000;
    while (server.stats.cancelled === before && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(server.stats.cancelled).toBe(before + 1);
    expect((await plainText({ ...story, temperature: 0, max_tokens: 8 })).length).toBeGreaterThan(0);
  });
});
