/**
 * `flowlab probe`: what an OpenAI-compatible endpoint really does, checked by calling it, with
 * raw requests (no post-validation, no schema retries: the provider's own fallbacks would hide
 * what the server does).
 * - schema: two calls (seeds 1 and 2, temperature 0.8) constrained by a schema that text written
 *   without it never meets (a required property whose only allowed value is a made-up token,
 *   and no other properties), on a prompt that does not ask for JSON. Both replies valid:
 *   `enforced`; otherwise `ignored` (a server may accept a schema form with 200 and drop it).
 * - seed: two calls with one seed at temperature 1: `same text` or `different text`.
 * - usage: one call capped at 8 tokens: `usage` present with positive integer counts,
 *   `completion_tokens` = 8 when `finish_reason` is `length` (at most 8 otherwise), text present
 *   when tokens were counted, and `total_tokens` the sum when sent: `matches text`; no usage:
 *   `missing`; else `mismatch`.
 */
import { ModelError, type EndpointSpec, type JsonSchema } from '../../core/model/index.ts';
import { jsonSchemaValidator } from '../../core/workflow/index.ts';
import { structuredFields, validJson } from './body.ts';
import { postJson, RetryableError, type FetchLike } from './http.ts';
import type { ProbeVerdicts } from './verdicts.ts';

/** The schema of the schema check: unconstrained text never meets it. */
export const PROBE_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { probe: { type: 'string', enum: ['k7q-zebra'] }, ok: { type: 'boolean' } },
  required: ['probe', 'ok'],
  additionalProperties: false,
};

const PROMPT = 'Once upon a time';
const USAGE_CAP = 8;

/** Options of {@link probeEndpoint}. */
export interface ProbeOptions {
  fetch?: FetchLike;
  env?: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  now?: () => Date;
}

/**
 * Probes one endpoint (5 calls). A check whose calls fail is `failed`, with the error in its
 * detail line; the probe itself only throws `ABORTED`.
 */
export async function probeEndpoint(spec: EndpointSpec, options: ProbeOptions = {}): Promise<ProbeVerdicts> {
  const fetchImpl: FetchLike = options.fetch ?? ((url, init) => fetch(url, init));
  const ask = async (extra: Record<string, unknown>): Promise<{ text: string; finish: unknown; usage: Record<string, unknown> | undefined }> => {
    const body = { model: spec.model, messages: [{ role: 'user', content: PROMPT }], stream: false, ...extra };
    const { body: json } = await postJson(spec, '/chat/completions', body, spec.model, options.signal, fetchImpl, options.env);
    const b = json as { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }>; usage?: Record<string, unknown> };
    const choice = b.choices?.[0];
    return { text: typeof choice?.message?.content === 'string' ? choice.message.content : '', finish: choice?.finish_reason, usage: b.usage };
  };
  const details: string[] = [];
  const guard = async <T extends string>(what: string, check: () => Promise<T>): Promise<T | 'failed'> => {
    try {
      return await check();
    } catch (e) {
      if (e instanceof ModelError && e.code === 'ABORTED') throw e;
      details.push(`${what}: failed: ${e instanceof RetryableError || e instanceof ModelError ? e.message : String(e)}`);
      return 'failed';
    }
  };

  const schema = await guard('schema', async () => {
    const validate = jsonSchemaValidator.compile(PROBE_SCHEMA);
    const fields = structuredFields(spec.form === 'none' ? 'json_schema' : spec.form, PROBE_SCHEMA);
    let valid = 0;
    const seen: string[] = [];
    for (const seed of [1, 2]) {
      const r = await ask({ ...fields, seed, temperature: 0.8, max_tokens: 96 });
      seen.push(r.text);
      if (validJson(r.text, validate)) valid++;
    }
    details.push(`schema: ${valid}/2 replies valid under the probe schema, sent as form ${spec.form === 'none' ? 'json_schema' : spec.form}${valid < 2 ? ` (a reply: ${clip(JSON.stringify(seen.find((t) => !validJson(t, validate)) ?? ''))})` : ''}`);
    return valid === 2 ? 'enforced' : 'ignored';
  });

  const seed = await guard('seed', async () => {
    const a = await ask({ seed: 4242, temperature: 1, max_tokens: 24 });
    const b = await ask({ seed: 4242, temperature: 1, max_tokens: 24 });
    details.push(`seed: two calls with seed 4242 at temperature 1 gave ${a.text === b.text ? 'the same text' : `different texts (${clip(JSON.stringify(a.text))} vs ${clip(JSON.stringify(b.text))})`}`);
    return a.text === b.text ? 'same text' : 'different text';
  });

  const usage = await guard('usage', async () => {
    const r = await ask({ seed: 7, temperature: 0.8, max_tokens: USAGE_CAP });
    if (!r.usage) {
      details.push('usage: the reply has no usage');
      return 'missing';
    }
    const int = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;
    const { prompt_tokens: p, completion_tokens: c, total_tokens: t } = r.usage;
    const problems: string[] = [];
    if (!int(p) || (p as number) === 0) problems.push(`prompt_tokens ${JSON.stringify(p)}`);
    if (!int(c)) problems.push(`completion_tokens ${JSON.stringify(c)}`);
    else if (r.finish === 'length' ? c !== USAGE_CAP : (c as number) > USAGE_CAP) problems.push(`completion_tokens ${c} with finish_reason ${String(r.finish)} and max_tokens ${USAGE_CAP}`);
    else if ((c as number) > 0 && r.finish === 'length' && r.text === '') problems.push(`completion_tokens ${c} but no text`);
    if (t !== undefined && int(p) && int(c) && t !== (p as number) + (c as number)) problems.push(`total_tokens ${JSON.stringify(t)} is not ${p} + ${c}`);
    details.push(`usage: ${problems.length ? problems.join('; ') : `prompt_tokens ${p}, completion_tokens ${c} (finish_reason ${String(r.finish)}, max_tokens ${USAGE_CAP})`}`);
    return problems.length ? 'mismatch' : 'matches text';
  });

  return { schema, seed, usage, probedAt: (options.now?.() ?? new Date()).toISOString(), details };
}

/** The printed verdict lines of a probe. */
export function verdictLines(v: ProbeVerdicts): string[] {
  const schema = { enforced: 'schema enforced', ignored: 'schema ignored (the provider falls back to post-validation and retries)', failed: 'schema check failed' }[v.schema];
  const seed = { 'same text': 'same seed, same text', 'different text': 'same seed, different text', failed: 'seed check failed' }[v.seed];
  const usage = { 'matches text': 'usage matches text', missing: 'usage missing', mismatch: 'usage does not match the text', failed: 'usage check failed' }[v.usage];
  return [`schema  ${schema}`, `seed    ${seed}`, `usage   ${usage}`];
}

const clip = (s: string) => (s.length > 120 ? `${s.slice(0, 117)}...` : s);
