/**
 * Reading numbers out of text: gold answers and model answers.
 *
 * Decisions (documented here once, relied on by graders and the `extract_number` tool):
 * - Thousands separators: `1,000` and `1,234,567.5` are one number. A comma counts only between
 *   a 1–3 digit head and groups of exactly 3 digits (`1,2,3` is three numbers: a list). In a
 *   final answer, LaTeX's spellings of the separator, `9{,}500` (a comma in braces, so TeX sets
 *   no space after it) and `9\,500` (a thin space), read as `9,500` (`latexSeparators`).
 * - Thousands separated by spaces, as SI/ISO 80000-1 and many locales write them: `1 000`,
 *   `12 345 678.5` with a plain space, a no-break space (U+00A0) or a narrow no-break space
 *   (U+202F) are one number, under the comma's rule (a 1–3 digit head, groups of exactly 3
 *   digits) and one more: every separator of the number is the same character, and the last group
 *   is followed by neither a digit, `/` (a mixed number `2 1/2`) nor a space of any of the three
 *   kinds and another digit (`10 100 1000` is a list of three numbers, not 10100 and 1000).
 *   `5 10` is two numbers.
 * - Currency: a leading `$`, `€` or `£` is ignored (`$1000`, `-$5`).
 * - Signs: a `-`, `+` or `−` (U+2212) directly before the number is its sign, unless it follows a
 *   letter, digit or closing bracket (`5-3` is 5 and 3, not 5 and -3).
 * - Decimals: `1000.0` -> 1000, `.5` -> 0.5; a trailing period (`18.`) ends the sentence.
 * - Exponents: `1e6`, `2.5E-3` are read as numbers.
 * - Percent: `50%` -> 50. The percent sign is ignored, because GSM8K gold answers to "what
 *   percent" questions are the bare number (`#### 25`).
 * - Fractions: `3/4` (integers, no spaces, non-zero denominator, not part of a date such as
 *   `1/2/2020`) -> 0.75; a mixed number `2 1/2` (one space, proper fraction) -> 2.5.
 *   LaTeX `\frac{3}{4}` inside `\boxed{}` is read the same way.
 * - Words (`eighteen`) are not numbers.
 */

/** One number found in a text: its value and where it was (UTF-16 offsets, end exclusive). */
export interface NumberToken {
  value: number;
  /** The text the number was read from, e.g. `"$1,000"`. */
  text: string;
  start: number;
  end: number;
}

// sign? currency? (grouped int | int | nothing before ".d") (.digits)? (exponent)?
const NUMBER_AT =
  /([-+\u2212])?([$€£])?(\d{1,3}(?:,\d{3})+(?!\d)|\d{1,3}(?:( |\u00a0|\u202f)\d{3})(?:\4\d{3})*(?![\d/]|[ \u00a0\u202f]\d)|\d+|(?=\.\d))(\.\d*)?([eE][-+]?\d+)?/y;
/** Thousands separators inside a matched integer part (see the module comment). */
const GROUP_SEPARATORS = /[, \u00a0\u202f]/g;
const FRACTION_TAIL = /\/(\d+)(?![\d/]|\.\d)/y;
const SIGN_BLOCKER = /[\p{L}\p{N})\]}]/u;

/**
 * Every number in `text`, left to right, under the rules in this module's header.
 * Pure; never throws.
 */
export function scanNumbers(text: string): NumberToken[] {
  const out: NumberToken[] = [];
  let i = 0;
  while (i < text.length) {
    const tok = numberAt(text, i);
    if (!tok) {
      i++;
      continue;
    }
    if (!Number.isFinite(tok.value)) {
      i = tok.end; // e.g. a 400-digit run: skip it whole rather than read its tail
      continue;
    }
    const prev = out[out.length - 1];
    // Mixed number "2 1/2": an unsigned integer, one space, then an unsigned proper fraction.
    if (
      prev && tok.fraction && tok.value < 1 && !/^[-+\u2212]/.test(tok.text) &&
      prev.end === tok.start - 1 && text[prev.end] === ' ' && /^[-+\u2212]?\d+$/.test(prev.text)
    ) {
      const whole = prev.value;
      const value = whole < 0 || Object.is(whole, -0) ? whole - tok.value : whole + tok.value;
      out[out.length - 1] = { value, text: text.slice(prev.start, tok.end), start: prev.start, end: tok.end };
    } else {
      out.push({ value: tok.value, text: tok.text, start: tok.start, end: tok.end });
    }
    i = tok.end;
  }
  return out;
}

function numberAt(text: string, i: number): (NumberToken & { fraction: boolean }) | null {
  const c = text[i]!;
  if (!/[-+\u2212$€£\d.]/.test(c)) return null;
  if (c === '.' && i > 0 && /\d/.test(text[i - 1]!)) return null; // "1.2.3": not ".3"
  NUMBER_AT.lastIndex = i;
  const m = NUMBER_AT.exec(text);
  if (!m) return null;
  const [whole, sign, , int = '', , dec = '', exp = ''] = m;
  if (int === '' && !/^\.\d/.test(dec)) return null; // a bare sign, '$' or '.'
  if (sign && i > 0 && SIGN_BLOCKER.test(text[i - 1]!)) return null; // "5-3": the '-' is an operator
  let end = i + whole.length;
  let digits = int.replace(GROUP_SEPARATORS, '') + dec + exp;
  // "18." ends a sentence: keep the period out of the token.
  if (dec === '.') {
    end -= exp.length + 1;
    digits = int.replace(GROUP_SEPARATORS, '');
  }
  let value = Number(digits);
  let fraction = false;
  if (dec === '' && exp === '' && /^\d+$/.test(int) && text[i - 1] !== '/') {
    FRACTION_TAIL.lastIndex = end;
    const f = FRACTION_TAIL.exec(text);
    if (f && Number(f[1]) !== 0) {
      value = value / Number(f[1]);
      end = FRACTION_TAIL.lastIndex;
      fraction = true;
    }
  }
  if (sign === '-' || sign === '\u2212') value = -value;
  return { value, text: text.slice(i, end), start: i, end, fraction };
}

/**
 * The first number in `text` (surrounding words are allowed: `"about $1,000 total."` -> 1000).
 * A finite `number` is returned as is. Returns null when there is no number.
 * Examples: `"1,000"` -> 1000, `"$1000"` -> 1000, `"1000.0"` -> 1000, `"-5"` -> -5, `"+3"` -> 3,
 * `"1,234.50"` -> 1234.5, `"50%"` -> 50, `"3/4"` -> 0.75, `"18."` -> 18, `"none"` -> null.
 */
export function parseNumber(text: string | number): number | null {
  if (typeof text === 'number') return Number.isFinite(text) ? text : null;
  if (typeof text !== 'string') return null;
  const first = scanNumbers(text)[0];
  return first ? first.value : null;
}

/** Where a final number was read from (see `locateFinalNumber`). */
export type FinalNumberSource = 'number' | 'hashes' | 'answer-field' | 'boxed' | 'last-number';

/** A final number with the text it was read from and the rule that found it. */
export interface FinalNumber {
  value: number;
  text: string;
  source: FinalNumberSource;
}

/**
 * Finds the final numeric answer in a model's output, saying how (for grade reasons).
 * Order of rules:
 * 1. a finite `number` is the answer itself;
 * 2. an object with an `answer` field (or a string holding such JSON, optionally in a ``` fence):
 *    the rules applied to that field;
 * 3. a string containing `####`: the first number after the LAST `####` (null if there is none:
 *    the model declared a non-numeric final answer);
 * 4. a string containing `\boxed{...}`: the first number inside the last box;
 * 5. otherwise the LAST number in the text (the common GSM8K convention).
 * Other objects and arrays are JSON-stringified and read as text. Null, undefined, booleans -> null.
 */
export function locateFinalNumber(answer: unknown): FinalNumber | null {
  return locate(answer, 0);
}

function locate(answer: unknown, depth: number): FinalNumber | null {
  if (depth > 8) return null;
  if (typeof answer === 'number') {
    return Number.isFinite(answer) ? { value: answer, text: String(answer), source: 'number' } : null;
  }
  if (typeof answer === 'string') return locateInText(answer, depth);
  if (typeof answer === 'object' && answer !== null) {
    if (!Array.isArray(answer) && 'answer' in answer) {
      return viaAnswerField(locate((answer as { answer: unknown }).answer, depth + 1));
    }
    let json: string | undefined;
    try {
      json = JSON.stringify(answer);
    } catch {
      return null; // cyclic or BigInt: nothing sensible to read
    }
    return json === undefined ? null : locateInText(json, depth + 1);
  }
  return null;
}

/**
 * `text` with LaTeX thousands separators between digit groups written as plain commas:
 * `9{,}500` and `9\,500` -> `9,500` (only before a group of exactly three digits).
 */
export function latexSeparators(text: string): string {
  return text.replace(/(\d)(?:\{,\}|\\,)(?=\d{3}(?!\d))/g, '$1,');
}

function locateInText(raw: string, depth: number): FinalNumber | null {
  const text = latexSeparators(raw);
  const json = parseAnswerJson(text);
  if (json !== undefined) {
    return viaAnswerField(locate(json, depth + 1));
  }
  const hashes = text.lastIndexOf('####');
  if (hashes >= 0) {
    const first = scanNumbers(text.slice(hashes + 4))[0];
    return first ? { value: first.value, text: first.text, source: 'hashes' } : null;
  }
  const boxed = lastBoxed(text);
  if (boxed !== null) {
    const first = scanNumbers(boxed.replace(/\\d?frac\{([^{}]*)\}\{([^{}]*)\}/g, '$1/$2'))[0];
    if (first) return { value: first.value, text: first.text, source: 'boxed' };
  }
  const all = scanNumbers(text);
  const last = all[all.length - 1];
  return last ? { value: last.value, text: last.text, source: 'last-number' } : null;
}

/** A number read inside an `answer` field: keep the specific rules (`####`, boxed), else say "answer field". */
function viaAnswerField(inner: FinalNumber | null): FinalNumber | null {
  if (inner === null) return null;
  return inner.source === 'hashes' || inner.source === 'boxed' ? inner : { ...inner, source: 'answer-field' };
}

/** The `answer` field of a JSON object text (fenced or not), or undefined. */
function parseAnswerJson(text: string): unknown {
  let t = text.trim();
  const fence = /^```[\w-]*\s*([\s\S]*?)\s*```$/.exec(t);
  if (fence) t = fence[1]!;
  if (!t.startsWith('{') || !t.endsWith('}')) return undefined;
  try {
    const v: unknown = JSON.parse(t);
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && 'answer' in v) {
      return (v as { answer: unknown }).answer;
    }
  } catch {
    /* not JSON: read as text */
  }
  return undefined;
}

/** The content of the last `\boxed{...}` (balanced braces), or null. */
function lastBoxed(text: string): string | null {
  const at = text.lastIndexOf('\\boxed{');
  if (at < 0) return null;
  let depth = 0;
  const from = at + '\\boxed{'.length;
  for (let i = from; i < text.length; i++) {
    if (text[i] === '{') depth++;
    else if (text[i] === '}') {
      if (depth === 0) return text.slice(from, i);
      depth--;
    }
  }
  return text.slice(from);
}

/**
 * The final numeric answer of a model output (a number, a string, or an object with an
 * `answer` field), or null. Rules: see `locateFinalNumber`.
 * Examples: `"The answer is 42."` -> 42, `"... #### 1,234"` -> 1234, `{answer: "18"}` -> 18.
 */
export function extractFinalNumber(answer: unknown): number | null {
  return locateFinalNumber(answer)?.value ?? null;
}

/**
 * Whether two numbers are equal within `tolerance` (default 1e-6), absolute for small values and
 * relative for large ones: `|a - b| <= tolerance * max(1, |a|, |b|)`. NaN and infinities are never equal.
 */
export function numbersEqual(a: number, b: number, tolerance = 1e-6): boolean {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Canonical text of a number for display and comparison: rounded to 15 significant digits to
 * drop binary floating-point noise (`0.1 + 0.2` -> `"0.3"`), `-0` -> `"0"`.
 */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const v = Number(value.toPrecision(15));
  return String(Object.is(v, -0) ? 0 : v);
}
