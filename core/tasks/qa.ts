/**
 * Short-answer question answering metrics: normalised exact match and token F1, the SQuAD
 * evaluation (Rajpurkar et al. 2016, "SQuAD: 100,000+ Questions for Machine Comprehension of
 * Text", section 6; the official `evaluate-v2.0.py`'s `normalize_answer`, `compute_exact`,
 * `compute_f1`), which the multi-hop QA benchmarks (HotpotQA, MuSiQue, 2WikiMultihopQA,
 * Bamboogle) report too.
 *
 * Normalisation, in the official order: lower-case; drop punctuation (every ASCII punctuation
 * mark, as Python's `string.punctuation`); drop the articles `a`, `an`, `the` as whole words;
 * collapse whitespace. One change, the known bug: when stripping the articles leaves nothing (a
 * gold answer "A", "The", "an"), the articles are kept — otherwise the gold "A" normalises to ""
 * and the official script scores every empty prediction, and F1 every all-article prediction,
 * as a match. So "A" normalises to "a", and the prediction "" no longer matches it. The same
 * guard holds for punctuation: a gold answer that is only punctuation (HotpotQA has the band
 * "!!!") keeps it, so it does not normalise to "" either. A non-empty answer never normalises to
 * the empty string; an answer of whitespace only does.
 */
import type { Grade, SyncGrader, Task } from './types.ts';

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;
/** The articles as whole words; word characters as Python 3's `\w` (letters, digits, `_`, Unicode-aware). */
const ARTICLES = /(?<![\p{L}\p{N}_])(a|an|the)(?![\p{L}\p{N}_])/gu;

/**
 * The SQuAD normal form of an answer text (see this module's header): lower-cased, punctuation
 * removed unless it is all there is, articles removed unless they are all there is, whitespace
 * collapsed to single spaces and trimmed. `normalizeAnswer("The  Titan IIIE.")` is `"titan iiie"`; `normalizeAnswer("A")`
 * is `"a"` (not `""`).
 */
export function normalizeAnswer(text: string): string {
  const squash = (s: string) => s.split(/\s+/).filter(Boolean).join(' ');
  const lower = text.toLowerCase();
  const stripped = lower.replace(PUNCTUATION, '');
  const plain = squash(stripped) !== '' ? stripped : lower;
  const without = squash(plain.replace(ARTICLES, ' '));
  return without !== '' ? without : squash(plain);
}

/** The tokens of the normal form (split on spaces); [] for an empty normal form. */
export function answerTokens(text: string): string[] {
  const n = normalizeAnswer(text);
  return n === '' ? [] : n.split(' ');
}

/** 1 when the normal forms of `prediction` and `gold` are equal, else 0. */
export function exactMatch(prediction: string, gold: string): number {
  return normalizeAnswer(prediction) === normalizeAnswer(gold) ? 1 : 0;
}

/**
 * Token F1 of the normal forms: with `common` the size of the multiset intersection of the two
 * token lists, precision = common / |prediction tokens|, recall = common / |gold tokens|,
 * F1 = 2·P·R / (P + R); 0 when nothing is shared. When either side has no tokens, F1 is 1 if
 * both have none, else 0 (as the official v2.0 script). E.g. prediction "James Madison" against
 * gold "President James Madison": P = 2/2, R = 2/3, F1 = 0.8.
 */
export function tokenF1(prediction: string, gold: string): number {
  const p = answerTokens(prediction);
  const g = answerTokens(gold);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/**
 * The text of a QA answer: a string as it is, a number or boolean as text, an object's `answer`
 * (read through) or `text` field; null when there is none.
 */
export function answerText(answer: unknown): string | null {
  if (typeof answer === 'string') return answer;
  if (typeof answer === 'number' || typeof answer === 'boolean') return String(answer);
  if (answer && typeof answer === 'object' && !Array.isArray(answer)) {
    const o = answer as Record<string, unknown>;
    if (o.answer !== undefined && o.answer !== null) return answerText(o.answer);
    if (typeof o.text === 'string') return o.text;
  }
  return null;
}

/**
 * The short-answer QA grader: `correct` is normalised exact match (so an experiment's accuracy
 * is EM), `score` is token F1 (partial credit, what the reward ladder reads); `extracted` is the
 * answer's normal form. The reason states both, e.g. `EM 0, F1 0.8 ("james madison" vs
 * "president james madison")`. Pure; never throws (no answer scores 0).
 */
export const qaGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    const expected = task.expected;
    const text = answerText(answer);
    if (text === null) return { score: 0, correct: false, extracted: null, expected, reason: answer === undefined || answer === null ? 'there is no answer' : 'the answer has no text' };
    const em = exactMatch(text, expected);
    const f1 = tokenF1(text, expected);
    const extracted = normalizeAnswer(text);
    const shown = Math.round(f1 * 1000) / 1000;
    return { score: f1, correct: em === 1, extracted, expected, reason: `EM ${em}, F1 ${shown} (${JSON.stringify(extracted)} vs ${JSON.stringify(normalizeAnswer(expected))})` };
  },
};
