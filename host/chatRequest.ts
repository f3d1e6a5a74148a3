/**
 * An OpenAI chat-completions request body (OpenAI API reference, "Create chat completion") read
 * into the model port's `CallInput` for `flowlab serve-model`: messages, samplers, seed, stop,
 * max tokens, and the JSON schema in any of the forms OpenAI-compatible servers accept
 * (`response_format` json_schema; llama-server's `response_format` json_object + `schema` and its
 * `json_schema` field; vLLM's `structured_outputs.json` and `guided_json`; Ollama's `format`).
 * Errors are {@link ChatRequestError}s with the OpenAI error `param` that is at fault.
 */
import { randomInt } from 'node:crypto';
import { asRoleName } from '../core/ids.ts';
import { MAX_GENERATED_TOKENS } from '../core/limits.ts';
import type { CallInput, ChatTurn, JsonSchema } from '../core/model/index.ts';
import { schemaRefusal } from './chatSchema.ts';

/**
 * Request fields of the OpenAI API that this server does not implement: refused with 400 naming
 * the field rather than silently ignored (a client asking for function calling must learn it got
 * none). `logprobs` is not listed: Flowlab's own provider asks for it and reads its absence.
 */
export const UNSERVED_FIELDS: readonly string[] = ['tools', 'tool_choice', 'functions', 'function_call', 'parallel_tool_calls', 'audio', 'prediction', 'web_search_options', 'top_logprobs', 'logit_bias', 'modalities'];

/** A request the server refuses with 400 (or 404 for an unknown model); `param` names the field. */
export class ChatRequestError extends Error {
  override readonly name = 'ChatRequestError';
  constructor(
    message: string,
    readonly param: string | null,
    readonly status = 400,
    readonly type = 'invalid_request_error',
    readonly errorCode: string | null = null,
  ) {
    super(message);
  }
}

/** What the server generates for one request. */
export interface ChatCall {
  /** The model id (a key of the served models). */
  model: string;
  input: CallInput;
  /** The whole conversation, in order (a `developer` message as a system turn), for the provider's `turns`. */
  turns: ChatTurn[];
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk with the usage. */
  streamUsage: boolean;
  /** The request carried a schema (whether or not the server enforces it). */
  hadSchema: boolean;
}

type Body = Record<string, unknown>;

/**
 * Reads a chat-completions body. `models` are the served ids; a body without `model` uses the
 * only one when exactly one is served. With `enforceSchema` false a schema is accepted and
 * ignored (the request still succeeds). Samplers: `temperature` (default 1), `top_p`, `top_k`,
 * `min_p`; `seed` (default random); `max_tokens` or `max_completion_tokens` (default: until the
 * end of text or a full context); `stop` (a string or up to 4). Messages: see {@link readMessages}.
 * @throws ChatRequestError naming the field.
 */
export function readChatRequest(raw: unknown, models: readonly string[], enforceSchema: boolean): ChatCall {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ChatRequestError('the body must be a JSON object', null);
  const b = raw as Body;
  const model = b['model'] === undefined && models.length === 1 ? models[0]! : b['model'];
  if (typeof model !== 'string') throw new ChatRequestError('`model` must be a string (one of the ids /v1/models lists)', 'model');
  if (!models.includes(model)) throw new ChatRequestError(`model "${model.slice(0, 100)}" is not served here (served: ${models.join(', ')})`, 'model', 404, 'invalid_request_error', 'model_not_found');
  for (const f of UNSERVED_FIELDS) {
    const v = b[f];
    if (v === undefined || v === null) continue;
    if (f === 'modalities' && Array.isArray(v) && v.length === 1 && v[0] === 'text') continue;
    if (f === 'logit_bias' && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0) continue;
    throw new ChatRequestError(`\`${f}\` is not supported by this server (flowlab serve-model serves plain chat completions${f.includes('tool') || f.includes('function') ? ': no function calling' : ''}); remove it`, f, 400, 'invalid_request_error', 'unsupported_parameter');
  }
  const { system, prompt, turns } = readMessages(b['messages']);
  if (b['n'] !== undefined && b['n'] !== 1) throw new ChatRequestError('only n = 1 is supported', 'n');
  if (typeof b['grammar'] === 'string') throw new ChatRequestError('GBNF `grammar` is not supported: send a JSON schema (`response_format` json_schema)', 'grammar');
  const maxKey = b['max_completion_tokens'] !== undefined && b['max_completion_tokens'] !== null ? 'max_completion_tokens' : 'max_tokens';
  const asked = optInt(b, maxKey);
  if (asked !== undefined && asked < 1) throw new ChatRequestError(`\`${maxKey}\` must be at least 1 (got ${asked})`, maxKey);
  if (asked !== undefined && asked > MAX_GENERATED_TOKENS) throw new ChatRequestError(`\`${maxKey}\` is at most ${MAX_GENERATED_TOKENS} (got ${asked})`, maxKey);
  const maxTokens = asked ?? 0;
  const schema = schemaOf(b);
  if (schema) {
    const refusal = schemaRefusal(schema.schema, enforceSchema);
    if (refusal) throw new ChatRequestError(`${schema.param}: invalid JSON schema: ${refusal.message}`, schema.param, 400, 'invalid_request_error', 'invalid_json_schema');
  }
  const input: CallInput = {
    role: asRoleName('user'),
    ...(system ? { system } : {}),
    prompt,
    params: {
      temperature: optNumber(b, 'temperature', 0, 2) ?? 1,
      maxTokens,
      ...defined('topP', optNumber(b, 'top_p', 0, 1)),
      ...defined('topK', optInt(b, 'top_k')),
      ...defined('minP', optNumber(b, 'min_p', 0, 1)),
      ...defined('stop', stopOf(b['stop'])),
    },
    seed: optInt(b, 'seed') ?? randomInt(2 ** 32),
    ...(schema && enforceSchema ? { jsonSchema: schema.schema } : {}),
  };
  const streamOptions = b['stream_options'] as Body | undefined;
  return { model, input, turns, stream: b['stream'] === true, streamUsage: streamOptions?.['include_usage'] === true, hadSchema: schema !== undefined };
}

/**
 * The conversation of `messages`: roles `system` (`developer`, OpenAI's newer name for it, is
 * read as `system`), `user` and `assistant`, each with string content or an array of text parts
 * (an assistant's `null` content reads as ""), in order, the last non-system message a user
 * message (the model answers it). `turns` is the conversation as given, for chat templates;
 * `system` and `prompt` are its plain-completion form: the system messages' text joined by blank
 * lines, and the other messages' text joined by blank lines.
 * @throws ChatRequestError naming the field: another role (`tool`, `function`), a non-text part
 *   (`image_url`, `input_audio`), a message carrying `tool_calls`, no user message, or a
 *   conversation that does not end with a user message.
 */
function readMessages(messages: unknown): { system: string; prompt: string; turns: ChatTurn[] } {
  if (!Array.isArray(messages) || messages.length === 0) throw new ChatRequestError('`messages` must be a non-empty array', 'messages');
  const turns = messages.map((m: unknown, i): ChatTurn => {
    const msg = m as Body | null;
    const role = msg?.['role'];
    if (typeof role !== 'string') throw new ChatRequestError(`messages[${i}].role must be a string`, `messages[${i}].role`);
    if (!['system', 'developer', 'user', 'assistant'].includes(role)) {
      throw new ChatRequestError(`messages[${i}].role "${role.slice(0, 40)}" is not served: roles are system, user and assistant (no tools or functions)`, `messages[${i}].role`);
    }
    if (msg!['tool_calls'] !== undefined || msg!['function_call'] !== undefined) throw new ChatRequestError(`messages[${i}] carries tool calls, which are not served`, `messages[${i}].tool_calls`);
    return { role: role === 'developer' ? 'system' : (role as ChatTurn['role']), content: contentText(msg!['content'], i, role) };
  });
  const talk = turns.filter((t) => t.role !== 'system');
  if (talk.length === 0) throw new ChatRequestError('`messages` has no user message', 'messages');
  if (talk.at(-1)!.role !== 'user') throw new ChatRequestError('the last message (after any system messages) must be a user message: the model answers it', `messages[${turns.lastIndexOf(talk.at(-1)!)}].role`);
  const text = (list: ChatTurn[]) => list.map((t) => t.content).join('\n\n');
  return { system: text(turns.filter((t) => t.role === 'system')), prompt: text(talk), turns };
}

/** A message's text: a string, or the `text` parts of a content array. */
function contentText(content: unknown, i: number, role: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) {
    if (role === 'assistant') return '';
    throw new ChatRequestError(`messages[${i}].content must be a string or an array of text parts (a ${role} message's content may not be ${content === null ? 'null' : 'missing'})`, `messages[${i}].content`);
  }
  if (Array.isArray(content)) {
    return content
      .map((part: unknown, j) => {
        const p = part as Body | null;
        if (p?.['type'] !== 'text' || typeof p['text'] !== 'string') throw new ChatRequestError(`messages[${i}].content[${j}]: only text parts are supported (got type ${JSON.stringify(p?.['type'] ?? null).slice(0, 40)})`, `messages[${i}].content`);
        return p['text'];
      })
      .join('');
  }
  throw new ChatRequestError(`messages[${i}].content must be a string or an array of text parts`, `messages[${i}].content`);
}

/** The JSON schema of the body, in whichever form it came (see the module comment), with the request field it came in. */
export function schemaOf(b: Body): { schema: JsonSchema; param: string } | undefined {
  const rf = b['response_format'] as Body | undefined;
  const obj = (v: unknown): JsonSchema | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonSchema) : undefined);
  const at = (schema: JsonSchema | undefined, param: string) => (schema ? { schema, param } : undefined);
  if (rf?.['type'] === 'json_schema') {
    const s = obj((rf['json_schema'] as Body | undefined)?.['schema']);
    if (!s) throw new ChatRequestError('response_format.json_schema.schema must be an object', 'response_format');
    return at(s, 'response_format.json_schema.schema');
  }
  if (rf?.['type'] === 'json_object') return at(obj(rf['schema']) ?? { type: 'object' }, 'response_format.schema');
  if (rf !== undefined && rf['type'] !== 'text') throw new ChatRequestError('response_format.type is text, json_object or json_schema', 'response_format');
  return at(obj(b['json_schema']), 'json_schema') ?? at(obj((b['structured_outputs'] as Body | undefined)?.['json']), 'structured_outputs.json') ?? at(obj(b['guided_json']), 'guided_json') ?? at(obj(b['format']), 'format') ?? (b['format'] === 'json' ? { schema: { type: 'object' }, param: 'format' } : undefined);
}

function stopOf(v: unknown): string[] | undefined {
  if (v === undefined || v === null) return undefined;
  const list = typeof v === 'string' ? [v] : v;
  if (!Array.isArray(list) || list.length > 4 || !list.every((s) => typeof s === 'string')) throw new ChatRequestError('`stop` is a string or an array of up to 4 strings', 'stop');
  return list as string[];
}

function optNumber(b: Body, key: string, min: number, max: number): number | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw new ChatRequestError(`\`${key}\` must be a number from ${min} to ${max}`, key);
  return v;
}

function optInt(b: Body, key: string): number | undefined {
  const v = b[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new ChatRequestError(`\`${key}\` must be a non-negative integer`, key);
  return v;
}

const defined = <K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } => (v === undefined ? {} : ({ [k]: v } as { [P in K]: V }));
