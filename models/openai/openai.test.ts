/**
 * The OpenAI-compatible provider against scripted loopback HTTP servers (no model): bodies per
 * structured-output form, retries with backoff on 429/5xx, typed errors, API keys from the
 * environment (never in messages), least-outstanding spreading and the concurrency limit,
 * schema post-validation with derived seeds, and the probe's verdicts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import { ModelError, parseEndpointRef, ScriptedProvider, type EndpointSpec, type GenerateRequest } from '../../core/model/index.ts';
import { backoffMs, OpenAiProvider, probeEndpoint, RoutedProvider, retrySeed, structuredFields } from './index.ts';

type Handler = (body: Record<string, unknown>, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
const servers: Array<{ close: () => void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A loopback server answering every POST with `handler`; returns its base URL and the bodies it got. */
async function fakeServer(handler: Handler): Promise<{ base: string; bodies: Array<Record<string, unknown>>; headers: IncomingMessage['headers'][] }> {
  const bodies: Array<Record<string, unknown>> = [];
  const headers: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      bodies.push(body);
      headers.push(req.headers);
      void handler(body, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push({ close: () => (server.closeAllConnections(), server.close()) });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies, headers };
}

const reply = (res: ServerResponse, content: string, usage = { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }, finish = 'stop') => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ model: 'served-id', choices: [{ message: { role: 'assistant', content }, finish_reason: finish }], usage }));
};

const request = (over: Partial<GenerateRequest> = {}): GenerateRequest => ({
  role: asRoleName('writer'),
  model: 'm',
  system: 'Be brief.',
  prompt: 'Once upon a time',
  params: { temperature: 0.7, maxTokens: 16, topK: 40, topP: 0.9, minP: 0.05, stop: ['\n\n'] },
  seed: 9,
  key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 },
  ...over,
});

const provider = (ref: string, extra: Partial<ConstructorParameters<typeof OpenAiProvider>[0]> = {}) =>
  new OpenAiProvider({ models: { m: parseEndpointRef(ref) }, random: () => 0, ...extra });

describe('OpenAiProvider', () => {
  it('sends messages, samplers, seed, stop and max_tokens, and reads text, usage, stop reason and model', async () => {
    const s = await fakeServer((_b, _r, res) => reply(res, ' there was a cat', undefined, 'length'));
    const p = provider(`openai:${s.base}#tiny`);
    const out = await p.generate(request());
    expect(out).toMatchObject({ text: ' there was a cat', tokens: { prompt: 5, completion: 3 }, seed: 9, model: 'served-id', stopReason: 'maxTokens' });
    expect(s.bodies[0]).toEqual({
      model: 'tiny',
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Once upon a time' }],
      temperature: 0.7, seed: 9, stream: false, max_tokens: 16, top_p: 0.9, top_k: 40, min_p: 0.05, stop: ['\n\n'],
    });
    await p.dispose();
  });

  it('sends the schema in each structured-output form, and none of the extras with extras=0', () => {
    const schema = { type: 'object' };
    expect(structuredFields('json_schema', schema)).toEqual({ response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } } });
    expect(structuredFields('llama', schema)).toEqual({ response_format: { type: 'json_object', schema } });
    expect(structuredFields('grammar', schema)).toEqual({ json_schema: schema });
    expect(structuredFields('vllm', schema)).toEqual({ structured_outputs: { json: schema } });
    expect(structuredFields('ollama', schema)).toEqual({ format: schema });
    expect(structuredFields('none', schema)).toEqual({});
  });

  it('retries 429 and 503 with backoff (Retry-After honoured), then answers', async () => {
    let n = 0;
    const s = await fakeServer((_b, _r, res) => {
      n++;
      if (n === 1) return void res.writeHead(429, { 'retry-after': '0' }).end('{"error":{"message":"slow down"}}');
      if (n === 2) return void res.writeHead(503).end('busy');
      reply(res, 'ok');
    });
    const out = await provider(`openai:${s.base}#tiny`).generate(request());
    expect(out.text).toBe('ok');
    expect(n).toBe(3);
  });

  it('gives up after `retries` with GENERATION_FAILED naming the status and the attempts', async () => {
    const s = await fakeServer((_b, _r, res) => void res.writeHead(500).end('{"error":{"message":"boom"}}'));
    const err = await provider(`openai:${s.base}#tiny&retries=1`).generate(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).code).toBe('GENERATION_FAILED');
    expect((err as ModelError).message).toMatch(/answered 500: boom \(after 2 attempts/);
    expect(s.bodies).toHaveLength(2);
  });

  it('maps 404 to MODEL_NOT_FOUND and 400 to GENERATION_FAILED without retrying', async () => {
    const s = await fakeServer((b, _r, res) => void res.writeHead(b['model'] === 'gone' ? 404 : 400).end('{"error":{"message":"nope"}}'));
    const e404 = await provider(`openai:${s.base}#gone`).generate(request()).catch((e: unknown) => e);
    expect((e404 as ModelError).code).toBe('MODEL_NOT_FOUND');
    const e400 = await provider(`openai:${s.base}#tiny`).generate(request()).catch((e: unknown) => e);
    expect((e400 as ModelError).code).toBe('GENERATION_FAILED');
    expect(s.bodies).toHaveLength(2);
  });

  it('reads the API key from the variable the reference names, sends it as a bearer token, never prints it', async () => {
    const s = await fakeServer((_b, req, res) => (req.headers.authorization === 'Bearer sk-secret-1' ? reply(res, 'ok') : void res.writeHead(401).end('{}')));
    const ref = `openai:${s.base}#tiny&key=TEST_FLOWLAB_KEY`;
    expect((await provider(ref, { env: { TEST_FLOWLAB_KEY: 'sk-secret-1' } }).generate(request())).text).toBe('ok');
    const wrong = (await provider(ref, { env: { TEST_FLOWLAB_KEY: 'sk-wrong-2' } }).generate(request()).catch((e: unknown) => e)) as ModelError;
    expect(wrong.message).toMatch(/refused the request \(401\): check the key in \$TEST_FLOWLAB_KEY/);
    expect(wrong.message).not.toContain('sk-wrong-2');
    const unset = (await provider(ref, { env: {} }).generate(request()).catch((e: unknown) => e)) as ModelError;
    expect(unset.message).toMatch(/needs an API key in \$TEST_FLOWLAB_KEY, which is not set/);
  });

  it('spreads calls over endpoints by least outstanding requests, within each concurrency limit', async () => {
    const release: Array<() => void> = [];
    const slow: Handler = (_b, _r, res) => new Promise<void>((r) => release.push(() => (reply(res, 'ok'), r())));
    const a = await fakeServer(slow);
    const b = await fakeServer(slow);
    const p = new OpenAiProvider({ models: { m: parseEndpointRef(`openai:${a.base}#x&concurrency=1,${b.base}#x&concurrency=2`) } });
    const calls = [0, 1, 2, 3].map((i) => p.generate(request({ seed: i })));
    await until(() => release.length === 3);
    // a: 1 in flight; b: 2 in flight; the 4th waits on the least busy (a, 1 outstanding vs 2).
    expect(p.outstanding('m')).toEqual([2, 2]);
    expect([a.bodies.length, b.bodies.length]).toEqual([1, 2]);
    while (release.length) release.shift()!();
    await until(() => release.length === 1);
    release.shift()!();
    expect((await Promise.all(calls)).map((r) => r.text)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect([a.bodies.length, b.bodies.length]).toEqual([2, 2]);
  });

  it('post-validates schema replies: an invalid one is asked again with a derived seed; still invalid is returned as is', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
    const answers = ['not json', '{"answer": 4}'];
    const s = await fakeServer((_b, _r, res) => reply(res, answers.shift() ?? 'never valid'));
    const p = provider(`openai:${s.base}#tiny`);
    const out = await p.generate(request({ jsonSchema: schema }));
    expect(out.text).toBe('{"answer": 4}');
    expect(out.seed).toBe(retrySeed(9, 1));
    expect(s.bodies.map((b) => b['seed'])).toEqual([9, retrySeed(9, 1)]);
    const bad = await p.generate(request({ jsonSchema: schema }));
    expect(bad.text).toBe('never valid');
    expect(s.bodies).toHaveLength(5);
  });

  it('where the probe found the schema ignored, asks for it in words too', async () => {
    const s = await fakeServer((_b, _r, res) => reply(res, '{"answer": 1}'));
    const [spec] = parseEndpointRef(`openai:${s.base}#tiny`);
    const p = new OpenAiProvider({ models: { m: [spec!] }, verdicts: { [`${spec!.baseUrl}#tiny`]: { schema: 'ignored', seed: 'same text', usage: 'matches text', probedAt: '', details: [] } } });
    await p.generate(request({ jsonSchema: { type: 'object' } }));
    const system = (s.bodies[0]!['messages'] as Array<{ content: string }>)[0]!.content;
    expect(system).toBe('Be brief.\n\nReply with one JSON value only, valid under this JSON Schema:\n{"type":"object"}');
    expect(s.bodies[0]!['response_format']).toBeDefined();
  });

  it('refuses an unknown ref, an aborted signal, and calls after dispose with typed errors', async () => {
    const s = await fakeServer((_b, _r, res) => reply(res, 'ok'));
    const p = provider(`openai:${s.base}#tiny`);
    expect(((await p.generate(request({ model: 'other' })).catch((e: unknown) => e)) as ModelError).code).toBe('MODEL_UNKNOWN_REF');
    expect(((await p.generate(request({ signal: AbortSignal.abort() })).catch((e: unknown) => e)) as ModelError).code).toBe('ABORTED');
    await p.dispose();
    await p.dispose();
    expect(((await p.generate(request()).catch((e: unknown) => e)) as ModelError).message).toMatch(/disposed/);
  });

  it('backoff: full jitter under an exponential cap, Retry-After capped at 30 s', () => {
    expect(backoffMs(0, undefined, () => 0)).toBe(125);
    expect(backoffMs(3, undefined, () => 1)).toBe(2000);
    expect(backoffMs(10, undefined, () => 1)).toBe(8000);
    expect(backoffMs(0, 90_000)).toBe(30_000);
  });
});

describe('RoutedProvider', () => {
  it('sends endpoint refs to one provider and file refs to the other; an unknown ref is MODEL_UNKNOWN_REF', async () => {
    const files = new ScriptedProvider(() => 'from the file');
    const endpoints = new ScriptedProvider(() => 'from the server');
    const p = new RoutedProvider(files, new Set(['default']), endpoints, new Set(['role:solver']));
    expect((await p.generate(request({ model: 'default' }))).text).toBe('from the file');
    expect((await p.generate(request({ model: 'role:solver' }))).text).toBe('from the server');
    expect([files.calls, endpoints.calls]).toEqual([1, 1]);
    const err = (await p.generate(request({ model: 'other' })).catch((e: unknown) => e)) as ModelError;
    expect([err.code, err.message]).toEqual(['MODEL_UNKNOWN_REF', 'model ref "other" is not configured (known: default, role:solver)']);
    expect(await p.load('role:solver')).toEqual([]);
    await p.dispose();
  });
});

describe('probeEndpoint', () => {
  const spec = (base: string): EndpointSpec => parseEndpointRef(`openai:${base}#tiny`)[0]!;

  it('a server that drops schemas, varies under one seed and omits usage gets those verdicts', async () => {
    let n = 0;
    const s = await fakeServer((_b, _r, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ choices: [{ message: { content: `story ${n++}` }, finish_reason: 'length' }] }));
    });
    const v = await probeEndpoint(spec(s.base), { now: () => new Date(0) });
    expect([v.schema, v.seed, v.usage, v.probedAt]).toEqual(['ignored', 'different text', 'missing', '1970-01-01T00:00:00.000Z']);
  });

  it('a server that honours the schema, the seed and counts tokens gets enforced / same text / matches text', async () => {
    const s = await fakeServer((b, _r, res) => {
      const content = b['response_format'] ? '{"probe": "k7q-zebra", "ok": true}' : `seed ${String(b['seed'])}`;
      const c = Number(b['max_tokens']);
      reply(res, content, { prompt_tokens: 4, completion_tokens: c, total_tokens: 4 + c }, 'length');
    });
    const v = await probeEndpoint(spec(s.base));
    expect([v.schema, v.seed, v.usage]).toEqual(['enforced', 'same text', 'matches text']);
  });

  it('usage that does not add up is a mismatch', async () => {
    const s = await fakeServer((_b, _r, res) => reply(res, 'x', { prompt_tokens: 4, completion_tokens: 3, total_tokens: 9 }, 'length'));
    const v = await probeEndpoint(spec(s.base));
    expect(v.usage).toBe('mismatch');
    expect(v.details.at(-1)).toMatch(/completion_tokens 3 with finish_reason length and max_tokens 8/);
  });
});

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
