/**
 * The playground's types, limits and event guard (no zod, so the preload and the renderer can use
 * them; the payload schemas are in features/playground.ts): one generation with one model, a local
 * GGUF file or an OpenAI-compatible endpoint, with the sampling settings a role has, streamed to
 * the window as `PlaygroundEvent`s (a part of `LabEvent`).
 */

/** Longest prompt, and longest system text, in characters. */
export const MAX_PLAYGROUND_TEXT = 32_000;
/** Most completion tokens one playground generation may ask for. */
export const MAX_PLAYGROUND_TOKENS = 4096;
/** Largest JSON schema, in characters of its JSON text. */
export const MAX_PLAYGROUND_SCHEMA_CHARS = 64_000;
/** Longest rendered prompt an event carries, characters (a longer one is cut, and `renderedCut` set). */
export const MAX_RENDERED_CHARS = 80_000;
/** Longest whole completion an event carries, characters (4096 tokens of at most ~16 characters each, with room); a piece is usually one token's text, but a provider that cannot stream sends the whole text as one. */
const MAX_TEXT_CHARS = 200_000;

/**
 * The settings the playground starts with, in the window and in `flowlab generate`: sampled
 * (temperature 0.8 with node-llama-cpp's top-k 40 and top-p 0.95, min-p 0.05), seed 0 (the CLI's
 * default seed everywhere), 256 completion tokens.
 */
export const PLAYGROUND_DEFAULTS = { temperature: 0.8, topK: 40, topP: 0.95, minP: 0.05, seed: 0, maxTokens: 256 } as const;

/**
 * `startGeneration`'s payload. Omitted sampling fields take the provider's defaults (node-llama-cpp:
 * temperature 0 = greedy, top-k 40, top-p 0.95, min-p 0; an endpoint: the server's).
 */
export interface StartGenerationRequest {
  /** An absolute path of a `.gguf` file in the lab's model folders, or an endpoint reference `openai:<base-url>#<model>` (core/model/endpoint.ts). */
  model: string;
  /** The user's text, 1..32,000 characters. */
  prompt: string;
  /** System text (the chat template places it; a model without one gets `system + "\n\n" + prompt`), at most 32,000 characters. */
  system?: string;
  /** 0..5; 0 is greedy. */
  temperature?: number;
  /** 0..1000; 0 turns top-k off. */
  topK?: number;
  /** 0..1; 1 turns nucleus sampling off. */
  topP?: number;
  /** 0..1; 0 turns min-p off. */
  minP?: number;
  /** 0..2^32-1; the same seed, prompt and settings give the same text with a local model. Default 0. */
  seed?: number;
  /** Completion tokens, 1..4096. */
  maxTokens: number;
  /** A JSON schema (an object) constraining the reply (a grammar for local models; the endpoint's structured output form). */
  jsonSchema?: Record<string, unknown>;
  /** CPU threads of a local model (1..256). Default: `flowlab tune`'s best, else by the file's size. */
  threads?: number;
}

/** `cancelGeneration`'s payload. */
export interface CancelGenerationPayload {
  generationId: string;
}

/** How the prompt reached the model: the file's chat template, plain completion text, or the server's own template (unseen here). */
export type PromptForm = 'template' | 'plain' | 'server';

/** The statuses of a generation: `running` until it ends `completed`, `cancelled` or `failed`. */
export type GenerationStatus = 'running' | 'completed' | 'cancelled' | 'failed';
const STATUSES: readonly string[] = ['running', 'completed', 'cancelled', 'failed'];
const FORMS: readonly string[] = ['template', 'plain', 'server'];
const STOPS: readonly string[] = ['eos', 'maxTokens', 'stop', 'abort', 'other'];

/**
 * A generation's events, ordered per generation. `generation` opens it (`running`, the model's
 * name), says again `running` once the prompt is rendered (`renderedPrompt`, `promptForm`,
 * `promptTokens`; a server's prompt: `promptForm: 'server'` and no text), and closes it:
 * `completed` with the whole `text`, the token counts (the model's tokenizer, or the server's
 * usage), `ms` (the generation's wall time, the model's load not included), `firstTokenMs`,
 * `tokensPerSecond` (completion tokens / `ms`) and the `stopReason`; `cancelled` or `failed`
 * with `message`. Between them, `generationText` carries each piece of the reply as it is
 * sampled, in order (the pieces add up to the completion's raw text), with the completion tokens
 * so far where the provider counts them as they come (local models) and the ms since the
 * generation started.
 */
export type PlaygroundEvent =
  | {
      type: 'generation'; generationId: string; model: string; status: GenerationStatus;
      renderedPrompt?: string; renderedCut?: boolean; promptForm?: PromptForm; promptTokens?: number;
      text?: string; thinking?: string; completionTokens?: number; ms?: number; firstTokenMs?: number; tokensPerSecond?: number;
      stopReason?: 'eos' | 'maxTokens' | 'stop' | 'abort' | 'other'; seed?: number; message?: string;
    }
  | { type: 'generationText'; generationId: string; text: string; completionTokens?: number; ms: number };

/** The playground's methods (lab methods). */
export interface PlaygroundApi {
  /**
   * Starts one generation in the background; resolves with its id once it runs (its events may
   * arrive before the answer). Errors: `BAD_REQUEST` naming the field (`model`: not an absolute
   * `.gguf` path, a file whose GGUF header cannot be read, or a bad endpoint reference; a bad
   * sampling value). A failure once it runs (a load, a schema that cannot be compiled, a server's
   * error) is its `failed` event., `FORBIDDEN` naming `model` (outside the
   * lab's model folders, or, on a served lab, an endpoint that would be sent a key from the host's
   * environment or keychain), `BUSY` naming `model` (a generation with that model runs: cancel it
   * first), `UNAVAILABLE` (no local models on this machine, or a host without a playground).
   */
  startGeneration(payload: StartGenerationRequest): Promise<{ generationId: string }>;
  /** Stops a generation; resolves once its closing event was sent. `cancelled: false` when it does not run here. */
  cancelGeneration(payload: CancelGenerationPayload): Promise<{ cancelled: boolean }>;
}

/** What a host implements of them (optional: hosts without them answer UNAVAILABLE). */
export interface PlaygroundHost {
  startGeneration?(payload: StartGenerationRequest): Awaitable<{ generationId: string }>;
  cancelGeneration?(payload: CancelGenerationPayload): Awaitable<{ cancelled: boolean }>;
}
type Awaitable<T> = T | Promise<T>;

/**
 * Completion tokens per second: `completionTokens / (ms / 1000)`, rounded to 0.1; undefined for
 * no tokens or no time. `ms` is the generation's wall time (prompt evaluation included).
 */
export function tokensPerSecond(completionTokens: number, ms: number): number | undefined {
  if (!(completionTokens > 0) || !(ms > 0)) return undefined;
  return Math.round((completionTokens / (ms / 1000)) * 10) / 10;
}

/** Whether `value` is a well-formed `PlaygroundEvent` (field by field, without zod). */
export function isPlaygroundEvent(value: unknown): value is PlaygroundEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const e = value as Record<string, unknown>;
  const str = (v: unknown, max: number, min = 1) => typeof v === 'string' && v.length >= min && v.length <= max;
  const count = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;
  const num = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0;
  const opt = (v: unknown, ok: (x: unknown) => boolean) => v === undefined || ok(v);
  if (!str(e['generationId'], 200)) return false;
  if (e['type'] === 'generationText') return str(e['text'], MAX_TEXT_CHARS) && num(e['ms']) && opt(e['completionTokens'], count);
  if (e['type'] !== 'generation') return false;
  return (
    str(e['model'], 4096) && STATUSES.includes(e['status'] as string) &&
    opt(e['renderedPrompt'], (v) => str(v, MAX_RENDERED_CHARS + 100, 0)) && opt(e['renderedCut'], (v) => typeof v === 'boolean') &&
    opt(e['promptForm'], (v) => FORMS.includes(v as string)) && opt(e['promptTokens'], count) &&
    opt(e['text'], (v) => str(v, MAX_TEXT_CHARS, 0)) && opt(e['thinking'], (v) => str(v, MAX_TEXT_CHARS, 0)) &&
    opt(e['completionTokens'], count) && opt(e['ms'], num) && opt(e['firstTokenMs'], num) && opt(e['tokensPerSecond'], num) &&
    opt(e['stopReason'], (v) => STOPS.includes(v as string)) && opt(e['seed'], count) &&
    opt(e['message'], (v) => str(v, 2000, 0))
  );
}
