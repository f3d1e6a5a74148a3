import type { JsonSchema } from '../model/provider.ts';
import type { Exemplar } from './exemplars.ts';

/** Counts the tokens of a text. */
export type TokenCounter = (text: string) => number;

/**
 * The token estimate used when no tokenizer is given: ceil(characters / 4), characters being
 * UTF-16 code units (JavaScript string length). Roughly right for English with BPE vocabularies
 * of 32k+ tokens; models with tiny vocabularies (stories260K: 512 tokens) use more real tokens
 * per character, so leave headroom in their context (or pass a real counter).
 */
export const estimateTokens: TokenCounter = (text) => Math.ceil(text.length / 4);

/** Bounds of a card's fields (characters), enforced by the decoding grammar and on parse. */
export const CARD_LIMITS = { title: 60, applies_when: 120, advice: 300 } as const;

/**
 * The JSON schema of a card as the teacher writes it, used for grammar-constrained decoding:
 * `{title, applies_when, advice}`, each a non-empty string of bounded length, nothing else.
 */
export const CARD_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    title: { type: 'string', minLength: 1, maxLength: CARD_LIMITS.title },
    applies_when: { type: 'string', minLength: 1, maxLength: CARD_LIMITS.applies_when },
    advice: { type: 'string', minLength: 1, maxLength: CARD_LIMITS.advice },
  },
  required: ['title', 'applies_when', 'advice'],
  additionalProperties: false,
};

/** What the teacher is told about the role. */
export interface RoleBrief {
  name: string;
  /** The role's system instructions from the workflow, if any. */
  instructions?: string;
}

export interface TeacherPrompt {
  system: string;
  prompt: string;
  schema: JsonSchema;
  /** Tokens of system + prompt by the counter used (≤ the budget). */
  tokens: number;
}

const SYSTEM =
  'You are a teacher. You read worked examples of one role in a multi-agent workflow and write one short, reusable hint card for that role: ' +
  'a title, when the hint applies, and concrete advice that would help on new tasks. Reply only with JSON.';

/**
 * The teacher's prompt for distilling one card from a role's exemplars, within `budgetTokens`
 * (system + prompt, by `count`, default {@link estimateTokens}). The fixed text comes first; the
 * rest of the budget is shared equally by the exemplars (best first), and within an exemplar by
 * its turns; a long prompt keeps its start and end (the question and the ask), a long reply its
 * start. Throws `RangeError` when the budget cannot hold the fixed text and ~10 tokens per
 * exemplar. Pure.
 */
export function distillPrompt(role: RoleBrief, exemplars: readonly Exemplar[], budgetTokens: number, count: TokenCounter = estimateTokens): TeacherPrompt {
  const head =
    `Role: ${role.name}\n` +
    (role.instructions ? `Its instructions: ${role.instructions}\n` : '') +
    `Below are ${exemplars.length} example(s) of this role's work, best first (ranked by the role's reward h).\n\n`;
  const tail = `Write one hint card for the role "${role.name}" as JSON with the fields title, applies_when and advice.\n`;
  const fixed = count(SYSTEM) + count(head) + count(tail);
  const perExemplar = Math.floor((budgetTokens - fixed) / Math.max(1, exemplars.length));
  if (perExemplar < 10) {
    throw new RangeError(`a teacher budget of ${budgetTokens} tokens cannot hold ${exemplars.length} example(s) (the fixed text alone takes ${fixed}); raise the budget`);
  }
  const blocks = exemplars.map((ex, i) => fitExemplar(ex, i + 1, perExemplar, count));
  const prompt = head + blocks.join('') + tail;
  return { system: SYSTEM, prompt, schema: CARD_SCHEMA, tokens: count(SYSTEM) + count(prompt) };
}

function exemplarHeader(ex: Exemplar, n: number): string {
  return `Example ${n} (reward h=${ex.reward.toFixed(2)}, answer ${ex.correct ? 'correct' : 'not correct'}):\n`;
}

/** One exemplar's text within `budget` tokens: shrinks its turns until it fits. */
function fitExemplar(ex: Exemplar, n: number, budget: number, count: TokenCounter): string {
  const render = (limit: number) =>
    exemplarHeader(ex, n) +
    ex.turns.map((t) => `Prompt: ${clipMiddle(t.prompt.trim(), limit)}\nReply: ${clipEnd(t.completion.trim(), Math.max(8, Math.floor(limit / 2)))}\n`).join('') +
    '\n';
  // Binary search on the per-text character limit: the longest rendering within the budget.
  const longest = Math.max(0, ...ex.turns.map((t) => Math.max(t.prompt.length, t.completion.length * 2)));
  if (count(render(longest)) <= budget) return render(longest);
  let lo = 0;
  let hi = longest;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (count(render(mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  const text = render(lo);
  // Even empty turns can overflow (many turns): keep as many whole lines as fit.
  if (count(text) <= budget) return text;
  let out = '';
  for (const line of text.split('\n')) {
    if (count(out + line + '\n') > budget) break;
    out += line + '\n';
  }
  return out;
}

function clipMiddle(s: string, n: number): string {
  if (s.length <= n) return s;
  if (n < 8) return '…';
  const half = Math.floor((n - 1) / 2);
  return s.slice(0, half) + '…' + s.slice(s.length - (n - 1 - half));
}

function clipEnd(s: string, n: number): string {
  return s.length <= n ? s : s.slice(0, Math.max(0, n - 1)) + '…';
}
