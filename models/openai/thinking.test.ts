/**
 * Replies of reasoning models over the OpenAI-compatible API (scripted loopback servers, no
 * model): the thinking is split from the answer as for local models — a `<think>` block, a
 * prefill opened by the server's template, or `reasoning_content` sent apart — and a fenced
 * JSON answer after the thinking is not asked again (the engine repairs and records it).
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import { parseEndpointRef, type GenerateRequest } from '../../core/model/index.ts';
import { OpenAiProvider } from './index.ts';

const servers: Array<{ close: () => void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A loopback server answering each POST with the next message of `messages`; counts the calls. */
async function server(messages: Array<Record<string, unknown>>): Promise<{ ref: string; calls: () => number }> {
  let n = 0;
  const s = createServer((req, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      const message = messages[Math.min(n++, messages.length - 1)]!;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ model: 'r1', choices: [{ message: { role: 'assistant', ...message }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 4 } }));
    });
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  servers.push({ close: () => (s.closeAllConnections(), s.close()) });
  return { ref: `openai:http://127.0.0.1:${(s.address() as AddressInfo).port}/v1#r1`, calls: () => n };
}

const request = (over: Partial<GenerateRequest> = {}): GenerateRequest => ({
  role: asRoleName('solver'), model: 'm', prompt: 'Write a function.', params: { temperature: 0, maxTokens: 64 }, seed: 1,
  key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 }, ...over,
});
const provider = (ref: string) => new OpenAiProvider({ models: { m: parseEndpointRef(ref) } });

describe('OpenAiProvider: thinking apart from the answer', () => {
  it('a <think> block holding a draft code block: the answer is what follows it', async () => {
    const s = await server([{ content: '<think>Draft:\n```python\ndef f(): return 0\n```\nWrong.</think>\n```python\ndef f(): return 1\n```' }]);
    const r = await provider(s.ref).generate(request());
    expect(r.text).toBe('```python\ndef f(): return 1\n```');
    expect(r.thinking).toBe('Draft:\n```python\ndef f(): return 0\n```\nWrong.');
  });

  it('reasoning_content (and reasoning) sent apart, and a prefill the server opened', async () => {
    const a = await server([{ content: '42', reasoning_content: 'six times seven' }]);
    expect(await provider(a.ref).generate(request())).toMatchObject({ text: '42', thinking: 'six times seven' });
    const b = await server([{ content: '42', reasoning: 'six sevens' }]);
    expect(await provider(b.ref).generate(request())).toMatchObject({ text: '42', thinking: 'six sevens' });
    const c = await server([{ content: 'six times seven\n</think>\n\n42' }]);
    expect(await provider(c.ref).generate(request())).toMatchObject({ text: '42', thinking: 'six times seven' });
  });

  it('under a schema: fenced JSON after the thinking is kept at the first call (no retry); prose without JSON is asked again', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
    const fenced = await server([{ content: '<think>4</think>\nHere:\n```json\n{"answer": 4}\n```' }]);
    const r = await provider(fenced.ref).generate(request({ jsonSchema: schema }));
    expect([r.text, r.thinking, fenced.calls()]).toEqual(['Here:\n```json\n{"answer": 4}\n```', '4', 1]);
    const prose = await server([{ content: 'It is four.' }, { content: '{"answer": 4}' }]);
    const again = await provider(prose.ref).generate(request({ jsonSchema: schema }));
    expect([again.text, prose.calls()]).toEqual(['{"answer": 4}', 2]);
  });
});
