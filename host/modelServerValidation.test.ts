/**
 * serve-model refuses what it cannot honour, before generating, in OpenAI's error shape — checked
 * through the official `openai` npm client (issue 30): an invalid schema, a schema nested past the
 * depth limit, `max_tokens` 0 and above the cap, a user message with `content: null`, and function
 * calling (`tools` + `tool_choice: "required"`, `functions`). The provider is a ScriptedProvider
 * (SIMULATED replies): a refused request must never reach it, which the call count proves.
 */
import OpenAI, { BadRequestError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GENERATED_TOKENS } from '../core/limits.ts';
import { ScriptedProvider } from '../core/model/index.ts';
import { MAX_SCHEMA_DEPTH } from './chatSchema.ts';
import { startModelServer, type ModelServer } from './modelServer.ts';

let server: ModelServer;
let client: OpenAI;
let generated = 0;

beforeAll(async () => {
  server = await startModelServer({ models: { tiny: '/nowhere.gguf' }, provider: new ScriptedProvider(() => (generated++, '{"answer": 4}')) });
  client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
});
afterAll(async () => {
  await server?.close();
});

const user = [{ role: 'user' as const, content: 'What is 2 + 2?' }];

/** The BadRequestError the client throws for `body`, with OpenAI's error fields. */
async function refusal(body: Record<string, unknown>): Promise<{ status: number; type: string; param: string | null; code: string | null; message: string }> {
  try {
    await client.chat.completions.create({ model: 'tiny', messages: user, ...body } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
  } catch (e) {
    expect(e).toBeInstanceOf(BadRequestError);
    const err = e as BadRequestError;
    const raw = err.error as { message: string; type: string; param: string | null; code: string | null };
    expect(Object.keys(raw).sort()).toEqual(['code', 'message', 'param', 'type']); // OpenAI's error object, nothing else
    return { status: err.status, type: raw.type, param: raw.param, code: raw.code, message: raw.message };
  }
  throw new Error('the request was answered 200');
}

function nested(depth: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 1; i < depth; i++) s = { type: 'object', properties: { a: s }, required: ['a'] };
  return s;
}

describe('serve-model validates requests like the servers it imitates (official openai client)', () => {
  it('answers a valid schema request (the control)', async () => {
    const r = await client.chat.completions.create({ model: 'tiny', messages: user, max_tokens: 8, response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] } } } });
    expect(r.choices[0]!.message.content).toBe('{"answer": 4}');
    expect(generated).toBe(1);
  });

  it('refuses an invalid schema ({"type": "banana"}) naming the keyword and path', async () => {
    const r = await refusal({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object', properties: { x: { type: 'banana' } } } } } });
    expect(r).toMatchObject({ status: 400, type: 'invalid_request_error', param: 'response_format.json_schema.schema', code: 'invalid_json_schema' });
    expect(r.message).toMatch(/keyword "type" at \/properties\/x\/type/);
  });

  it('refuses a schema nested past the depth limit (500 levels), and one at the limit is accepted', async () => {
    const r = await refusal({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: nested(500) } } });
    expect(r).toMatchObject({ status: 400, param: 'response_format.json_schema.schema', code: 'invalid_json_schema' });
    expect(r.message).toMatch(new RegExp(`deeper than ${MAX_SCHEMA_DEPTH} levels`));
    // Each level of nested() is 3 JSON levels deep (schema, properties, a): 21 levels fit in 64.
    await client.chat.completions.create({ model: 'tiny', messages: user, max_tokens: 8, response_format: { type: 'json_schema', json_schema: { name: 'a', schema: nested(21) } } });
  });

  it('refuses max_tokens 0 and above the cap', async () => {
    expect(await refusal({ max_tokens: 0 })).toMatchObject({ status: 400, param: 'max_tokens', message: '`max_tokens` must be at least 1 (got 0)' });
    expect(await refusal({ max_completion_tokens: MAX_GENERATED_TOKENS + 1 })).toMatchObject({ status: 400, param: 'max_completion_tokens', message: `\`max_completion_tokens\` is at most ${MAX_GENERATED_TOKENS} (got ${MAX_GENERATED_TOKENS + 1})` });
  });

  it('refuses a user message whose content is null', async () => {
    const r = await refusal({ messages: [{ role: 'user', content: null }] });
    expect(r).toMatchObject({ status: 400, param: 'messages[0].content' });
    expect(r.message).toMatch(/a user message's content may not be null/);
  });

  it('refuses function calling (tools + tool_choice "required", functions) naming the field', async () => {
    const tools = [{ type: 'function', function: { name: 'add', parameters: { type: 'object', properties: { a: { type: 'number' } } } } }];
    expect(await refusal({ tools, tool_choice: 'required' })).toMatchObject({ status: 400, param: 'tools', code: 'unsupported_parameter', message: expect.stringMatching(/^`tools` is not supported .*no function calling/) });
    expect(await refusal({ tool_choice: 'auto' })).toMatchObject({ param: 'tool_choice' });
    expect(await refusal({ functions: [{ name: 'add', parameters: {} }] })).toMatchObject({ param: 'functions' });
    expect(generated).toBe(2); // the two accepted requests only
  });
});

describe('serve-model: a body that is not UTF-8', () => {
  it('is refused with 400 naming the byte offset, not decoded with replacement characters', async () => {
    const head = Buffer.from('{"model":"tiny","messages":[{"role":"user","content":"caf');
    const body = Buffer.concat([head, Buffer.from([0xe9]), Buffer.from('"}]}')]); // Latin-1 é
    const res = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(res.status).toBe(400);
    const err = ((await res.json()) as { error: { message: string; code: string } }).error;
    expect(err.code).toBe('invalid_encoding');
    expect(err.message).toContain(`byte offset ${head.length}:`);
  });
});
