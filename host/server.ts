/**
 * The browser host's HTTP server (`flowlab serve`): the built renderer and the lab's API over
 * node:http, with Server-Sent Events for pushed `LabEvent`s. No framework, no WebSocket package.
 *
 * Routes:
 * - `GET /?token=T` (or `/index.html?token=T`): the renderer page, with a strict CSP header.
 *   Paths are decoded and normalised before routing (host/staticFiles.ts): every spelling of
 *   the page (`/%69ndex.html`, `/index.html/`, `/assets/..%2findex.html`) needs the token.
 * - `GET /<asset>`: other files of the built renderer (public build output; no token needed),
 *   served only when the normalised path is exactly one of the folder's files (an allowlist).
 * - `POST /api/<method>` with a JSON body (the payload; empty = none): answers
 *   `{ok: true, result}` (200) or `{ok: false, error: {code, message, method?, field?}}` with
 *   400 BAD_REQUEST, 401 (no or wrong token), 403 FORBIDDEN, 404 NOT_FOUND (also an unknown
 *   method), 405, 409 BUSY, 413 (body over 8 MiB), 500 INTERNAL, 503 UNAVAILABLE.
 * - `GET /api/events?token=T`: `text/event-stream`; each LabEvent is one `data: <json>` message.
 *
 * Guards, in order: the `Host` header must name this server (against DNS rebinding): a loopback
 * name, or when bound to all interfaces one of the machine's own addresses (host/hostHeader.ts),
 * always with the port; a request carrying an `Origin` other than the server's own is refused (403);
 * every API request and the page need the session token, as header `x-flowlab-token` or query
 * `?token=` (compared in constant time).
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import path from 'node:path';
import { ApiError, isApiMethod, TOKEN_HEADER, toApiError, type ApiErrorCode, type ApiMethod, type FlowlabApi, type Subscribe } from '../core/api/index.ts';
import { FlowlabError } from '../core/errors.ts';
import { MAX_BODY_BYTES } from '../core/limits.ts';
import { firstInvalidUtf8 } from '../core/utf8.ts';
import { allowedHostHeaders } from './hostHeader.ts';
import { PRODUCTION_CSP } from './security.ts';
import { isPagePath, normaliseRequestPath, StaticFiles } from './staticFiles.ts';

/** Largest request body accepted, in bytes (a 1 Mi-character workflow, JSON-escaped, fits): core/limits.ts. */
export { MAX_BODY_BYTES };
/** The session token header (core/api/channels.ts, shared with the renderer's HTTP transport). */
export { TOKEN_HEADER };
/** Largest request body of a guest token (a workshop attendee), in bytes, unless the guest sets its own. */
export const GUEST_BODY_BYTES = 64 * 1024;

/** Options of {@link startLabServer}. */
export interface LabServerOptions {
  /** The API (`createHandlers` over the store and a lab host). */
  api: FlowlabApi;
  /** Source of pushed events (an `EventHub`'s subscribe). */
  subscribe: Subscribe;
  /** The built renderer folder (`out/renderer`). Need not exist: the page then says how to build it. */
  rendererDir: string;
  /** Interface to bind. Default `127.0.0.1`. Anything not loopback is reachable from the network. */
  host?: string;
  /** TCP port; 0 picks a free one (see `LabServer.port`). Default 0. */
  port?: number;
  /** The session token. Default: 32 random bytes, hex (64 characters). */
  token?: string;
  /** SSE keep-alive comment interval in ms. Default 15000. */
  heartbeatMs?: number;
  /**
   * Tokens of narrower reach (a workshop's attendee token, host/workshop.ts): the page opens with
   * one, and each API call made with it must pass its `allow` first (which throws an ApiError to
   * refuse, or rewrites the payload and sets a cookie); the event stream is refused to them.
   */
  guests?: ReadonlyArray<GuestToken>;
  /**
   * Methods answered by another function than `api`'s, which must not block the event loop
   * (`validateWorkflow` through a worker: host/workflowValidator.ts). Each validates its own
   * payload; a {@link RawJson} answer is written as is.
   */
  offload?: Partial<Record<ApiMethod, (payload: unknown) => Promise<unknown>>>;
}

/** What a guest token's check sees of a request: the peer's address and the `Cookie` header. */
export interface GuestRequest {
  address: string;
  cookie: string | undefined;
}

/** What a guest token's check may change: the payload the method gets, a `Set-Cookie` header of the answer. */
export interface GuestAdmission {
  payload?: unknown;
  setCookie?: string;
}

/** A token of narrower reach (see `LabServerOptions.guests`). */
export interface GuestToken {
  token: string;
  /**
   * Runs before each API call made with the token: throws an ApiError to refuse (answered with its
   * code's status: 403 FORBIDDEN, 429 RATE_LIMITED with `Retry-After` when the error carries
   * `retryAfter` seconds), or returns what to change. Default body limit: `maxBodyBytes`.
   */
  allow(method: ApiMethod, payload: unknown, request: GuestRequest): GuestAdmission | void;
  /** Largest request body this token may send, in bytes. Default 64 KiB. */
  maxBodyBytes?: number;
}

/** A running server. */
export interface LabServer {
  /** The page's URL with its token, e.g. `http://127.0.0.1:5177/?token=ab12...`. */
  readonly url: string;
  /** LAN URLs of the page when bound to all interfaces (`0.0.0.0` / `::`); else empty. */
  readonly networkUrls: string[];
  readonly host: string;
  /** The real port (also when 0 was asked). */
  readonly port: number;
  readonly token: string;
  readonly server: Server;
  /** Ends open event streams and connections and stops listening. Idempotent. */
  close(): Promise<void>;
}

const STATUS: Record<ApiErrorCode, number> = { BAD_REQUEST: 400, NOT_FOUND: 404, UNAVAILABLE: 503, FORBIDDEN: 403, BUSY: 409, RATE_LIMITED: 429, INTERNAL: 500 };

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Headers on every answer. */
const BASE_HEADERS = {
  'x-content-type-options': 'nosniff',
  // The page URL carries the token: never send it on as a Referer.
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** Starts `server` listening on `host`:`port` (0: a free one) and resolves with the port bound. @throws the listen error (`EADDRINUSE`...). */
export async function listenOn(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** The host a URL names for a server bound to `host`: 127.0.0.1 for all interfaces, an IPv6 address in brackets. */
export function urlHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** Whether `host` is a loopback interface name or address. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** The readable form of the renderer-missing problem (also printed by `flowlab serve`). */
export function rendererMissingMessage(rendererDir: string): string {
  return `The renderer is not built: ${path.join(rendererDir, 'index.html')} is missing. Run \`npm run build\` (it writes out/renderer), then start \`flowlab serve\` again.`;
}

/**
 * Starts the browser host and resolves once it listens.
 * @throws the listen error (e.g. `EADDRINUSE`, `EACCES`) as Node reports it.
 */
export async function startLabServer(options: LabServerOptions): Promise<LabServer> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('hex');
  const tokenBytes = Buffer.from(token, 'utf8');
  const rendererDir = path.resolve(options.rendererDir);
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const streams = new Set<ServerResponse>();
  const assets = new StaticFiles(rendererDir);
  let port = 0;

  const same = (given: string | undefined | null, expected: Buffer): boolean => {
    if (!given) return false;
    const b = Buffer.from(given, 'utf8');
    return b.length === expected.length && timingSafeEqual(b, expected);
  };
  const tokenOk = (given: string | undefined | null): boolean => same(given, tokenBytes);
  const guests = (options.guests ?? []).map((g) => ({ ...g, bytes: Buffer.from(g.token, 'utf8') }));

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { ok: false, error: toApiError(err, 'server').toData() });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://flowlab.invalid');
    const hostHeader = req.headers.host ?? '';
    if (!allowedHostHeaders(host, port).includes(hostHeader.toLowerCase())) {
      const how = isLoopback(host) ? `127.0.0.1:${port} or localhost:${port}` : `one of this machine's addresses with port ${port}`;
      return sendError(res, 403, new ApiError('FORBIDDEN', `requests must name this server as ${how} (Host was "${hostHeader.slice(0, 200)}")`));
    }
    const origin = req.headers.origin;
    if (origin !== undefined && origin !== `http://${hostHeader}`) {
      return sendError(res, 403, new ApiError('FORBIDDEN', `requests from origin ${origin} are refused: only the page served here may call the API`));
    }
    const given = headerValue(req.headers[TOKEN_HEADER]) ?? url.searchParams.get('token');
    const authed = tokenOk(given);
    const guest = authed ? undefined : guests.find((g) => same(given, g.bytes));

    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) {
      if (!authed && !guest) return sendError(res, 401, new ApiError('FORBIDDEN', 'missing or wrong session token: open the URL that `flowlab serve` printed'));
      const name = url.pathname.slice('/api/'.length);
      if (name === 'events') {
        if (guest) return sendError(res, 403, new ApiError('FORBIDDEN', 'the event stream is not open to this token'));
        if (req.method !== 'GET') return sendError(res, 405, new ApiError('BAD_REQUEST', '/api/events takes GET'), { allow: 'GET' });
        return openStream(req, res);
      }
      if (!isApiMethod(name)) return sendError(res, 404, new ApiError('NOT_FOUND', `unknown API method "${name.slice(0, 100)}"`, name.slice(0, 100)));
      if (req.method !== 'POST') return sendError(res, 405, new ApiError('BAD_REQUEST', `${name}: use POST with a JSON body`, name), { allow: 'POST' });
      let body: string;
      const limit = guest ? (guest.maxBodyBytes ?? GUEST_BODY_BYTES) : MAX_BODY_BYTES;
      try {
        body = await readBody(req, limit);
      } catch (err) {
        if (err instanceof BodyTooLarge) return sendError(res, 413, new ApiError('BAD_REQUEST', `${name}: the request body is over ${limit} bytes`, name), { connection: 'close' });
        if (err instanceof BodyNotUtf8) return sendError(res, 400, new ApiError('BAD_REQUEST', `${name}: ${err.message}`, name));
        throw err;
      }
      let payload: unknown;
      if (body.trim() !== '') {
        try {
          payload = JSON.parse(body);
        } catch (err) {
          return sendError(res, 400, new ApiError('BAD_REQUEST', `${name}: the request body is not valid JSON (${(err as Error).message})`, name));
        }
      }
      const extra: Record<string, string> = {};
      if (guest) {
        try {
          const admitted = guest.allow(name, payload, { address: req.socket.remoteAddress ?? 'unknown', cookie: headerValue(req.headers.cookie) });
          if (admitted && 'payload' in admitted) payload = admitted.payload;
          if (admitted?.setCookie) extra['set-cookie'] = admitted.setCookie;
        } catch (err) {
          const e = toApiError(err, name);
          const retry = (err as { retryAfter?: unknown }).retryAfter;
          return sendError(res, e.code === 'RATE_LIMITED' ? 429 : 403, e, typeof retry === 'number' ? { 'retry-after': String(retry) } : {});
        }
      }
      try {
        const offloaded = options.offload?.[name];
        const result = offloaded ? await offloaded(payload) : await (options.api[name] as (p: unknown) => unknown).call(options.api, payload);
        if (result instanceof RawJson) return sendRawJson(res, 200, `{"ok":true,"result":${result.json}}`, extra);
        return sendJson(res, 200, { ok: true, result: result ?? null }, extra);
      } catch (err) {
        const apiError = toApiError(err, name);
        return sendError(res, STATUS[apiError.code], apiError);
      }
    }

    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return sendText(res, 405, 'Only GET and HEAD are served here.', { allow: 'GET, HEAD' });
    }
    const rel = normaliseRequestPath(url.pathname);
    if (rel !== undefined && isPagePath(rel)) {
      if (!authed && !guest) return sendText(res, 401, 'Flowlab: this page needs its session token. Open the URL that `flowlab serve` printed (it ends with ?token=...).');
      const index = path.join(rendererDir, 'index.html');
      if (!existsSync(index)) return sendText(res, 503, rendererMissingMessage(rendererDir));
      return sendFile(req, res, index, { 'content-security-policy': PRODUCTION_CSP, 'cache-control': 'no-store' });
    }
    const file = rel === undefined ? undefined : assets.lookup(rel);
    // Browsers ask for a favicon on their own; answer "none" rather than a 404 in the console.
    if (!file && url.pathname === '/favicon.ico') {
      res.writeHead(204, { ...BASE_HEADERS, 'cache-control': 'max-age=86400' });
      return void res.end();
    }
    if (!file) return sendText(res, 404, 'Not found.');
    return sendFile(req, res, file, { 'content-security-policy': PRODUCTION_CSP, 'cache-control': 'no-cache' });
  }

  function openStream(req: IncomingMessage, res: ServerResponse): void {
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n: connected\n\n');
    streams.add(res);
    const unsubscribe = options.subscribe((event) => {
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    });
    const beat = setInterval(() => res.write(': ping\n\n'), heartbeatMs);
    beat.unref();
    const end = () => {
      clearInterval(beat);
      unsubscribe();
      streams.delete(res);
    };
    req.on('close', end);
    res.on('close', end);
  }

  port = await listenOn(server, options.port ?? 0, host);

  const anyInterface = host === '0.0.0.0' || host === '::';
  const shown = urlHost(host);
  const pageUrl = (h: string) => `http://${h}:${port}/?token=${token}`;
  const networkUrls = anyInterface ? lanAddresses().map(pageUrl) : [];

  let closing: Promise<void> | undefined;
  return {
    url: pageUrl(shown),
    networkUrls,
    host,
    port,
    token,
    server,
    close() {
      closing ??= new Promise<void>((resolve) => {
        for (const res of streams) res.end();
        streams.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

function headerValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** A request body over `MAX_BODY_BYTES`; answered with 413 and a `BAD_REQUEST` ApiError. */
export class BodyTooLarge extends FlowlabError<'BODY_TOO_LARGE'> {
  override readonly name = 'BodyTooLarge';
  constructor() {
    super('BODY_TOO_LARGE', `the request body is over ${MAX_BODY_BYTES} bytes`);
  }
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A request body that is not UTF-8; the message names the byte offset of the first bad sequence. */
export class BodyNotUtf8 extends FlowlabError<'BODY_NOT_UTF8'> {
  override readonly name = 'BodyNotUtf8';
  constructor(readonly offset: number, detail: string) {
    super('BODY_NOT_UTF8', `the request body is not UTF-8 at byte offset ${offset}: ${detail}`);
  }
}

/**
 * The request body as UTF-8 text, decoded strictly (a Latin-1 byte is refused, never replaced).
 * @throws BodyTooLarge past `limit` bytes (the rest is drained); BodyNotUtf8 naming the byte offset.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      try {
        resolve(STRICT_UTF8.decode(bytes));
      } catch {
        const offset = firstInvalidUtf8(bytes);
        reject(new BodyNotUtf8(offset, `byte 0x${(bytes[offset] ?? 0).toString(16).padStart(2, '0')} does not start or continue a UTF-8 sequence (Latin-1 or another encoding?)`));
      }
    });
    req.on('error', reject);
  });
}

/** A result already serialised (an offloaded method's JSON text): the server writes it as the answer's `result` without parsing it. */
export class RawJson {
  constructor(readonly json: string) {}
}

function sendJson(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  sendRawJson(res, status, JSON.stringify(body), extra);
}

function sendRawJson(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, error: ApiError, extra: Record<string, string> = {}): void {
  sendJson(res, status, { ok: false, error: error.toData() }, extra);
}

function sendText(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
    ...extra,
  });
  res.end(text);
}

function sendFile(req: IncomingMessage, res: ServerResponse, file: string, headers: Record<string, string>): void {
  const size = statSync(file).size;
  res.writeHead(200, {
    ...BASE_HEADERS,
    'content-type': CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': size,
    ...headers,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file).on('error', () => res.destroy()).pipe(res);
}

function lanAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) out.push(a.address);
  }
  return out;
}
