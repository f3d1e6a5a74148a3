import { randomInt } from 'node:crypto';
import { asRoleName } from '../ids.ts';
import { ModelError } from '../model/errors.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { Card } from '../store/improve.ts';
import { isSimulatedModel, type Exemplar } from './exemplars.ts';
import { CARD_LIMITS, distillPrompt, estimateTokens, type RoleBrief, type TokenCounter } from './prompt.ts';
import { FlowlabError } from '../errors.ts';

/** Why no card came out. Nothing is stored when one is thrown. */
export type DistillErrorCode =
  | 'NO_EXEMPLARS' // no trajectory of the role qualifies (e.g. --only-successes and no correct run)
  | 'BUDGET_TOO_SMALL' // the teacher budget cannot hold the examples
  | 'TEACHER_FAILED' // the teacher's call failed (model missing, context too small, runtime error)
  | 'TEACHER_UNPARSABLE' // the teacher's reply is not JSON
  | 'TEACHER_INVALID'; // the reply is JSON but not a card (fields missing, empty, too long, extra)

export class DistillError extends FlowlabError<DistillErrorCode> {
  override readonly name = 'DistillError';
  constructor(code: DistillErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, {}, options);
  }
}

/** A new card id: `card-<yyyymmdd>-<hhmmss>-<4 base36>` (UTC), like experiment ids. */
export function newCardId(now: Date = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  const date = `${p(now.getUTCFullYear(), 4)}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}`;
  const time = `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `card-${date}-${time}-${randomInt(36 ** 4).toString(36).padStart(4, '0')}`;
}

export interface DistillCardOptions {
  provider: ModelProvider;
  /** The model reference the teacher call names (a key the provider knows, e.g. the role's model ref). */
  teacherRef: string;
  role: RoleBrief | string;
  /** The examples, best first (see pickExemplars). At least one. */
  exemplars: readonly Exemplar[];
  /** Seed of the teacher call. */
  seed: number;
  /** Tokens for the teacher's system + prompt (default 512; estimated as ceil(chars/4) unless `countTokens`). */
  budgetTokens?: number;
  countTokens?: TokenCounter;
  /** Most tokens the teacher may write (default 600: the card's fields are at most 480 characters). */
  maxTokens?: number;
  /** Teacher sampling temperature (default 0, greedy). */
  temperature?: number;
  experimentId?: string;
  /** Recorded with the card: whether only successful runs were eligible. */
  onlySuccesses?: boolean;
  /** Shots asked for (recorded in provenance when fewer exemplars were available). */
  requestedShots?: number;
  /** Extra provenance (e.g. online meta-distillation's checkpoint). */
  meta?: Record<string, unknown>;
  signal?: AbortSignal;
  now?: () => Date;
}

/** The card fields parsed from a teacher reply. */
export interface CardFields {
  title: string;
  appliesWhen: string;
  advice: string;
}

/**
 * Parses and validates a teacher's reply: JSON `{title, applies_when, advice}`, each a string
 * that is non-empty after trimming and within CARD_LIMITS, no other field. Throws DistillError
 * (`TEACHER_UNPARSABLE`, `TEACHER_INVALID`).
 */
export function parseCardReply(text: string, note = ''): CardFields {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DistillError('TEACHER_UNPARSABLE', `the teacher's reply is not JSON${note}: ${clip(text)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DistillError('TEACHER_INVALID', `the teacher's reply is not a JSON object: ${clip(text)}`);
  const o = value as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !(k in CARD_LIMITS));
  if (extra.length) throw new DistillError('TEACHER_INVALID', `the teacher's card has unknown field(s) ${extra.join(', ')}: ${clip(text)}`);
  const field = (k: keyof typeof CARD_LIMITS) => {
    const v = o[k];
    if (typeof v !== 'string') throw new DistillError('TEACHER_INVALID', `the teacher's card has no string "${k}": ${clip(text)}`);
    const s = v.trim();
    if (!s) throw new DistillError('TEACHER_INVALID', `the teacher's card has an empty "${k}": ${clip(text)}`);
    if (s.length > CARD_LIMITS[k]) throw new DistillError('TEACHER_INVALID', `the teacher's card "${k}" is ${s.length} characters, more than ${CARD_LIMITS[k]}`);
    return s;
  };
  return { title: field('title'), appliesWhen: field('applies_when'), advice: field('advice') };
}

/**
 * Asks a teacher model to distil one hint card from a role's exemplars, decoding under the card's
 * JSON-schema grammar, and returns the card (not stored: the caller saves it). The card is
 * `simulated` when any exemplar is simulated or the teacher is a simulated model; `teacher` is
 * the model the provider reports (a GGUF file name) or, failing that, the provider's name;
 * `shots` is the number of exemplars used. Errors: DistillError (nothing to store).
 */
export async function distillCard(opts: DistillCardOptions): Promise<Card> {
  const role: RoleBrief = typeof opts.role === 'string' ? { name: opts.role } : opts.role;
  if (opts.exemplars.length === 0) throw new DistillError('NO_EXEMPLARS', `no exemplars of role "${role.name}" to distil from`);
  const budgetTokens = opts.budgetTokens ?? 512;
  const count = opts.countTokens ?? estimateTokens;
  let tp;
  try {
    tp = distillPrompt(role, opts.exemplars, budgetTokens, count);
  } catch (e) {
    throw new DistillError('BUDGET_TOO_SMALL', (e as Error).message, { cause: e });
  }
  const maxTokens = opts.maxTokens ?? 600;
  let res;
  try {
    res = await opts.provider.generate({
      role: asRoleName(role.name),
      model: opts.teacherRef,
      system: tp.system,
      prompt: tp.prompt,
      params: { temperature: opts.temperature ?? 0, maxTokens },
      seed: opts.seed,
      jsonSchema: tp.schema,
      key: { taskKey: 'distill', nodeId: `distill:${role.name}`, attempt: 1, callIndex: 0 },
      signal: opts.signal,
    });
  } catch (e) {
    const code = e instanceof ModelError ? ` [${e.code}]` : '';
    throw new DistillError('TEACHER_FAILED', `the teacher (${opts.teacherRef}) failed${code}: ${(e as Error).message}`, { cause: e });
  }
  const fields = parseCardReply(res.text, res.stopReason === 'maxTokens' ? ` (cut off at ${maxTokens} tokens)` : '');
  const teacher = res.model || opts.provider.name;
  const simulated = opts.exemplars.some((e) => e.simulated) || isSimulatedModel(teacher) || isSimulatedModel(opts.provider.name);
  const now = opts.now?.() ?? new Date();
  const card: Card = {
    id: newCardId(now),
    role: role.name,
    title: fields.title,
    appliesWhen: fields.appliesWhen,
    advice: fields.advice,
    sourceRuns: opts.exemplars.map((e) => e.runId),
    teacher,
    shots: opts.exemplars.length,
    onlySuccesses: Boolean(opts.onlySuccesses),
    simulated,
    createdAt: now.getTime(),
    meta: {
      provenance: {
        teacherRef: opts.teacherRef,
        teacherProvider: opts.provider.name,
        seed: opts.seed,
        temperature: opts.temperature ?? 0,
        budgetTokens,
        requestedShots: opts.requestedShots ?? opts.exemplars.length,
        exemplars: opts.exemplars.map((e) => ({ runId: e.runId, taskId: e.taskId, reward: e.reward, correct: e.correct, simulated: e.simulated })),
        promptTokens: res.tokens.prompt,
        completionTokens: res.tokens.completion,
      },
      ...opts.meta,
    },
  };
  if (opts.experimentId) card.experimentId = opts.experimentId;
  return card;
}

function clip(s: string, n = 160): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > n ? one.slice(0, n) + '…' : one);
}
