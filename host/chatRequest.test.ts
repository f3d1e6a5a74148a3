/** serve-model's reading of chat-completions bodies (host/chatRequest.ts), and its server over a scripted provider (no model): keys, routes, --no-grammar. */
import { afterEach, describe, expect, it } from 'vitest';
import { ScriptedProvider } from '../core/model/index.ts';
import { ChatRequestError, readChatRequest } from './chatRequest.ts';
import { startModelServer, type ModelServer } from './modelServer.ts';

const schema = { type: 'object', properties: { a: { type: 'number' } } };
const base = { model: 'tiny', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'Hi' }] }] };

describe('readChatRequest', () => {
  it('reads messages, samplers, seed, stop and max tokens into the port input', () => {
    const call = readChatRequest({ ...base, temperature: 0.5, top_p: 0.9, top_k: 20, min_p: 0.1, seed: 12, stop: '\n', max_completion_tokens: 30, stream: true, stream_options: { include_usage: true } }, ['tiny'], true);
    expect(call).toMatchObject({ model: 'tiny', stream: true, streamUsage: true, hadSchema: false });
    expect(call.input).toMatchObject({ system: 'Be brief.', prompt: 'Hi', seed: 12, params: { temperature: 0.5, topP: 0.9, topK: 20, minP: 0.1, stop: ['\n'], maxTokens: 30 } });
  });

  it('reads a conversation into turns in order (developer as system, null content as ""), and its plain form', () => {
    const messages = [
      { role: 'developer', content: 'Rules.' },
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: null },
      { role: 'system', content: 'More rules.' },
      { role: 'user', content: [{ type: 'text', text: 'Q' }, { type: 'text', text: '2' }] },
    ];
    const call = readChatRequest({ model: 'tiny', messages }, ['tiny'], true);
    expect(call.turns).toEqual([
      { role: 'system', content: 'Rules.' },
      { role: 'user', content: 'Q1' },
      { role: 'assistant', content: '' },
      { role: 'system', content: 'More rules.' },
      { role: 'user', content: 'Q2' },
    ]);
    expect([call.input.system, call.input.prompt]).toEqual(['Rules.\n\nMore rules.', 'Q1\n\n\n\nQ2']);
    const param = (m: unknown[]) => {
      try {
        readChatRequest({ model: 'tiny', messages: m }, ['tiny'], true);
      } catch (e) {
        return (e as ChatRequestError).param;
      }
      return 'accepted';
    };
    expect(param([{ role: 'user', content: 'a' }, { role: 'function', name: 'f', content: 'x' }])).toBe('messages[1].role');
    expect(param([{ role: 'user', content: 'a' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c' }] }, { role: 'user', content: 'b' }])).toBe('messages[1].tool_calls');
    expect(param([{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }])).toBe('messages[0].content');
    expect(param([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }, { role: 'system', content: 'c' }])).toBe('messages[1].role');
    expect(param([{ role: 'system', content: 'only rules' }])).toBe('messages');
  });

  it('finds the schema in every form servers accept; --no-grammar accepts it and drops it', () => {
    const forms = [
      { response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } },
      { response_format: { type: 'json_object', schema } },
      { json_schema: schema },
      { structured_outputs: { json: schema } },
      { guided_json: schema },
      { format: schema },
    ];
    for (const f of forms) {
      expect(readChatRequest({ ...base, ...f }, ['tiny'], true).input.jsonSchema, JSON.stringify(f)).toEqual(schema);
      const ignored = readChatRequest({ ...base, ...f }, ['tiny'], false);
      expect([ignored.input.jsonSchema, ignored.hadSchema]).toEqual([undefined, true]);
    }
  });

  it('refuses bad bodies naming the param; an unknown model is 404 model_not_found', () => {
    const refuse = (body: unknown) => {
      try {
        readChatRequest(body, ['tiny'], true);
      } catch (e) {
        expect(e).toBeInstanceOf(ChatRequestError);
        const err = e as ChatRequestError;
        return [err.status, err.param, err.errorCode];
      }
      throw new Error('accepted');
    };
    expect(refuse({ ...base, model: 'gpt-9' })).toEqual([404, 'model', 'model_not_found']);
    expect(refuse({ ...base, messages: [] })).toEqual([400, 'messages', null]);
    expect(refuse({ ...base, temperature: 3 })).toEqual([400, 'temperature', null]);
    expect(refuse({ ...base, n: 2 })).toEqual([400, 'n', null]);
    expect(refuse({ ...base, grammar: 'root ::= "a"' })).toEqual([400, 'grammar', null]);
    expect(refuse({ ...base, stop: ['a', 'b', 'c', 'd', 'e'] })).toEqual([400, 'stop', null]);
    expect(refuse({ ...base, messages: [{ role: 'user', content: [{ type: 'image_url' }] }] })).toEqual([400, 'messages[0].content', null]);
  });
});

describe('startModelServer over a scripted provider', () => {
  let server: ModelServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it('requires the bearer key it was given; answers with usage and the finish reason', async () => {
    const provider = new ScriptedProvider((r) => (r.jsonSchema ? '{"a": 1}' : 'plain words here'));
    server = await startModelServer({ models: { tiny: '/nowhere.gguf' }, provider, keyEnv: 'K', env: { K: 'secret-k' } });
    const post = (auth?: string) => fetch(`${server!.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', ...(auth && { authorization: auth }) }, body: JSON.stringify({ ...base, json_schema: schema }) });
    expect((await post()).status).toBe(401);
    expect((await post('Bearer wrong')).status).toBe(401);
    const ok = (await (await post('Bearer secret-k')).json()) as { choices: Array<{ message: { content: string }; finish_reason: string }>; usage: Record<string, number> };
    expect(ok.choices[0]).toMatchObject({ message: { content: '{"a": 1}' }, finish_reason: 'stop' });
    expect(ok.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('grammar: false passes no schema to the provider, and still answers 200', async () => {
    const provider = new ScriptedProvider((r) => (r.jsonSchema ? 'schema seen' : 'schema dropped'));
    server = await startModelServer({ models: { tiny: '/nowhere.gguf' }, provider, grammar: false });
    const res = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...base, response_format: { type: 'json_schema', json_schema: { schema } } }) });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe('schema dropped');
  });

  it('refuses a Host header that does not name it (DNS rebinding) and unknown routes', async () => {
    server = await startModelServer({ models: { tiny: '/nowhere.gguf' }, provider: new ScriptedProvider(() => 'x') });
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve) => {
      request({ host: '127.0.0.1', port: server!.port, path: '/v1/models', headers: { host: 'evil.example:80' } }, (res) => resolve(res.statusCode ?? 0)).end();
    });
    expect(status).toBe(403);
    expect((await fetch(`${server.baseUrl}/completions`)).status).toBe(404);
  });
});
