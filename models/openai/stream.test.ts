/**
 * The OpenAI-compatible provider's streaming (`onText`) and multi-turn input against scripted
 * loopback servers: SSE deltas handed on in order with the usage of the last chunk, a server
 * that ignores `stream`, retries only before the first piece, an `error` event, and `turns`
 * sent as the messages.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import { parseEndpointRef, type GenerateRequest } from '../../core/model/index.ts';
import { OpenAiProvider } from './index.ts';

const servers: Array<() => void> = [];
afterEach(() => {
  for (const close of servers.splice(0)) close();
});

/** A loopback server answering the n-th POST (0-based) with `handler(n, body, res)`. */
async function fakeServer(handler: (n: number, body: Record<string, unknown>, res: ServerResponse) => void): Promise<{ base: string; bodies: Array<Record<string, unknown>> }> {
  const bodies: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      bodies.push(JSON.parse(text) as Record<string, unknown>);
      handler(bodies.length - 1, bodies.at(-1)!, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(() => (server.closeAllConnections(), server.close()));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', model: 'served', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const sseHead = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/event-stream' });

const request = (over: Partial<GenerateRequest> = {}): GenerateRequest => ({
  role: asRoleName('writer'),
  model: 'm',
  prompt: 'Once upon a time',
  params: { temperature: 0, maxTokens: 16 },
  seed: 3,
  key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 },
  ...over,
});
const provider = (base: string, opts = '') => new OpenAiProvider({ models: { m: parseEndpointRef(`openai:${base}#tiny${opts}`) }, random: () => 0 });

describe('OpenAiProvider streaming (onText)', () => {
  it('asks for a stream, hands each delta on as it arrives (before the reply ends), and keeps the usage of the last chunk', async () => {
    const got: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const s = await fakeServer((_n, _b, res) => {
      sseHead(res);
      res.write(chunk({ role: 'assistant', content: '' }));
      res.write(chunk({ content: ', there' }));
      res.write(chunk({ content: ' was' }));
      void gate.then(() => {
        res.write(chunk({ content: ' a cat' }));
        res.write(chunk({}, 'length'));
        res.write(`data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 6, completion_tokens: 4, total_tokens: 10 } })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    const p = provider(s.base);
    const pending = p.generate(request({ onText: (t) => got.push(t) }));
    const end = Date.now() + 5000;
    while (got.length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual([', there', ' was']); // streamed while the server still holds the rest
    release();
    const out = await pending;
    expect(got.join('')).toBe(', there was a cat');
    expect(out).toMatchObject({ text: ', there was a cat', tokens: { prompt: 6, completion: 4 }, stopReason: 'maxTokens', model: 'served' });
    expect(s.bodies[0]).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    await p.dispose();
  });

  it('a server that ignores stream and answers JSON: the text in one piece', async () => {
    const s = await fakeServer((_n, _b, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content: 'whole' }, finish_reason: 'stop' }], usage: { prompt_tokens: 2, completion_tokens: 1 } }));
    });
    const got: string[] = [];
    const out = await provider(s.base).generate(request({ onText: (t) => got.push(t) }));
    expect([got, out.text, out.tokens]).toEqual([['whole'], 'whole', { prompt: 2, completion: 1 }]);
  });

  it('retries a stream cut before its first piece; a stream cut after one fails GENERATION_FAILED without a retry', async () => {
    const s = await fakeServer((n, _b, res) => {
      sseHead(res);
      if (n === 0) return void res.end(); // nothing streamed: retried
      res.write(chunk({ content: 'half' }), () => setTimeout(() => res.destroy(), 50)); // cut after a piece
    });
    const got: string[] = [];
    await expect(provider(s.base, '&retries=3').generate(request({ onText: (t) => got.push(t) }))).rejects.toMatchObject({ code: 'GENERATION_FAILED' });
    expect(s.bodies).toHaveLength(2);
    expect(got).toEqual(['half']);
  });

  it('an error event mid-stream is GENERATION_FAILED with the server message', async () => {
    const s = await fakeServer((_n, _b, res) => {
      sseHead(res);
      res.write(chunk({ content: 'a' }));
      res.end(`data: ${JSON.stringify({ error: { message: 'context full', type: 'server_error' } })}\n\n`);
    });
    await expect(provider(s.base).generate(request({ onText: () => {} }))).rejects.toThrow(/failed mid-stream.*context full/);
  });

  it('a schema call is not streamed (it may be asked again): the kept text reaches the hook once', async () => {
    const s = await fakeServer((n, _b, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content: n === 0 ? 'not json' : '{"a":1}' }, finish_reason: 'stop' }] }));
    });
    const got: string[] = [];
    const out = await provider(s.base).generate(request({ jsonSchema: { type: 'object', required: ['a'] }, onText: (t) => got.push(t) }));
    expect([out.text, got]).toEqual(['{"a":1}', ['{"a":1}']]);
    expect(s.bodies.map((b) => b['stream'])).toEqual([false, false]);
  });

  it('sends turns as the messages, in order', async () => {
    const s = await fakeServer((_n, _b, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }));
    });
    const turns = [{ role: 'system', content: 'S' }, { role: 'user', content: 'U1' }, { role: 'assistant', content: 'A1' }, { role: 'user', content: 'U2' }] as const;
    await provider(s.base).generate(request({ system: 'S', prompt: 'U1\n\nA1\n\nU2', turns }));
    expect(s.bodies[0]!['messages']).toEqual(turns);
  });
});
