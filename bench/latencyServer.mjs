// A loopback OpenAI-compatible server written for the throughput bench (bench/throughput.ts) and
// the --parallel tests: SIMULATED, not a model. Each `POST /v1/chat/completions` is answered after
// a fixed latency (plus, optionally, a jitter that is a hash of the prompt, so calls finish out of
// order but the same way every time); the reply is a function of the prompt alone (a JSON value
// filling the request's schema, or one line of text), so a run is reproducible whatever the order
// or concurrency of calls. It counts calls in flight (the most at once, too), and can answer 429
// to every k-th call (a server shedding load) right away.
//
// In process: `const s = await startLatencyServer({ latencyMs: 100 })`, `s.baseUrl`, `s.stats()`.
// As a process: `node bench/latencyServer.mjs --latency 100 [--jitter 20] [--reject-every 3]`
// prints `{"port": N}` on one line; `GET /stats` answers the counters, `POST /reset` zeroes them.
import { createServer } from 'node:http';

/** FNV-1a, 32 bits (the same hash as core/random.ts fnv1a32). */
function fnv(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A value of `schema` made from the prompt's hash `h` (numbers: the prompt's `Value: x` when it shows one). */
function fill(schema, h, prompt, field) {
  if (!schema || typeof schema !== 'object') return 'ok';
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = schema.oneOf ?? schema.anyOf;
  if (Array.isArray(branches) && branches.length) return fill(branches[0], h, prompt, field);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type ?? (schema.properties ? 'object' : 'string');
  switch (type) {
    case 'object': {
      const out = {};
      for (const [k, sub] of Object.entries(schema.properties ?? {})) if ((schema.required ?? []).includes(k)) out[k] = fill(sub, fnv(`${h}:${k}`), prompt, k);
      return out;
    }
    case 'array':
      return [fill(schema.items ?? {}, h, prompt, field)];
    case 'number':
    case 'integer': {
      const m = /Value: (-?\d+(?:\.\d+)?)/.exec(prompt);
      return m ? Number(m[1]) : h % 100;
    }
    case 'boolean':
      return true;
    default: {
      const text = field === 'expression' ? `${h % 50} + ${(h >>> 8) % 50}` : `checked ${h % 1000}`;
      return text.slice(0, schema.maxLength ?? Infinity);
    }
  }
}

/**
 * Starts the server on 127.0.0.1.
 * @param {{ latencyMs?: number, jitterMs?: number, rejectEvery?: number, port?: number }} options
 *   latencyMs (default 100): wait before each answer; jitterMs (default 0): plus `hash(prompt) mod
 *   (jitterMs + 1)` ms; rejectEvery (default 0: never): the k-th, 2k-th, ... call is answered 429 at once.
 */
export async function startLatencyServer(options = {}) {
  const latencyMs = options.latencyMs ?? 100;
  const jitterMs = options.jitterMs ?? 0;
  const rejectEvery = options.rejectEvery ?? 0;
  const s = { calls: 0, answered: 0, rejected: 0, inFlight: 0, maxInFlight: 0 };
  const server = createServer((req, res) => {
    const json = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/stats') return json(200, s);
    if (req.method === 'POST' && req.url === '/reset') {
      Object.assign(s, { calls: 0, answered: 0, rejected: 0, inFlight: 0, maxInFlight: 0 });
      return json(200, s);
    }
    if (req.method === 'GET' && req.url === '/v1/models') return json(200, { object: 'list', data: [{ id: 'latency', object: 'model' }] });
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return json(404, { error: { message: `no route ${req.method} ${req.url}` } });
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        return json(400, { error: { message: 'body is not JSON' } });
      }
      s.calls++;
      if (rejectEvery > 0 && s.calls % rejectEvery === 0) {
        s.rejected++;
        return json(429, { error: { message: 'too many requests (latency server: every k-th call is refused)' } });
      }
      const prompt = (body.messages ?? []).map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
      const h = fnv(prompt);
      const schema = body.response_format?.json_schema?.schema ?? body.response_format?.schema ?? body.json_schema;
      const content = schema ? JSON.stringify(fill(schema, h, prompt)) : `Add the numbers, then check the sum (${h % 97}).`;
      s.inFlight++;
      s.maxInFlight = Math.max(s.maxInFlight, s.inFlight);
      setTimeout(() => {
        s.inFlight--;
        s.answered++;
        json(200, {
          id: `latency-${s.calls}`,
          object: 'chat.completion',
          model: body.model ?? 'latency',
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: prompt.split(/\s+/).length, completion_tokens: content.split(/\s+/).length, total_tokens: 0 },
        });
      }, latencyMs + (jitterMs ? h % (jitterMs + 1) : 0));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    stats: () => ({ ...s }),
    reset: () => Object.assign(s, { calls: 0, answered: 0, rejected: 0, inFlight: 0, maxInFlight: 0 }),
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const arg = (name, d) => {
    const i = process.argv.indexOf(`--${name}`);
    return i > 0 ? Number(process.argv[i + 1]) : d;
  };
  const s = await startLatencyServer({ latencyMs: arg('latency', 100), jitterMs: arg('jitter', 0), rejectEvery: arg('reject-every', 0), port: arg('port', 0) });
  process.stdout.write(JSON.stringify({ port: s.port }) + '\n');
}
