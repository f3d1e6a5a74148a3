/**
 * The chat-completions request body for one call, in the structured-output form an endpoint
 * accepts, and the reading of the reply (OpenAI's Chat Completions API reference, "Create chat
 * completion": `messages`, `response_format`, `seed`, `logprobs`, `usage`, `finish_reason`;
 * llama.cpp tools/server/README.md for `json_schema`, `top_k`, `min_p`; vLLM docs "Structured
 * Outputs" for `structured_outputs`; Ollama docs "Structured outputs" for `format`).
 */
import { ModelError, type EndpointSpec, type GenerateRequest, type GenerateResult, type JsonSchema } from '../../core/model/index.ts';

/** The JSON Schema fields of each structured-output form, for `schema`. */
export function structuredFields(form: EndpointSpec['form'], schema: JsonSchema): Record<string, unknown> {
  switch (form) {
    case 'json_schema':
      return { response_format: { type: 'json_schema', json_schema: { name: 'output', schema, strict: true } } };
    case 'llama':
      return { response_format: { type: 'json_object', schema } };
    case 'grammar':
      return { json_schema: schema };
    case 'vllm':
      return { structured_outputs: { json: schema } };
    case 'ollama':
      return { format: schema };
    case 'none':
      return {};
  }
}

/** The system text that asks for JSON under `schema` in words (used where a server does not enforce schemas). */
export function schemaInstruction(schema: JsonSchema): string {
  return `Reply with one JSON value only, valid under this JSON Schema:\n${JSON.stringify(schema)}`;
}

/**
 * The body of one call: `system` (with `extraSystem` appended) and `prompt` as two messages, or
 * the request's `turns` as they are (`extraSystem` then leads as a system message of its own);
 * the samplers (`top_k`, `min_p` only with `spec.extras`), `seed`, `stop`, `max_tokens` (left
 * out when `maxTokens <= 0`), the schema in `spec.form` (unless `sendSchema` is false),
 * `logprobs` with `spec.logprobs`, and with `stream` `stream: true` asking for the usage in the
 * last chunk (`stream_options.include_usage`).
 */
export function chatBody(request: GenerateRequest, spec: EndpointSpec, seed: number, opts: { extraSystem?: string; sendSchema: boolean; stream?: boolean }): Record<string, unknown> {
  let messages: Array<{ role: string; content: string }>;
  if (request.turns) {
    messages = [...(opts.extraSystem ? [{ role: 'system', content: opts.extraSystem }] : []), ...request.turns.map((t) => ({ role: t.role, content: t.content }))];
  } else {
    const system = [request.system, opts.extraSystem].filter((s): s is string => !!s).join('\n\n');
    messages = [...(system ? [{ role: 'system', content: system }] : []), { role: 'user', content: request.prompt }];
  }
  const p = request.params;
  const body: Record<string, unknown> = { model: spec.model, messages, temperature: p.temperature, seed, stream: opts.stream === true };
  if (opts.stream) body['stream_options'] = { include_usage: true };
  if (p.maxTokens > 0) body['max_tokens'] = p.maxTokens;
  if (p.topP !== undefined) body['top_p'] = p.topP;
  if (spec.extras && p.topK !== undefined) body['top_k'] = p.topK;
  if (spec.extras && p.minP !== undefined) body['min_p'] = p.minP;
  const stop = (p.stop ?? []).filter((s) => s !== '');
  if (stop.length) body['stop'] = stop.slice(0, 4);
  if (spec.logprobs) body['logprobs'] = true;
  if (request.jsonSchema && opts.sendSchema) Object.assign(body, structuredFields(spec.form, request.jsonSchema));
  return body;
}

/** What a reply says: the text, the usage, how it ended, the logprobs, the model id. */
export type ChatReply = Pick<GenerateResult, 'text' | 'tokens' | 'stopReason' | 'logprobs'> & {
  model?: string;
  /** Thinking the server sent apart from `content`: `message.reasoning_content` (DeepSeek, vLLM, llama-server) or `message.reasoning` (Ollama, OpenRouter). */
  reasoning?: string;
};

/**
 * Reads a chat-completions reply: `choices[0].message.content` (null reads as ""),
 * `usage.prompt_tokens` / `completion_tokens` (0 when the server sends no usage),
 * `finish_reason` `stop` -> `eos`, `length` -> `maxTokens`, others `other`,
 * `choices[0].logprobs.content[].logprob`, and the thinking sent apart
 * (`message.reasoning_content`, else `message.reasoning`) as `reasoning`.
 * @throws ModelError `GENERATION_FAILED` when there is no choice with a message.
 */
export function readChatReply(body: unknown, where: string, ref: string): ChatReply {
  const b = body as { model?: unknown; choices?: Array<{ message?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown }; finish_reason?: unknown; logprobs?: { content?: Array<{ logprob?: unknown }> } }>; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
  const choice = Array.isArray(b?.choices) ? b.choices[0] : undefined;
  if (!choice || typeof choice.message !== 'object' || choice.message === null) {
    throw new ModelError('GENERATION_FAILED', `${where} answered without choices[0].message (ref "${ref}")`, ref);
  }
  const content = choice.message.content;
  const text = typeof content === 'string' ? content : '';
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);
  const reply: ChatReply = {
    text,
    tokens: { prompt: count(b.usage?.prompt_tokens), completion: count(b.usage?.completion_tokens) },
    stopReason: choice.finish_reason === 'stop' ? 'eos' : choice.finish_reason === 'length' ? 'maxTokens' : 'other',
  };
  if (typeof b.model === 'string' && b.model) reply.model = b.model;
  const reasoning = choice.message.reasoning_content ?? choice.message.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') reply.reasoning = reasoning;
  const lp = choice.logprobs?.content;
  if (Array.isArray(lp)) reply.logprobs = lp.map((t) => (typeof t.logprob === 'number' ? t.logprob : Number.NaN));
  return reply;
}

/** Whether `text` parses as JSON that `validate` accepts. */
export function validJson(text: string, validate: (v: unknown) => boolean): boolean {
  try {
    return validate(JSON.parse(text)) === true;
  } catch {
    return false;
  }
}
