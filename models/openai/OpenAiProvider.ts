/**
 * The OpenAI-compatible adapter of the `ModelProvider` port: chat completions on servers that
 * speak OpenAI's API (llama-server, vLLM, Ollama, LM Studio, `flowlab serve-model`, OpenAI).
 *
 * Design:
 * - Each model reference maps to one or more endpoints (core/model/endpoint.ts); a call takes a
 *   slot on the one with the fewest outstanding requests (`pool.ts`), within its concurrency limit.
 * - 429, 5xx, refused connections and timeouts are retried (`spec.retries` times) with backoff
 *   (`http.ts backoffMs`), each retry choosing an endpoint afresh.
 * - A JSON-schema request is sent in the endpoint's structured-output form and the reply is
 *   always validated against the schema (the same validator as the engine's contract check).
 *   An invalid reply is asked again with derived seeds (`schemaRetries` more times); where the
 *   probe found the schema ignored (`verdicts.ts`), the schema is also put into the system
 *   message in words. A reply still invalid is returned as it is: the engine's contract check
 *   turns it into `UNPARSABLE_OUTPUT` or `CONTRACT_VIOLATION`, so no unchecked output is kept.
 * - API keys are read from the environment variable the reference names, at each call, or from
 *   the OS keychain entry it names, once per process (models/keychain.ts); they are never in the
 *   reference, the result, an error message or the trace.
 * - Streaming: with the port's `onText` hook and no schema, the call asks for `stream: true`
 *   and hands each content delta on as it arrives (`stream.ts`); a retry is made only while
 *   nothing has streamed. A schema call may be asked again, so its hook gets the kept text once.
 */
import { endpointId, ModelError, repairJson, splitReply, textStream, type EndpointDecision, type SplitThinking, type EndpointSpec, type GenerateRequest, type GenerateResult, type ModelProvider, type TextStream } from '../../core/model/index.ts';
import { jsonSchemaValidator } from '../../core/workflow/index.ts';
import { chatBody, readChatReply, schemaInstruction, validJson, type ChatReply } from './body.ts';
import { backoffMs, postJson, RetryableError, sleep, type FetchLike } from './http.ts';
import { EndpointPool, type CallOutcome, type PoolOptions } from './pool.ts';
import { postChatStream } from './stream.ts';
import type { ProbeVerdicts } from './verdicts.ts';
import { errorMessage } from '../../core/errors.ts';

/** Options of {@link OpenAiProvider}. */
export interface OpenAiProviderOptions {
  /** Model reference -> its endpoints (at least one each). */
  models: Record<string, EndpointSpec[]>;
  /** Probe verdicts by endpoint id (`verdicts.ts readVerdicts`); none: schemas are trusted as sent, and still post-validated. */
  verdicts?: Record<string, ProbeVerdicts>;
  /** Extra attempts for a reply invalid under its schema (default 2). */
  schemaRetries?: number;
  fetch?: FetchLike;
  env?: NodeJS.ProcessEnv;
  /** Backoff jitter source (tests). */
  random?: () => number;
  /** Backpressure and failover settings of each reference's pool (tests: a clock, shorter pauses). */
  pool?: Omit<PoolOptions, 'onDecision'>;
}

/** The seed of schema retry `k` (k = 0: the request's seed), kept in [0, 2^32). */
export const retrySeed = (seed: number, k: number): number => (seed + k * 1_000_003) % 2 ** 32;

export class OpenAiProvider implements ModelProvider {
  readonly name = 'openai-compatible';
  private readonly pools = new Map<string, EndpointPool>();
  private readonly closing = new AbortController();
  private readonly fetchImpl: FetchLike;
  private readonly decisions: EndpointDecision[] = [];

  constructor(private readonly options: OpenAiProviderOptions) {
    for (const [ref, specs] of Object.entries(options.models)) {
      if (specs.length === 0) throw new ModelError('MODEL_UNKNOWN_REF', `model ref "${ref}" has no endpoints`, ref);
      this.pools.set(ref, new EndpointPool(specs, { ...options.pool, onDecision: (d) => void this.decisions.push(d) }));
    }
    this.fetchImpl = options.fetch ?? ((url, init) => fetch(url, init));
  }

  /**
   * One chat completion: a system message (`request.system`) and a user message
   * (`request.prompt`), or the request's `turns`; streamed with `request.onText` (see the module
   * comment); `temperature`, `top_p`, `seed`, `stop` (the first 4), `max_tokens`, and
   * with the endpoint's `extras` `top_k` and `min_p`. Token counts are the server's `usage`
   * (0 where it sends none; `flowlab probe` says so). `model` is the id the server answers with.
   * `renderedPrompt` is not known (the server applies its own template). `ms` is the whole
   * call's wall time, waits and retries included.
   *
   * @throws ModelError `MODEL_UNKNOWN_REF` (ref not configured), `ABORTED` (`request.signal`,
   *   also while waiting for a slot or a retry), `MODEL_NOT_FOUND` (404), `GENERATION_FAILED`
   *   (other 4xx, a reply without a message, retries used up, a key variable unset, disposed).
   */
  async generate(request: GenerateRequest): Promise<GenerateResult> {
    const started = performance.now();
    const ref = request.model;
    if (this.closing.signal.aborted) throw new ModelError('GENERATION_FAILED', 'OpenAiProvider was disposed', ref);
    const pool = this.pools.get(ref);
    if (!pool) throw new ModelError('MODEL_UNKNOWN_REF', `model ref "${ref}" is not configured (known: ${[...this.pools.keys()].join(', ')})`, ref);
    if (request.signal?.aborted) throw new ModelError('ABORTED', `call (ref "${ref}") was aborted`, ref, { cause: request.signal.reason });
    const signal = request.signal ? AbortSignal.any([request.signal, this.closing.signal]) : this.closing.signal;

    const schema = request.jsonSchema;
    const validate = schema ? jsonSchemaValidator.compile(schema) : undefined;
    const tries = schema ? 1 + (this.options.schemaRetries ?? 2) : 1;
    const stream = request.onText ? textStream(request.onText) : undefined;
    let last: { reply: ChatReply; seed: number; spec: EndpointSpec; split: SplitThinking } | undefined;
    for (let k = 0; k < tries; k++) {
      const seed = retrySeed(request.seed, k);
      const got = await this.call(pool, request, seed, signal, schema ? undefined : stream);
      // Thinking apart from the answer (core/model/thinking.ts splitReply, as the engine splits
      // every reply); the answer is what the schema checks. An answer whose JSON sits in prose or
      // a fence is kept: the engine repairs it (or refuses it in strict mode) and records which.
      last = { ...got, split: splitReply(got.reply.text, { reasoning: got.reply.reasoning }) };
      if (!validate || validJson(last.split.answer, validate) || repairJson(last.split.answer, (v) => validate(v) === true).ok) break;
    }
    const { reply, seed, spec, split } = last!;
    stream?.end(reply.text);
    const out: GenerateResult = {
      text: split.answer,
      tokens: reply.tokens,
      ms: performance.now() - started,
      seed,
      model: reply.model ?? spec.model,
      stopReason: reply.stopReason,
    };
    if (split.thinking !== undefined) out.thinking = split.thinking;
    if (reply.logprobs) out.logprobs = reply.logprobs;
    return out;
  }

  /** One reply, with retries on retryable failures, each on the least busy endpoint; streamed into `stream` when given. */
  private async call(pool: EndpointPool, request: GenerateRequest, seed: number, signal: AbortSignal, stream?: TextStream): Promise<{ reply: ChatReply; seed: number; spec: EndpointSpec }> {
    const ref = request.model;
    let refused: EndpointSpec | undefined;
    for (let attempt = 0; ; attempt++) {
      const lease = await pool.acquire(signal, ref, refused, request.key.taskKey).catch((e: unknown) => {
        throw this.asAborted(e, request);
      });
      const spec = lease.spec;
      const ignored = this.options.verdicts?.[endpointId(spec)]?.schema === 'ignored';
      const body = chatBody(request, spec, seed, {
        sendSchema: spec.form !== 'none',
        ...(request.jsonSchema && (ignored || spec.form === 'none') ? { extraSystem: schemaInstruction(request.jsonSchema) } : {}),
        ...(stream && { stream: true }),
      });
      try {
        let reply: ChatReply;
        if (stream) reply = await postChatStream(spec, body, ref, signal, this.fetchImpl, this.options.env, (piece) => stream.push(piece));
        else reply = readChatReply((await postJson(spec, '/chat/completions', body, ref, signal, this.fetchImpl, this.options.env)).body, spec.baseUrl, ref);
        lease.release('ok');
        return { reply, seed, spec };
      } catch (e) {
        if (e instanceof RetryableError) lease.release(outcomeOf(e), e.message);
        if (!(e instanceof RetryableError) || attempt >= spec.retries) throw this.asModelError(e, request, spec, attempt);
        lease.release();
        refused = spec;
        // Another endpoint is in: retry there at once; else back off on this one.
        if (!pool.hasOther(spec)) {
          await sleep(backoffMs(attempt, e.retryAfterMs, this.options.random), signal, ref).catch((err: unknown) => {
            throw this.asAborted(err, request);
          });
        }
        continue;
      } finally {
        lease.release();
      }
    }
  }

  /** A disposal seen as an abort is `GENERATION_FAILED` ("disposed"); the caller's abort stays `ABORTED`. */
  private asAborted(e: unknown, request: GenerateRequest): unknown {
    if (e instanceof ModelError && e.code === 'ABORTED' && !request.signal?.aborted && this.closing.signal.aborted) {
      return new ModelError('GENERATION_FAILED', 'OpenAiProvider was disposed during the call', request.model, { cause: e });
    }
    return e;
  }

  private asModelError(e: unknown, request: GenerateRequest, spec: EndpointSpec, attempt: number): unknown {
    if (e instanceof RetryableError) {
      return new ModelError('GENERATION_FAILED', `${e.message} (after ${attempt + 1} attempt${attempt ? 's' : ''}; ref "${request.model}")`, request.model, { cause: e });
    }
    if (e instanceof ModelError) return this.asAborted(e, request);
    return new ModelError('GENERATION_FAILED', `call to ${spec.baseUrl} failed: ${errorMessage(e)}`, request.model, { cause: e });
  }

  /** The backpressure and failover decisions taken so far (pool.ts), oldest first. */
  endpointDecisions(): EndpointDecision[] {
    return [...this.decisions];
  }

  /** Requests outstanding (in flight + waiting) per endpoint of `ref`. */
  outstanding(ref: string): number[] {
    return this.pools.get(ref)?.outstanding() ?? [];
  }

  /** Always 0: the models live on the servers. */
  modelsLoaded(): number {
    return 0;
  }

  /** Aborts calls in flight and waiting (they fail `GENERATION_FAILED`, "disposed"); later calls fail the same way. Safe to call twice. */
  async dispose(): Promise<void> {
    if (this.closing.signal.aborted) return;
    this.closing.abort(new Error('OpenAiProvider disposed'));
    for (const pool of this.pools.values()) pool.cancelWaiting(new ModelError('GENERATION_FAILED', 'OpenAiProvider was disposed'));
  }
}

/** What a retryable failure says about its endpoint: 429 and 503 are load shed (AIMD), no answer is unreachable (taken out), another 5xx is neither. */
function outcomeOf(e: RetryableError): CallOutcome {
  if (e.status === undefined) return 'unreachable';
  return e.status === 429 || e.status === 503 ? 'overloaded' : 'failed';
}
