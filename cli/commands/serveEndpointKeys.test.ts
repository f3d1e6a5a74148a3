/**
 * `flowlab serve` as it runs (startServe: the confined lab host, the token, the HTTP API), asked
 * over HTTP for runs on an endpoint: one with `key=<ENV>` is refused with 403 FORBIDDEN naming
 * the field, and the loopback server standing for the endpoint (it records each request's
 * Authorization header) never receives the key the test put in the environment; the same
 * endpoint without a key runs, sending no Authorization header. host/endpointKeys.test.ts covers
 * every other way a page can name a model.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tempDir, writeGsm8kTasks } from '../../test/fixtures.ts';
import { startServe, type RunningServe } from './serve.ts';

const KEY_ENV = 'FLOWLAB_TEST_SERVE_WITNESS_KEY';
const TOKEN = 'ab'.repeat(32);

let dir: string;
let witness: Server;
let base: string;
let auth: string[];
let key: string;
let serve: RunningServe;

const workflow = (ref: string) =>
  `name: one\nmodels:\n  default: { path: ${JSON.stringify(ref)} }\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\n    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } }\nanswer: solve.answer\n`;

/** POST /api/<method> with the session token; resolves with the status and the JSON answer. */
function post(method: string, body: unknown): Promise<{ status: number; json: { ok: boolean; result?: unknown; error?: { code: string; field?: string; message: string } } }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: serve.server.port, method: 'POST', path: `/api/${method}`, headers: { 'content-type': 'application/json', 'x-flowlab-token': TOKEN } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

beforeEach(async () => {
  dir = tempDir('serve-keys');
  mkdirSync(path.join(dir, 'models'));
  writeGsm8kTasks(path.join(dir, 'data'));
  auth = [];
  witness = createServer((req, res) => {
    auth.push(req.headers.authorization ?? '');
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        id: 'c1', object: 'chat.completion', created: 0, model: 'm',
        choices: [{ index: 0, message: { role: 'assistant', content: '{"answer": 4}' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 4, total_tokens: 9 },
      }));
    });
  });
  await new Promise<void>((resolve) => witness.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(witness.address() as { port: number }).port}/v1`;
  key = `sk-witness-${randomBytes(12).toString('hex')}`;
  process.env[KEY_ENV] = key;
  serve = await startServe({ port: 0, host: '127.0.0.1', db: path.join(dir, 'lab.db'), models: path.join(dir, 'models'), renderer: path.join(dir, 'no-renderer'), dataDir: path.join(dir, 'data'), token: TOKEN });
});

afterEach(async () => {
  await serve.stop();
  delete process.env[KEY_ENV];
  await new Promise<void>((resolve) => witness.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

describe('flowlab serve and endpoint keys, over HTTP', () => {
  it('refuses a run or a generation on an endpoint with key= (403 FORBIDDEN naming the field); the key never reaches the server', async () => {
    const run = { workflowText: workflow(`openai:${base}#m&key=${KEY_ENV}&retries=0`), dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: {} };
    const refused = await post('startRun', run);
    expect([refused.status, refused.json.error?.code, refused.json.error?.field]).toEqual([403, 'FORBIDDEN', 'workflowText']);
    expect(refused.json.error?.message).toContain('with key= or keychain=: this served lab does not send API keys');
    const gen = await post('startGeneration', { model: `openai:${base}#m&key=${KEY_ENV}`, prompt: 'x', maxTokens: 4 });
    expect([gen.status, gen.json.error?.code, gen.json.error?.field]).toEqual([403, 'FORBIDDEN', 'model']);
    expect(JSON.stringify([refused.json, gen.json])).not.toContain(key);
    expect(auth).toEqual([]);
  });

  it('runs on the same endpoint without a key, sending no Authorization header', async () => {
    const ok = await post('startRun', { workflowText: workflow(`openai:${base}#m&retries=0`), dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, models: {} });
    expect(ok.status, JSON.stringify(ok.json)).toBe(200);
    const { experimentId } = ok.json.result as { experimentId: string };
    await serve.lab.runner.settled(experimentId);
    expect(serve.store.getExperiment(experimentId).status).toBe('completed');
    expect(auth.length).toBeGreaterThan(0);
    expect(new Set(auth)).toEqual(new Set(['']));
  });
});
