/**
 * The token-recording sampler (`GenerateRequest.recordTokens`): on-policy sampling that keeps
 * the exact token ids fed and sampled, for training on what was sampled.
 */
import { LlamaGrammarEvaluationState, LlamaText, type LlamaModel, type Token } from 'node-llama-cpp';
import type { GenerateResult } from '../../core/model/index.ts';
import type { LoadedModel } from './loaders.ts';
import { ON_POLICY, samplerOptions, type SampleCall } from './sampling.ts';

/** A stop condition: text to find in the detokenized completion, or a token sequence (special tokens) to find at its end. */
type StopTrigger = { kind: 'user' | 'end'; text: string } | { kind: 'user' | 'end'; tokens: Token[] };

/** What {@link sampleRecorded} returns: the text and the ids exactly as fed and sampled. */
export interface RecordedSample {
  text: string;
  promptTokenIds: number[];
  completionTokenIds: number[];
  stopReason: GenerateResult['stopReason'];
}

/** A stop trigger as text (when it holds only text) or as a token sequence (special tokens). */
function toStopTrigger(
  kind: 'user' | 'end',
  trigger: string | LlamaText | readonly (string | Token)[],
  model: LlamaModel,
): StopTrigger {
  if (typeof trigger === 'string') return { kind, text: trigger };
  const values: readonly unknown[] = trigger instanceof LlamaText ? trigger.values : trigger;
  if (values.every((v) => typeof v === 'string')) return { kind, text: values.join('') };
  if (trigger instanceof LlamaText) return { kind, tokens: trigger.tokenize(model.tokenizer) };
  return { kind, tokens: (trigger as readonly (string | Token)[]).flatMap((v) => (typeof v === 'string' ? model.tokenize(v, false) : [v])) };
}

/**
 * The recorded, on-policy sampling path (`request.recordTokens`): the
 * prompt is fed as token ids (BOS + the rendered prompt's tokens) through `sequence.evaluate`,
 * and every sampled id is kept, the final end-of-generation token included, so a trainer scores
 * exactly the tokens that were sampled (LlamaCompletion's own tokenization and its bookkeeping,
 * where the last sampled token never enters `contextTokens`, are bypassed). Sampling: the
 * request's temperature and seed; topK, topP and minP default to 0, 1 and 0 (the full
 * distribution). Stops: an end-of-generation token, a stop string (user stops: `stop`; the
 * grammar's and the chat template's: `eos`), `maxTokens`, or a full context (`maxTokens`). The
 * text is the detokenized ids before the stop (a stop string's own text is cut off; its
 * tokens stay in `completionTokenIds`, as they were sampled).
 *
 * @throws the signal's reason (or an `Error('aborted')`) when `signal` aborts between tokens;
 *   the caller turns it into `ModelError` `ABORTED`.
 */
export async function sampleRecorded(loaded: LoadedModel, call: SampleCall): Promise<RecordedSample> {
  const { sequence, input, request, grammar, userStops, signal } = call;
  const { model } = loaded;
  const bos = model.tokens.bos;
  const promptIds: Token[] = loaded.prependsBos && bos != null ? [bos, ...input.tokens] : [...input.tokens];
  const stops: StopTrigger[] = [
    ...userStops.map((t) => toStopTrigger('user', t, model)),
    ...input.extraStops.map((t) => toStopTrigger('end', t, model)),
    ...(grammar?.stopGenerationTriggers ?? []).map((t) => toStopTrigger('end', t, model)),
  ];
  const p = request.params;
  const maxTokens = p.maxTokens > 0 ? p.maxTokens : Infinity;
  const room = loaded.summary.contextSize - 1 - promptIds.length;
  const completion: Token[] = [];
  let stopReason: GenerateResult['stopReason'] = 'maxTokens';
  let textEnd: number | undefined;
  let idsEnd: number | undefined;
  if (Math.min(maxTokens, room) <= 0) return { text: '', promptTokenIds: promptIds.map(Number), completionTokenIds: [], stopReason };
  const iterator = sequence.evaluate(promptIds, {
    ...samplerOptions(request, ON_POLICY),
    ...(grammar ? { grammarEvaluationState: new LlamaGrammarEvaluationState({ model, grammar }) } : {}),
    yieldEogToken: true,
  });
  for await (const token of iterator) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    completion.push(token);
    if (model.isEogToken(token)) {
      stopReason = 'eos';
      idsEnd = completion.length - 1;
      break;
    }
    const hit = findStop(stops, completion, model);
    if (hit) {
      stopReason = hit.kind === 'user' || (input.extraStops.length === 0 && !grammar) ? 'stop' : 'eos';
      textEnd = hit.textEnd;
      idsEnd = hit.idsEnd;
      break;
    }
    if (completion.length >= maxTokens || completion.length >= room) break;
  }
  let text = model.detokenize(completion.slice(0, idsEnd ?? completion.length));
  if (textEnd !== undefined) text = text.slice(0, textEnd);
  return { text, promptTokenIds: promptIds.map(Number), completionTokenIds: completion.map(Number), stopReason };
}

/** The first stop trigger the completion so far has reached: where its text ends (text stops) or its tokens start. */
function findStop(stops: readonly StopTrigger[], completion: readonly Token[], model: LlamaModel): { kind: 'user' | 'end'; textEnd?: number; idsEnd?: number } | undefined {
  if (!stops.length) return undefined;
  let text: string | undefined;
  let best: { kind: 'user' | 'end'; textEnd?: number; idsEnd?: number; at: number } | undefined;
  for (const s of stops) {
    if ('text' in s) {
      if (!s.text) continue;
      text ??= model.detokenize(completion as Token[]);
      const at = text.indexOf(s.text);
      if (at >= 0 && (!best || at < best.at)) best = { kind: s.kind, textEnd: at, at };
    } else if (s.tokens.length && completion.length >= s.tokens.length) {
      const from = completion.length - s.tokens.length;
      if (s.tokens.every((t, i) => completion[from + i] === t) && !best) best = { kind: s.kind, idsEnd: from, at: Infinity };
    }
  }
  return best;
}

