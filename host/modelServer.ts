/**
 * `flowlab serve-model`'s server: local GGUF files over the OpenAI-compatible API, so other
 * tools can use the lab's models and the OpenAI-compatible provider (models/openai) is tested
 * against a real server. Routes: `GET /v1/models`, `POST /v1/chat/completions` (request read by
 * `chatRequest.ts`: the whole conversation goes to the provider as `turns`, which the model's chat
 * template renders turn by turn; JSON schemas enforced by grammar-constrained decoding through the
 * node-llama-cpp provider unless `grammar: false`, which accepts them with 200 and ignores them,
 * as llama-server does for some schema forms), `seed`, `usage`, and `stream: true` as
 * Server-Sent Events in OpenAI's `chat.completion.chunk` form. A client that disconnects
 * cancels its generation (the provider's abort signal). `Host` headers are checked against the
 * bound address (DNS rebinding, `hostHeader.ts`); with `keyEnv` a bearer key is required.
 *
 * Streaming: the role chunk at once, then one content chunk per decoded piece as the model
 * writes it (the port's `onText` hook; a grammar-constrained JSON text streams the same way),
 * then the finish chunk (and the usage chunk with `stream_options.include_usage`) and
 * `data: [DONE]`. The content chunks add up to the text a non-streamed reply carries (for a
 * reasoning model the stream carries the thinking block too: it is the model's raw text).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { GenerateResult, ModelProvider } from '../core/model/index.ts';
import { llamaProvider } from '../models/factory.ts';
import { ChatRequestError, readChatRequest, type ChatCall } from './chatRequest.ts';
import { allowedHostHeaders } from './hostHeader.ts';
import { BodyNotUtf8, BodyTooLarge, listenOn, MAX_BODY_BYTES, readBody, urlHost } from './server.ts';
import { errorMessage } from '../core/errors.ts';

/** Options of {@link startModelServer}. */
export interface ModelServerOptions {
  /** Served model id -> GGUF file (absolute). */
  models: Record<string, string>;
  /** Interface (default 127.0.0.1). */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  threads?: number;
  contextSize?: number;
  /** Concurrent generations per model (default the provider's, 4). */
  sequences?: number;
  /** Enforce JSON schemas by grammar (default true); false accepts and ignores them. */
  grammar?: boolean;
  /** Require `Authorization: Bearer <$keyEnv>` (the variable's value, read at start). */
  keyEnv?: string;
  env?: NodeJS.ProcessEnv;
  /** The provider (tests); default node-llama-cpp over `models` (models/factory.ts). */
  provider?: ModelProvider;
}

/** Counts since start. */
export interface ModelServerStats {
  requests: number;
  completed: number;
  /** Generations ended because their client disconnected. */
  cancelled: number;
  failed: number;
}

export interface ModelServer {
  /** The API base, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  host: string;
  port: number;
  stats: ModelServerStats;
  /** Stops listening, aborts generations in flight, disposes the provider. Idempotent. */
  close(): Promise<void>;
}

/** @throws the listen error (`EADDRINUSE`...), or an Error when `keyEnv` names an unset variable. */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const host = options.host ?? '127.0.0.1';
  const ids = Object.keys(options.models);
  const enforce = options.grammar !== false;
  const env = options.env ?? process.env;
  const key = options.keyEnv === undefined ? undefined : env[options.keyEnv];
  if (options.keyEnv !== undefined && !key) throw new Error(`serve-model: --key-env ${options.keyEnv} names a variable that is not set`);
  const provider =
    options.provider ??
    (await llamaProvider({ models: options.models, roleModels: {}, gpu: false, ...(options.threads !== undefined && { threads: options.threads }), ...(options.contextSize !== undefined && { contextSize: options.contextSize }), ...(options.sequences !== undefined && { sequences: options.sequences }) }));
  const stats: ModelServerStats = { requests: 0, completed: 0, cancelled: 0, failed: 0 };
  const inFlight = new Set<AbortController>();
  const created = () => Math.floor(Date.now() / 1000);
  let port = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendError(res, 500, errorMessage(err), 'server_error');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!allowedHostHeaders(host, port).includes((req.headers.host ?? '').toLowerCase())) {
      return sendError(res, 403, `requests must name this server by one of its addresses with port ${port}`, 'invalid_request_error');
    }
    if (key !== undefined && !bearerOk(req.headers.authorization, key)) return sendError(res, 401, 'missing or wrong API key (Authorization: Bearer ...)', 'invalid_request_error', 'invalid_api_key');
    const route = new URL(req.url ?? '/', 'http://x').pathname.replace(/\/+$/, '');
    if (route === '/v1/models' && req.method === 'GET') {
      return sendJson(res, 200, { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: created(), owned_by: 'flowlab' })) });
    }
    if (route !== '/v1/chat/completions') return sendError(res, 404, `no route ${req.method} ${route.slice(0, 100)} (served: GET /v1/models, POST /v1/chat/completions)`, 'invalid_request_error');
    if (req.method !== 'POST') return sendError(res, 405, 'use POST', 'invalid_request_error');
    stats.requests++;
    let call: ChatCall;
    try {
      const text = await readBody(req, MAX_BODY_BYTES);
      call = readChatRequest(JSON.parse(text), ids, enforce);
    } catch (e) {
      stats.failed++;
      if (e instanceof BodyTooLarge) return sendError(res, 413, e.message, 'invalid_request_error');
      if (e instanceof BodyNotUtf8) return sendError(res, 400, e.message, 'invalid_request_error', 'invalid_encoding');
      if (e instanceof ChatRequestError) return sendError(res, e.status, e.message, e.type, e.errorCode, e.param);
      return sendError(res, 400, `the body is not valid JSON (${(e as Error).message})`, 'invalid_request_error');
    }
    await complete(call, res);
  }

  async function complete(call: ChatCall, res: ServerResponse): Promise<void> {
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const ac = new AbortController();
    inFlight.add(ac);
    res.on('close', () => {
      if (!res.writableFinished) ac.abort(new Error('client disconnected'));
    });
    if (call.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive', 'x-accel-buffering': 'no' });
      sse(res, chunk(id, call.model, { role: 'assistant', content: '' }, null));
    }
    let out: GenerateResult;
    try {
      const onText = call.stream ? (piece: string) => void (res.destroyed || sse(res, chunk(id, call.model, { content: piece }, null))) : undefined;
      out = await provider.generate({ ...call.input, turns: call.turns, model: call.model, key: { taskKey: id, nodeId: 'serve-model', attempt: 1, callIndex: 0 }, signal: ac.signal, ...(onText && { onText }) });
    } catch (e) {
      if (ac.signal.aborted) {
        stats.cancelled++;
        return;
      }
      stats.failed++;
      const message = errorMessage(e);
      const tooLong = /does not fit the .*context/.test(message);
      if (call.stream) {
        sse(res, { error: { message, type: 'server_error' } });
        return void res.end();
      }
      return sendError(res, tooLong ? 400 : 500, message, tooLong ? 'invalid_request_error' : 'server_error', tooLong ? 'context_length_exceeded' : null);
    } finally {
      inFlight.delete(ac);
    }
    stats.completed++;
    const finish = out.stopReason === 'maxTokens' ? 'length' : 'stop';
    const usage = { prompt_tokens: out.tokens.prompt, completion_tokens: out.tokens.completion, total_tokens: out.tokens.prompt + out.tokens.completion };
    if (call.stream) {
      sse(res, chunk(id, call.model, {}, finish));
      if (call.streamUsage) sse(res, { id, object: 'chat.completion.chunk', created: created(), model: call.model, choices: [], usage });
      res.write('data: [DONE]\n\n');
      return void res.end();
    }
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created: created(),
      model: call.model,
      system_fingerprint: enforce ? 'flowlab-grammar' : 'flowlab-no-grammar',
      choices: [{ index: 0, message: { role: 'assistant', content: out.text }, finish_reason: finish, logprobs: null }],
      usage,
    });
  }

  const chunk = (id: string, model: string, delta: Record<string, unknown>, finish: string | null) => ({
    id,
    object: 'chat.completion.chunk',
    created: created(),
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

  port = await listenOn(server, options.port ?? 0, host);
  let closing: Promise<void> | undefined;
  return {
    baseUrl: `http://${urlHost(host)}:${port}/v1`,
    host,
    port,
    stats,
    close() {
      closing ??= (async () => {
        for (const ac of inFlight) ac.abort(new Error('server closing'));
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        if (!options.provider) await provider.dispose();
      })();
      return closing;
    },
  };
}

function bearerOk(header: string | undefined, key: string): boolean {
  const given = Buffer.from(header?.startsWith('Bearer ') ? header.slice(7) : '', 'utf8');
  const want = Buffer.from(key, 'utf8');
  return given.length === want.length && timingSafeEqual(given, want);
}

function sse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, type: string, code: string | null = null, param: string | null = null): void {
  sendJson(res, status, { error: { message, type, param, code } });
}

