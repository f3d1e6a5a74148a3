import type { RoleName } from '../ids.ts';

/** A JSON Schema object (draft 2020-12 subset) used for contracts and grammar-constrained decoding. */
export type JsonSchema = { [key: string]: unknown };

/** Sampling parameters for one model call. */
export interface SamplingParams {
  /** 0 = greedy. Default 0. */
  temperature: number;
  /** Most tokens to generate (completion tokens). */
  maxTokens: number;
  /** 0 disables top-k. */
  topK?: number;
  /** 1 disables nucleus sampling. */
  topP?: number;
  /** 0 disables min-p. */
  minP?: number;
  /** Stop strings: generation ends before the first occurrence. */
  stop?: string[];
}

/**
 * Where a call sits in a run; the replay provider finds the recorded call by this key.
 * `taskKey` is stable across live, resumed and replayed runs of the same experiment task.
 */
export interface CallKey {
  taskKey: string;
  nodeId: string;
  attempt: number;
  /** 0-based index of the call within one node attempt. */
  callIndex: number;
}

/** What a role asks of a model in one call; a request carries it, and so does the recorded call. */
export interface CallInput {
  role: RoleName;
  /** System instructions (the role's), kept apart from the prompt so chat templates can place them. */
  system?: string;
  /** The user-side prompt text. */
  prompt: string;
  params: SamplingParams;
  /** Seed for sampling; the same seed, prompt and params give the same text. */
  seed: number;
  /** When set, decoding is constrained by a grammar compiled from this schema. */
  jsonSchema?: JsonSchema;
}

/** One turn of a conversation, as chat templates and OpenAI's chat messages (text only) have it. */
export interface ChatTurn {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** One request to a model. */
export interface GenerateRequest extends CallInput {
  /** The model reference the role names (a key of the workflow's model map, or a path). */
  model: string;
  key: CallKey;
  signal?: AbortSignal;
  /**
   * Record the token ids fed and sampled (`GenerateResult.promptTokenIds`/`completionTokenIds`),
   * for training on exactly what was sampled (on-policy; docs/laptop-rl.md). Providers that cannot leave them unset.
   */
  recordTokens?: boolean;
  /**
   * A whole conversation, in order (system, user and assistant turns; the last one a user turn),
   * for a model with a chat template or a server that takes messages: the turns are rendered as
   * given, the generation prompt after the last. `system` and `prompt` still hold the same
   * conversation in plain-completion form (system turns joined by blank lines; the other turns'
   * text joined by blank lines), which a model without a template, and a provider that takes
   * one user turn only, use instead. Not recorded: replays look calls up by `key`.
   */
  turns?: readonly ChatTurn[];
  /**
   * Streaming hook: called with each decoded piece of the completion as it is generated, in
   * order; the pieces' concatenation equals the completion's raw text (`text`, or for a reasoning
   * model the thinking block followed by the answer, as the model wrote it). Never called by
   * replays; a provider that cannot stream (or that may re-ask, as a post-validated schema call
   * can) calls it once with the whole text before it returns. A hook that throws does not stop
   * the generation.
   */
  onText?: (chunk: string) => void;
  /**
   * Streaming hook: called as completion tokens are sampled, with how many were sampled since the
   * last call (so the running sum is the completion's token count so far, a final end-of-generation
   * token included). Providers that cannot count tokens as they come (servers, replays) never call
   * it; `GenerateResult.tokens.completion` is then the count. A hook that throws does not stop the
   * generation.
   */
  onTokens?: (count: number) => void;
}

/** A request's prompt as the model will see it (`ModelProvider.renderPrompt`). */
export interface RenderedPrompt {
  /** The text fed, detokenized, special tokens written out (the BOS the runtime prepends not included). */
  text: string;
  /** Prompt tokens by the model's own tokenizer, the BOS the runtime prepends included (`GenerateResult.tokens.prompt`). */
  tokens: number;
  /** `template`: through the file's chat template; `plain`: `system + "\n\n" + prompt` as a plain completion. */
  form: 'template' | 'plain';
}

/** Where a thread count or batch size came from: `flowlab tune`'s stored best, a flag / request field, or the built-in default. */
export type SettingSource = 'tuned' | 'flag' | 'default';

/**
 * The settings a local call actually ran with, after every default was filled in: the sampler
 * as handed to the runtime (temperature 0 is greedy; the cut-offs then have no effect), and the
 * context's threads, context size and batch size (tokens per decode), each with its source.
 */
export interface AppliedSettings {
  sampler: { temperature: number; topK: number; topP: number; minP: number; seed: number };
  threads: number;
  contextSize: number;
  batchSize: number;
  source: { threads: SettingSource; batchSize: SettingSource };
  /** Whether the call could reuse an earlier call's evaluated prompt prefix (KV state). */
  prefixReuse: boolean;
}

/** What a model call returns. Token counts are the model's own tokenizer counts. */
export interface GenerateResult {
  /** The answer: what contracts and graders see (a reasoning model's thinking is in `thinking`). */
  text: string;
  tokens: { prompt: number; completion: number };
  /**
   * Prompt tokens actually evaluated by this call; the other `tokens.prompt - promptTokensEvaluated`
   * were reused from the KV state an earlier call left (prefix reuse). Absent where unknown.
   */
  promptTokensEvaluated?: number;
  /** A reasoning model's thinking (the text inside `<think>...</think>`), kept apart from `text`. */
  thinking?: string;
  /** The settings the call ran with, where the provider knows them (local models). */
  applied?: AppliedSettings;
  /** Wall time of the call in milliseconds. */
  ms: number;
  seed: number;
  /** The resolved model identity (file name or provider model name). */
  model: string;
  /** How generation ended. */
  stopReason?: 'eos' | 'maxTokens' | 'stop' | 'abort' | 'other';
  /** The rendered text actually fed to the model (after any chat template), where known. */
  renderedPrompt?: string;
  /** With `recordTokens`: the model tokenizer's ids exactly as fed (BOS included when the model prepends one). */
  promptTokenIds?: number[];
  /** Per completion token, the log-probability a server reported, where it offers them (OpenAI-compatible endpoints asked with `logprobs=1`). */
  logprobs?: number[];
  /** With `recordTokens`: the ids exactly as sampled, in order (a final end-of-generation token included; its text is not in `text`). */
  completionTokenIds?: number[];
}

/**
 * The port every model adapter implements (node-llama-cpp, replay, OpenAI-compatible, scripted).
 * Errors: adapters throw `ModelError` (see errors.ts) with a code; the engine classifies them.
 */
export interface ModelProvider {
  readonly name: string;
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** How many model files this provider has loaded so far (replay: always 0). */
  modelsLoaded(): number;
  /**
   * Optional capability: loads the model behind `ref` (every model when omitted) before
   * anything is recorded, so a bad file is reported at once, naming it. Providers that load
   * nothing (replay, scripted) leave it out.
   */
  load?(ref?: string): Promise<unknown>;
  /**
   * Optional capability (local models): the prompt of `request` exactly as `generate` would feed
   * it (its chat template applied, or plain completion text), without generating. Servers, which
   * apply their own template, leave it out.
   */
  renderPrompt?(request: GenerateRequest): Promise<RenderedPrompt>;
  /**
   * Optional capability (token-level training): where each of `ids` starts in their detokenized
   * text, as character offsets (`offsets[i]` = length of the text of `ids[0..i)`), under the
   * tokenizer of the model behind `ref`. Providers without a tokenizer leave it out.
   */
  tokenOffsets?(ref: string, ids: readonly number[]): Promise<number[]>;
  /**
   * Optional capability (servers): the decisions taken about endpoints since the provider was
   * made, oldest first — concurrency lowered on 429/503 and raised again (AIMD), a replica taken
   * out when it stops answering and put back (docs/scale.md). The experiment stores them.
   */
  endpointDecisions?(): EndpointDecision[];
  dispose(): Promise<void>;
}

/** One decision about one endpoint (models/openai pool.ts); `limit` is its concurrency limit after it. */
export interface EndpointDecision {
  /** Epoch ms. */
  at: number;
  /** The endpoint (`<base-url>#<model>`, core/model/endpoint.ts endpointId). */
  endpoint: string;
  /** `decrease` (429/503: limit halved), `increase` (limit back up by one), `remove` (unreachable: no calls until `retryAt`), `restore` (answered again). */
  action: 'decrease' | 'increase' | 'remove' | 'restore';
  limit: number;
  reason: string;
  /** `remove`: when a call is tried on it again (epoch ms). */
  retryAt?: number;
}

/**
 * The provider `create(config)` builds, with every model (and adapter) loaded before anything is
 * recorded (`load?()`), so a bad file is reported at once, naming it. On a failed load it
 * disposes the provider and rethrows the load's error (a ModelError from the adapter).
 */
export async function loadedProvider<C>(create: (config: C) => Promise<ModelProvider>, config: C): Promise<ModelProvider> {
  const provider = await create(config);
  try {
    await provider.load?.();
  } catch (e) {
    await provider.dispose().catch(() => {});
    throw e;
  }
  return provider;
}
