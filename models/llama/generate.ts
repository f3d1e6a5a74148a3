/**
 * One generation call of a `LlamaProvider`: the request's context is looked up (loaded on first
 * use), a free sequence taken from its pool, and the completion sampled through node-llama-cpp's
 * `LlamaCompletion` (or, with `recordTokens`, through the token recorder, from an empty sequence).
 * With prefix reuse (the default) the call takes the sequence holding the longest prefix of its
 * prompt (waiting for a busy one when that saves half the prompt; `SequencePool`), and
 * `LlamaCompletion` evaluates only the rest (`adaptStateToTokens`); without it every call starts
 * from an empty sequence.
 */
import { LlamaCompletion, LlamaText, type LlamaContextSequence, type Token } from 'node-llama-cpp';
import { ModelError, splitThinking, textStream, type AppliedSettings, type GenerateRequest, type GenerateResult, type RenderedPrompt } from '../../core/model/index.ts';
import { errorText } from './errorText.ts';
import type { LoadedModel } from './loaders.ts';
import type { ModelCache } from './modelCache.ts';
import { renderInput, type RenderedInput } from './renderInput.ts';
import { ON_POLICY, samplerOptions, SAMPLING_DEFAULTS, type SampleCall } from './sampling.ts';
import { linkSignal, throwIfAborted } from './signals.ts';
import { sampleRecorded } from './tokenRecorder.ts';

/**
 * Generates a completion for `request` with the models of `cache` (the behaviour documented on
 * `LlamaProvider.generate`).
 *
 * @throws ModelError `MODEL_UNKNOWN_REF`, `MODEL_NOT_FOUND`, `MODEL_INVALID`, `MODEL_LOAD_FAILED`,
 *   `ABORTED`, `GENERATION_FAILED` (see `LlamaProvider.generate`).
 */
export async function generate(cache: ModelCache, request: GenerateRequest): Promise<GenerateResult> {
  const started = performance.now();
  cache.assertOpen();
  const { signal } = request;
  throwIfAborted(signal, request.model);

  const loaded = await cache.entryForRef(request.model);
  const grammar = request.jsonSchema ? await cache.grammarFor(request.jsonSchema) : undefined;
  throwIfAborted(signal, request.model);

  const fileName = loaded.summary.fileName;
  const input = renderInput(loaded, request);
  const promptTokens = input.tokens.length + (loaded.prependsBos ? 1 : 0);
  const contextSize = loaded.summary.contextSize;
  if (promptTokens >= contextSize) {
    throw new ModelError(
      'GENERATION_FAILED',
      `Prompt of ${promptTokens} tokens does not fit the ${contextSize}-token context of ${fileName} (ref "${request.model}"); raise contextSize`,
      request.model,
    );
  }
  const userStops = (request.params.stop ?? []).filter((s) => s !== '');
  const reuse = loaded.summary.prefixReuse && !request.recordTokens;
  const fed: Token[] = loaded.prependsBos && loaded.model.tokens.bos != null ? [loaded.model.tokens.bos, ...input.tokens] : input.tokens;
  // LlamaCompletion always evaluates the prompt's last token (it needs its logits), so at most n - 1 are reused.
  const reusable = (s: LlamaContextSequence) => Math.min(s.compareContextTokens(fed).firstDifferentIndex, fed.length - 1);

  // One listener on the caller's signal however many calls share it (see linkSignal).
  const link = signal ? linkSignal(signal) : undefined;
  const callSignal = link?.signal;
  let sequence: LlamaContextSequence;
  try {
    sequence = await loaded.pool.acquire(callSignal, request.model, reuse ? fed : undefined);
  } catch (err) {
    link?.release();
    throw err;
  }
  try {
    const reused = reuse ? reusable(sequence) : 0;
    if (!reuse) await sequence.clearHistory();
    const call: SampleCall = { sequence, input, request, grammar, userStops, signal: callSignal };
    const applied = appliedSettings(loaded, request, reuse);
    if (request.recordTokens) {
      const rec = await sampleRecorded(loaded, call);
      if (request.onText) textStream(request.onText).end(rec.text); // the recorder samples token by token without a text hook: one piece
      return withThinking(input.opensThinking && !grammar, {
        text: rec.text,
        tokens: { prompt: rec.promptTokenIds.length, completion: rec.completionTokenIds.length },
        promptTokensEvaluated: rec.promptTokenIds.length,
        ms: performance.now() - started,
        seed: request.seed,
        model: fileName,
        stopReason: rec.stopReason,
        renderedPrompt: input.rendered,
        applied,
        promptTokenIds: rec.promptTokenIds,
        completionTokenIds: rec.completionTokenIds,
      });
    }
    const out = await sampleCompletion(call);
    return withThinking(input.opensThinking && !grammar, {
      text: out.text,
      tokens: { prompt: promptTokens, completion: out.completionTokens },
      promptTokensEvaluated: promptTokens - reused,
      ms: performance.now() - started,
      seed: request.seed,
      model: fileName,
      stopReason: out.stopReason,
      renderedPrompt: input.rendered,
      applied,
    });
  } catch (err) {
    throw asModelError(err, cache, request, fileName);
  } finally {
    loaded.pool.release(sequence);
    link?.release();
  }
}

/**
 * The settings a call runs with: the sampler as `samplerOptions` fills it (the recorded path's
 * on-policy cut-offs, else node-llama-cpp's defaults made explicit), the context's threads, size
 * and batch size with their sources, and whether prefix reuse applied.
 */
function appliedSettings(loaded: LoadedModel, request: GenerateRequest, reuse: boolean): AppliedSettings {
  const s = loaded.summary;
  return {
    sampler: samplerOptions(request, request.recordTokens ? ON_POLICY : SAMPLING_DEFAULTS),
    threads: s.threads,
    contextSize: s.contextSize,
    batchSize: s.batchSize,
    source: { ...s.source },
    prefixReuse: reuse,
  };
}

/**
 * `result` with a reasoning model's thinking moved out of `text` (core/model/thinking.ts);
 * unchanged when there is none. `opened`: the prompt opened the block. Under a JSON-schema
 * grammar the text is JSON from its first token (the grammar leaves no room for a block), so
 * the caller passes `false` there and the whole text stays the answer.
 */
function withThinking(opened: boolean, result: GenerateResult): GenerateResult {
  const split = splitThinking(result.text, opened);
  if (split.thinking === undefined) return result;
  return { ...result, text: split.answer, thinking: split.thinking };
}

/**
 * The plain sampling path: `LlamaCompletion` on `sequence`, with node-llama-cpp's sampling
 * defaults made explicit (`SAMPLING_DEFAULTS`), no repeat penalty and no context shift.
 * `completionTokens` is the output side of the sequence's `TokenMeter` over the call.
 */
async function sampleCompletion(call: SampleCall): Promise<{ text: string; completionTokens: number; stopReason: GenerateResult['stopReason'] }> {
  const { sequence, input, request, grammar, userStops, signal } = call;
  const stopTriggers: (string | LlamaText)[] = [...userStops, ...input.extraStops];
  const completion = new LlamaCompletion({ contextSequence: sequence });
  // The caller's streaming hook gets node-llama-cpp's text chunks (held back past stop-trigger prefixes by LlamaCompletion itself).
  const stream = request.onText ? textStream(request.onText) : undefined;
  const meterBefore = sequence.tokenMeter.getState();
  let response;
  try {
    response = await completion.generateCompletionWithMeta(input.tokens, {
      ...samplerOptions(request, SAMPLING_DEFAULTS),
      maxTokens: request.params.maxTokens,
      repeatPenalty: false,
      ...(grammar ? { grammar } : {}),
      ...(stopTriggers.length > 0 ? { customStopTriggers: stopTriggers } : {}),
      ...(signal ? { signal } : {}),
      ...(stream ? { onTextChunk: (piece: string) => stream.push(piece) } : {}),
      ...(request.onTokens ? { onToken: tokenCounter(request.onTokens) } : {}),
      // Never drop or shift tokens silently: the prompt was checked to fit above, and
      // generation ends when the context is full. (A numeric shift size is used as is;
      // it bounds the prompt to contextSize - 1 inside LlamaCompletion.)
      disableContextShift: true,
      contextShiftSize: 1,
    });
  } finally {
    completion.dispose({ disposeSequence: false });
  }
  stream?.end(response.response);
  const used = sequence.tokenMeter.diff(meterBefore);
  return {
    text: response.response,
    completionTokens: used.usedOutputTokens,
    stopReason: stopReasonOf(response.metadata, userStops, input),
  };
}

/** node-llama-cpp's `onToken` for the port's `onTokens` hook: hands on each batch's size; a throw is swallowed (it must not stop the generation). */
function tokenCounter(onTokens: (count: number) => void): (tokens: Token[]) => void {
  return (tokens) => {
    try {
      if (tokens.length > 0) onTokens(tokens.length);
    } catch {
      /* the hook's failure is the caller's */
    }
  };
}

/**
 * The prompt `generate` would feed for `request` (the behaviour of `LlamaProvider.renderPrompt`):
 * the model loaded on first use, the request rendered by `renderInput`; `tokens` counts the BOS
 * the runtime prepends, as `GenerateResult.tokens.prompt` does.
 * @throws ModelError as `generate` does for loading and rendering.
 */
export async function renderPrompt(cache: ModelCache, request: GenerateRequest): Promise<RenderedPrompt> {
  cache.assertOpen();
  const loaded = await cache.entryForRef(request.model);
  const input = renderInput(loaded, request);
  return { text: input.rendered, tokens: input.tokens.length + (loaded.prependsBos ? 1 : 0), form: loaded.template ? 'template' : 'plain' };
}

type CompletionMeta = Awaited<ReturnType<LlamaCompletion['generateCompletionWithMeta']>>['metadata'];

/**
 * The port's stop reason for node-llama-cpp's: the end of generation and the grammar's end (the
 * JSON value is complete) are `eos`; a user stop string is `stop`; the chat template's own
 * end-of-turn triggers count as a natural end (`eos`).
 */
function stopReasonOf(meta: CompletionMeta, userStops: readonly string[], input: RenderedInput): GenerateResult['stopReason'] {
  switch (meta.stopReason) {
    case 'eogToken':
    case 'stopGenerationTrigger':
      return 'eos';
    case 'maxTokens':
      return 'maxTokens';
    case 'abort':
      return 'abort';
    case 'customStopTrigger': {
      const trigger = meta.customStopTrigger;
      const isUserStop =
        trigger.length > 0 && trigger.every((t) => typeof t === 'string') && userStops.includes(trigger.join(''));
      return isUserStop || input.extraStops.length === 0 ? 'stop' : 'eos';
    }
    default:
      return 'other';
  }
}

/** A failure inside a call as the port's error: `ABORTED` when the caller's signal aborted, `GENERATION_FAILED` otherwise. */
function asModelError(err: unknown, cache: ModelCache, request: GenerateRequest, fileName: string): ModelError {
  if (err instanceof ModelError) return err;
  if (request.signal?.aborted) {
    return new ModelError('ABORTED', `Generation on ${fileName} (ref "${request.model}") was aborted`, request.model, {
      cause: request.signal.reason ?? err,
    });
  }
  if (cache.disposed) {
    return new ModelError('GENERATION_FAILED', 'LlamaProvider was disposed during generation', request.model, {
      cause: err,
    });
  }
  return new ModelError(
    'GENERATION_FAILED',
    `Generation failed on ${fileName} (ref "${request.model}"): ${errorText(err)}`,
    request.model,
    { cause: err },
  );
}
