/**
 * Endpoint references: a model reference that names one or more OpenAI-compatible servers
 * instead of a GGUF file. One string form, accepted wherever a model file is (`--model`,
 * `--role-model role=...`, a workflow's `models.<ref>.path`, the lab's `models.default`):
 *
 * ```
 * openai:<base-url>#<model>[&key=<ENV> | &keychain=<service>/<account>][&concurrency=<n>][&timeout=<seconds>][&retries=<n>][&form=<form>][&extras=0|1][&logprobs=0|1]
 * ```
 *
 * Several endpoints for one reference (a cluster of vLLM or llama-server instances serving the
 * same model) are joined by commas: `openai:http://a:8080/v1#m,http://b:8080/v1#m`; calls are
 * spread by least outstanding requests. The fragment is never sent to a server; `key` names the
 * environment variable holding the API key, `keychain` the OS keychain entry holding it
 * (models/keychain.ts); the key itself is never written into a reference, so it never reaches
 * the database or a trace. `form` is how a JSON schema is sent:
 * `json_schema` (OpenAI `response_format`, the default), `llama` (llama-server's
 * `response_format: {type: json_object, schema}`), `grammar` (llama-server's `json_schema`
 * field), `vllm` (vLLM's `structured_outputs.json` and the older `guided_json`), `ollama`
 * (Ollama's `format`), `none` (never send it; post-validation only).
 *
 * Pure: no I/O. Errors: {@link EndpointRefError} `BAD_ENDPOINT` with the 0-based character
 * offset in the reference of the part at fault.
 */
import { FlowlabError } from '../errors.ts';

/** The prefix that marks a model reference as endpoints rather than a file. */
export const ENDPOINT_PREFIX = 'openai:';

/** How a JSON schema is sent to a server (see the module comment). */
export type StructuredForm = 'json_schema' | 'llama' | 'grammar' | 'vllm' | 'ollama' | 'none';
const FORMS: readonly StructuredForm[] = ['json_schema', 'llama', 'grammar', 'vllm', 'ollama', 'none'];

/** One OpenAI-compatible server serving one model. */
export interface EndpointSpec {
  /** The API base, without a trailing slash (`http://127.0.0.1:8080/v1`); `/chat/completions` is appended. */
  baseUrl: string;
  /** The `model` field sent (the server's model id). */
  model: string;
  /** Environment variable holding the API key (sent as `Authorization: Bearer`). */
  keyEnv?: string;
  /** The OS keychain entry holding the API key (instead of `keyEnv`). */
  keychain?: KeychainEntry;
  /** Requests in flight at once on this endpoint (default 4). */
  concurrency: number;
  /** Per-request timeout in milliseconds (default 120,000). */
  timeoutMs: number;
  /** Retries on 429, 5xx and connection failures, with exponential backoff (default 3). */
  retries: number;
  form: StructuredForm;
  /** Send the samplers OpenAI itself lacks (`top_k`, `min_p`) (default true). */
  extras: boolean;
  /** Ask for token logprobs (default false). */
  logprobs: boolean;
}

/**
 * An entry of the OS keychain: macOS Keychain's generic password (`-s` service, `-a` account),
 * libsecret's `service` / `account` attributes, Windows' PasswordVault resource / user name.
 */
export interface KeychainEntry {
  service: string;
  account: string;
}

export class EndpointRefError extends FlowlabError<'BAD_ENDPOINT'> {
  override readonly name = 'EndpointRefError';
  /** The 0-based character offset in the reference of the part at fault. */
  readonly offset: number;
  constructor(message: string, offset: number) {
    super('BAD_ENDPOINT', message);
    this.offset = offset;
  }
}

/** Whether a model reference names endpoints (starts with `openai:`) rather than a file. */
export function isEndpointRef(ref: string): boolean {
  return ref.startsWith(ENDPOINT_PREFIX);
}

const LIMITS = { concurrency: 64, timeout: 3600, retries: 10 } as const;

/**
 * Parses an endpoint reference into its endpoints (at least one).
 * @throws EndpointRefError `BAD_ENDPOINT` naming the part and its offset: not `openai:`, an empty
 *   part, a base URL that is not http(s), a missing `#<model>`, an unknown or malformed option.
 */
export function parseEndpointRef(ref: string): EndpointSpec[] {
  if (!isEndpointRef(ref)) throw new EndpointRefError(`an endpoint reference starts with "${ENDPOINT_PREFIX}" (got "${clip(ref)}")`, 0);
  const out: EndpointSpec[] = [];
  let offset = ENDPOINT_PREFIX.length;
  for (const part of ref.slice(ENDPOINT_PREFIX.length).split(',')) {
    out.push(parsePart(part, offset));
    offset += part.length + 1;
  }
  return out;
}

function parsePart(part: string, at: number): EndpointSpec {
  if (part.trim() === '') throw new EndpointRefError(`empty endpoint at offset ${at} (endpoints are joined by single commas)`, at);
  const hash = part.indexOf('#');
  const base = (hash < 0 ? part : part.slice(0, hash)).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new EndpointRefError(`"${clip(base)}" at offset ${at} is not a URL (want http://host:port/v1)`, at);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new EndpointRefError(`"${clip(base)}" at offset ${at}: only http and https endpoints are supported`, at);
  if (url.username || url.password) throw new EndpointRefError(`"${clip(base)}" at offset ${at} carries credentials: name the key's environment variable with &key=<ENV> instead`, at);
  if (hash < 0) throw new EndpointRefError(`endpoint "${clip(base)}" at offset ${at} names no model: add #<model-id>`, at + part.length);
  const [model = '', ...options] = part.slice(hash + 1).split('&');
  if (model === '' || model.includes('=')) throw new EndpointRefError(`endpoint "${clip(base)}" at offset ${at}: the fragment starts with the model id (#<model-id>&...)`, at + hash + 1);
  const spec: EndpointSpec = { baseUrl: base, model: decodeURIComponent(model), concurrency: 4, timeoutMs: 120_000, retries: 3, form: 'json_schema', extras: true, logprobs: false };
  let optAt = at + hash + 1 + model.length + 1;
  for (const opt of options) {
    const eq = opt.indexOf('=');
    const [k, v] = eq < 0 ? [opt, ''] : [opt.slice(0, eq), opt.slice(eq + 1)];
    const bad = (why: string) => new EndpointRefError(`option "${clip(opt)}" at offset ${optAt}: ${why}`, optAt);
    switch (k) {
      case 'key':
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) throw bad('key names an environment variable (letters, digits, _), never the key itself');
        if (spec.keychain) throw bad('give the key by key=<ENV> or keychain=<service>/<account>, not both');
        spec.keyEnv = v;
        break;
      case 'keychain':
        if (spec.keyEnv !== undefined) throw bad('give the key by key=<ENV> or keychain=<service>/<account>, not both');
        spec.keychain = keychainEntry(v, bad);
        break;
      case 'concurrency':
        spec.concurrency = intIn(v, 1, LIMITS.concurrency, bad);
        break;
      case 'timeout':
        spec.timeoutMs = intIn(v, 1, LIMITS.timeout, bad) * 1000;
        break;
      case 'retries':
        spec.retries = intIn(v, 0, LIMITS.retries, bad);
        break;
      case 'form':
        if (!FORMS.includes(v as StructuredForm)) throw bad(`form is one of ${FORMS.join(', ')}`);
        spec.form = v as StructuredForm;
        break;
      case 'extras':
      case 'logprobs':
        if (v !== '0' && v !== '1') throw bad(`${k} is 0 or 1`);
        spec[k] = v === '1';
        break;
      default:
        throw bad('unknown option (known: key, keychain, concurrency, timeout, retries, form, extras, logprobs)');
    }
    optAt += opt.length + 1;
  }
  return spec;
}

/** `<service>/<account>`, each part letters, digits and `._@+:-` (or `%XX`-encoded), at most 200 characters. */
function keychainEntry(v: string, bad: (why: string) => Error): KeychainEntry {
  const slash = v.indexOf('/');
  const part = /^(?:[A-Za-z0-9._@+:-]|%[0-9A-Fa-f]{2}){1,200}$/;
  if (slash < 0 || !part.test(v.slice(0, slash)) || !part.test(v.slice(slash + 1))) throw bad('keychain names an entry as <service>/<account> (letters, digits, ._@+:- or %XX), never the key itself');
  try {
    return { service: decodeURIComponent(v.slice(0, slash)), account: decodeURIComponent(v.slice(slash + 1)) };
  } catch {
    throw bad('keychain: a %XX escape does not decode to UTF-8 text');
  }
}

function intIn(v: string, min: number, max: number, bad: (why: string) => Error): number {
  if (!/^\d{1,6}$/.test(v)) throw bad(`want an integer from ${min} to ${max}`);
  const n = Number(v);
  if (n < min || n > max) throw bad(`want an integer from ${min} to ${max}`);
  return n;
}

/** The identity of one endpoint (base URL and model), as the probe store keys its verdicts. */
export function endpointId(spec: Pick<EndpointSpec, 'baseUrl' | 'model'>): string {
  return `${spec.baseUrl}#${spec.model}`;
}

const clip = (s: string) => (s.length > 80 ? `${s.slice(0, 77)}...` : s);
