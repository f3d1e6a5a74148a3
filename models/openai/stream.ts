/**
 * A streamed chat completion (`stream: true`): Server-Sent Events in OpenAI's
 * `chat.completion.chunk` form (OpenAI API reference, "The chat completion chunk object"; the
 * event format is WHATWG HTML, "Server-sent events", 9.2.6 "Interpreting an event stream"),
 * each `choices[0].delta.content` handed on as it comes, the usage from the last chunk
 * (`stream_options.include_usage`), ended by `data: [DONE]`. A server that ignores `stream` and
 * answers one JSON body is read as a plain reply.
 */
import { ModelError, type EndpointSpec } from '../../core/model/index.ts';
import { readChatReply, type ChatReply } from './body.ts';
import { clip, RetryableError, send, transportError, type FetchLike } from './http.ts';

/** What one chunk may carry (the fields read). */
interface ChunkBody {
  model?: unknown;
  error?: { message?: unknown } | string;
  choices?: Array<{ delta?: { content?: unknown; reasoning_content?: unknown; reasoning?: unknown }; finish_reason?: unknown; logprobs?: { content?: Array<{ logprob?: unknown }> } | null }>;
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
}

/**
 * POSTs `body` (which asks for a stream) and reads the reply, calling `onPiece` with each
 * content delta in order. Retryable failures (429, 5xx, refused connections, a timeout) are
 * {@link RetryableError}s only until the first piece arrived; after it a failure is
 * `GENERATION_FAILED` (the pieces already handed on cannot be taken back).
 *
 * @throws ModelError `ABORTED`, `MODEL_NOT_FOUND`, `GENERATION_FAILED` (an `error` event, a chunk
 *   that is not JSON, a stream cut before `[DONE]` or its finish), or RetryableError (see above).
 */
export async function postChatStream(spec: EndpointSpec, body: Record<string, unknown>, ref: string, signal: AbortSignal | undefined, fetchImpl: FetchLike, env: NodeJS.ProcessEnv | undefined, onPiece: (piece: string) => void): Promise<ChatReply> {
  const { url, res, timeout } = await send(spec, '/chat/completions', body, ref, signal, fetchImpl, env, 'text/event-stream');
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      throw transportError(err, spec, ref, signal, timeout);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ModelError('GENERATION_FAILED', `${url} answered ${res.status} with a body that is neither an event stream nor JSON: ${clip(text)}`, ref);
    }
    return readChatReply(json, spec.baseUrl, ref);
  }

  const reply: ChatReply = { text: '', tokens: { prompt: 0, completion: 0 }, stopReason: 'other' };
  const logprobs: number[] = [];
  let finished = false;
  let done = false;
  const count = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 0);
  const onEvent = (data: string) => {
    if (data === '[DONE]') {
      done = true;
      return;
    }
    let c: ChunkBody;
    try {
      c = JSON.parse(data) as ChunkBody;
    } catch {
      throw new ModelError('GENERATION_FAILED', `${url} sent an event that is not JSON: ${clip(data)}`, ref);
    }
    if (c.error !== undefined) {
      const message = typeof c.error === 'string' ? c.error : typeof c.error?.message === 'string' ? c.error.message : JSON.stringify(c.error);
      throw new ModelError('GENERATION_FAILED', `${url} failed mid-stream (ref "${ref}"): ${clip(message)}`, ref);
    }
    if (typeof c.model === 'string' && c.model) reply.model = c.model;
    if (c.usage) reply.tokens = { prompt: count(c.usage.prompt_tokens), completion: count(c.usage.completion_tokens) };
    const choice = Array.isArray(c.choices) ? c.choices[0] : undefined;
    if (!choice) return;
    const thought = choice.delta?.reasoning_content ?? choice.delta?.reasoning;
    if (typeof thought === 'string' && thought !== '') reply.reasoning = (reply.reasoning ?? '') + thought;
    const piece = choice.delta?.content;
    if (typeof piece === 'string' && piece !== '') {
      reply.text += piece;
      onPiece(piece);
    }
    for (const t of choice.logprobs?.content ?? []) logprobs.push(typeof t.logprob === 'number' ? t.logprob : Number.NaN);
    if (typeof choice.finish_reason === 'string') {
      finished = true;
      reply.stopReason = choice.finish_reason === 'stop' ? 'eos' : choice.finish_reason === 'length' ? 'maxTokens' : 'other';
    }
  };

  const decoder = new TextDecoder();
  let buffer = '';
  try {
    const reader = res.body?.getReader();
    while (reader) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while (!done && (end = eventEnd(buffer)) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end).replace(/^(\r\n|\r|\n){2}/, '');
        const data = event.split(/\r\n|\r|\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
        if (data !== '') onEvent(data);
      }
      if (done) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
  } catch (err) {
    if (err instanceof ModelError) throw err;
    const typed = transportError(err, spec, ref, signal, timeout);
    if (typed instanceof RetryableError && reply.text !== '') throw new ModelError('GENERATION_FAILED', `${typed.message}, after part of the reply had streamed (ref "${ref}")`, ref, { cause: err });
    throw typed;
  }
  if (!done && !finished) {
    const why = `${url}'s event stream ended before its finish (ref "${ref}")`;
    if (reply.text === '') throw new RetryableError(why);
    throw new ModelError('GENERATION_FAILED', why, ref);
  }
  if (logprobs.length > 0) reply.logprobs = logprobs;
  return reply;
}

/** The offset where the first complete event of `buffer` ends (before its blank line), or -1. */
function eventEnd(buffer: string): number {
  const m = /(\r\n|\r|\n)(\r\n|\r|\n)/.exec(buffer);
  return m ? m.index : -1;
}
