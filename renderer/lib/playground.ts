/**
 * What the playground shows of one generation, folded from its `PlaygroundEvent`s
 * (core/api/playground.ts), and the form's parse into a `startGeneration` payload (pure).
 */
import { PLAYGROUND_DEFAULTS, tokensPerSecond, type GenerationStatus, type PlaygroundEvent, type PromptForm, type StartGenerationRequest } from '../../core/api/client.ts';

/** One generation as the playground shows it. */
export interface GenerationView {
  model: string;
  status: GenerationStatus;
  renderedPrompt?: string;
  renderedCut?: boolean;
  promptForm?: PromptForm;
  promptTokens?: number;
  /** The reply so far (the pieces joined); once completed, the answer the call returned. */
  text: string;
  thinking?: string;
  /** Pieces received. */
  pieces: number;
  /** Completion tokens so far (counted live by local models; an endpoint's arrive with the end). */
  completionTokens?: number;
  /** Ms since the generation started, at the last piece (the whole generation's once ended). */
  ms?: number;
  firstTokenMs?: number;
  /** Tokens per second: live (tokens so far over ms so far), then the final figure. */
  tokensPerSecond?: number;
  stopReason?: string;
  message?: string;
}

/** `view` with `event` applied: pieces add to the text and move the counts; an ended generation takes no more pieces. */
export function foldGeneration(view: GenerationView | undefined, event: PlaygroundEvent): GenerationView {
  const base: GenerationView = view ?? { model: event.type === 'generation' ? event.model : '', status: 'running', text: '', pieces: 0 };
  if (event.type === 'generationText') {
    if (base.status !== 'running') return base;
    const completionTokens = event.completionTokens ?? base.completionTokens;
    const speed = completionTokens !== undefined ? tokensPerSecond(completionTokens, event.ms) : undefined;
    return {
      ...base, text: base.text + event.text, pieces: base.pieces + 1, ms: event.ms,
      ...(completionTokens !== undefined && { completionTokens }), ...(speed !== undefined && { tokensPerSecond: speed }),
      ...(base.firstTokenMs === undefined && { firstTokenMs: event.ms }),
    };
  }
  const { type: _t, generationId: _g, text, ...rest } = event;
  const next: GenerationView = { ...base, ...rest };
  if (event.status === 'completed' && text !== undefined) next.text = text;
  return next;
}

/** The form's fields as typed (strings, as inputs hold them). */
export interface PlaygroundForm {
  model: string;
  system: string;
  prompt: string;
  temperature: string;
  topK: string;
  topP: string;
  minP: string;
  seed: string;
  maxTokens: string;
  jsonSchema: string;
}

/** The form as it starts: `model` and the playground's defaults (PLAYGROUND_DEFAULTS). */
export function initialForm(model: string): PlaygroundForm {
  const d = PLAYGROUND_DEFAULTS;
  return { model, system: '', prompt: '', temperature: String(d.temperature), topK: String(d.topK), topP: String(d.topP), minP: String(d.minP), seed: String(d.seed), maxTokens: String(d.maxTokens), jsonSchema: '' };
}

/**
 * The payload of `form`, or the first problem in words naming the field. Numbers must be numbers
 * (the ranges are the API's to check, which names the field too); the JSON schema, when given,
 * must parse to a JSON object.
 */
export function formPayload(form: PlaygroundForm): { payload: StartGenerationRequest } | { problem: string } {
  if (!form.model.trim()) return { problem: 'Choose a model (or give an endpoint openai:<base-url>#<model>).' };
  if (!form.prompt.trim()) return { problem: 'Write a prompt.' };
  const nums: Record<string, number> = {};
  for (const [key, label] of [['temperature', 'Temperature'], ['topK', 'Top-k'], ['topP', 'Top-p'], ['minP', 'Min-p'], ['seed', 'Seed'], ['maxTokens', 'Max tokens']] as const) {
    const n = Number(form[key].trim());
    if (form[key].trim() === '' || !Number.isFinite(n)) return { problem: `${label} must be a number (it is "${form[key]}").` };
    nums[key] = n;
  }
  let jsonSchema: Record<string, unknown> | undefined;
  if (form.jsonSchema.trim()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(form.jsonSchema);
    } catch (err) {
      return { problem: `JSON schema is not JSON: ${(err as Error).message}` };
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { problem: 'JSON schema must be a JSON object, e.g. {"type": "object"}.' };
    jsonSchema = parsed as Record<string, unknown>;
  }
  return {
    payload: {
      model: form.model.trim(), prompt: form.prompt, ...(form.system.trim() && { system: form.system }),
      temperature: nums['temperature']!, topK: nums['topK']!, topP: nums['topP']!, minP: nums['minP']!, seed: nums['seed']!, maxTokens: nums['maxTokens']!,
      ...(jsonSchema && { jsonSchema }),
    },
  };
}
