/**
 * Which tokens of a grammar-bound completion were the model's choices (docs/laptop-rl.md,
 * "Grammar-forced tokens"). Under a JSON-schema grammar most of a completion is forced — braces,
 * keys, quotes, a `const` — and only some values are chosen (an enum member, an id, free text).
 * The sampler draws from the grammar-masked distribution, where a forced token has probability 1
 * and so contributes nothing to the policy gradient of that distribution; the trainer scores
 * tokens under the unmasked model, where forced tokens would swamp the few chosen ones (a design
 * of ~80 tokens with one or two that pick a skill). So the loss is taken on the chosen tokens only.
 *
 * Chosen: a scalar value whose schema leaves more than one possibility (an enum of two or more,
 * a string/number/boolean without enum or const, or no schema); in an object matched against
 * `oneOf`, each key not every branch still possible has (it picks among them: `"tool"` or
 * `"skill"`) and each value on which the branches still possible disagree (the `const` name of a
 * skill among several skill branches: the design's real choice); in an array whose length the
 * schema leaves open (`maxItems`, after `minItems`), the `,` or `]` after each item (one more
 * step, or stop).
 * Forced: every other key, punctuation, whitespace, `const` values, one-member enums, and tokens
 * after the JSON value (the end-of-generation token).
 *
 * Within a chosen value from a known set of strings (an enum's members, the branches' `const`s,
 * the keys the branches still allow) only the characters where the set still branches are
 * chosen: after the characters written so far, the grammar allows more than one next character
 * (or the end of the value: then the closing quote is chosen). The rest of the value is forced
 * like a `const` — `"count_op"` among `sunny_day`, `story_kind`, `count_op` is decided by its
 * `c`; `sunny_day` by `s` and `u`. Training the forced rest under the unmasked model would add
 * the gradients of tokens the sampler never chose, ~20 of them per design against the 1–2 that
 * decide its class (docs/laptop-rl.md, "The designer team"). Pure.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import type { JsonSchema } from '../model/provider.ts';

type Schema = { enum?: unknown[]; const?: unknown; type?: unknown; oneOf?: Schema[]; anyOf?: Schema[]; properties?: Record<string, Schema>; items?: Schema; prefixItems?: Schema[]; minItems?: number; maxItems?: number; /** internal: the values the branches still allow (their `const`s) */ choices?: unknown[] };

/**
 * A chosen span [start, end) of a completion; for a value from a known set of strings, where the
 * value's text starts (`at`, inside its quotes) and the strings (`choices`) the grammar allowed.
 */
export interface ChoicePoint {
  start: number;
  end: number;
  at?: number;
  choices?: readonly string[];
}

/** Character spans [start, end) of the chosen parts of `text` under `schema`; undefined when `text` is not one JSON value. */
export function chosenSpans(text: string, schema: JsonSchema | undefined): Array<[number, number]> | undefined {
  return choicePoints(text, schema)?.map((p) => [p.start, p.end]);
}

/** The chosen parts of `text` under `schema` (see `chosenSpans`), each with the strings it chose among, when known. */
export function choicePoints(text: string, schema: JsonSchema | undefined): ChoicePoint[] | undefined {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length || !doc.contents) return undefined;
  const points: ChoicePoint[] = [];
  walk(doc.contents as YamlNode, schema as Schema | undefined, points, text);
  return points;
}

function branches(s: Schema | undefined): Schema[] | undefined {
  return s?.oneOf ?? s?.anyOf;
}

function walk(node: YamlNode, schema: Schema | undefined, spans: ChoicePoint[], text: string): void {
  const range = node.range;
  if (isScalar(node)) {
    if (!range || !chosen(schema)) return;
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
    const choices = schema?.enum ?? schema?.choices;
    if (quoted && Array.isArray(choices) && choices.every((c) => typeof c === 'string')) {
      spans.push(...branchPoints(node.value, choices as string[], range[0] + 1, text));
      return;
    }
    spans.push(quoted ? { start: range[0] + 1, end: range[1] - 1 } : { start: range[0], end: range[1] });
    return;
  }
  if (isSeq(node)) {
    node.items.forEach((item, i) => {
      walk(item as YamlNode, branches(schema) ? undefined : (schema?.prefixItems?.[i] ?? schema?.items), spans, text);
      // Where the list's length is free, the separator after an item (`,`: one more; `]`: stop) is chosen.
      const end = (item as YamlNode).range?.[1];
      if (end === undefined || !schema?.maxItems || i + 1 < (schema.minItems ?? 0) || i + 1 >= schema.maxItems) return;
      const at = text.slice(end).search(/\S/);
      if (at >= 0 && (text[end + at] === ',' || text[end + at] === ']')) spans.push({ start: end + at, end: end + at + 1 });
    });
    return;
  }
  if (!isMap(node)) return;
  const alts = branches(schema);
  if (!alts) {
    for (const p of node.items) {
      const k = isScalar(p.key) ? String(p.key.value) : '';
      if (p.value) walk(p.value as YamlNode, schema?.properties?.[k], spans, text);
    }
    return;
  }
  // Under `oneOf`, read the pairs in order and keep the branches still possible: a key not every
  // one of them has is chosen (it narrows them), and so is a value on which they disagree (the
  // `const` skill name among several skill branches); once one branch is left, read on in it.
  // The keys' spans come before the values'.
  let live = alts.filter((b) => b.properties);
  const values: ChoicePoint[] = [];
  for (const p of node.items) {
    const k = isScalar(p.key) ? String(p.key.value) : '';
    const r = (p.key as YamlNode | null)?.range;
    if (live.length > 1 && r && !live.every((b) => Object.hasOwn(b.properties!, k))) {
      const keys = [...new Set(live.flatMap((b) => Object.keys(b.properties!)))];
      spans.push(...branchPoints(k, keys, r[0] + 1, text));
    }
    live = live.filter((b) => Object.hasOwn(b.properties!, k));
    const v = p.value as YamlNode | null;
    if (!v) continue;
    if (live.length > 1 && isScalar(v)) {
      const consts = live.map((b) => b.properties![k]!.const);
      if (consts.every((c) => c !== undefined)) {
        if (new Set(consts).size > 1) walk(v, { choices: consts }, values, text);
        live = live.filter((b) => b.properties![k]!.const === v.value);
        continue;
      }
    }
    walk(v, live.length === 1 ? live[0]!.properties![k] : undefined, values, text);
  }
  spans.push(...values);
}

/**
 * The spans of `value` (written from `at` in `text`, inside its quotes) where `choices` still
 * branch: character i is chosen when the choices that begin with value[0..i) do not all agree on
 * what comes next (another character, or the end: then the closing quote at `at + value.length`
 * is chosen). A value with escapes, or not among `choices`, is chosen whole.
 */
export function branchingSpans(value: unknown, choices: readonly string[], at: number, text: string): Array<[number, number]> {
  return branchPoints(value, choices, at, text).map((p) => [p.start, p.end]);
}

function branchPoints(value: unknown, choices: readonly string[], at: number, text: string): ChoicePoint[] {
  const v = String(value);
  if (text.slice(at, at + v.length) !== v || !choices.includes(v)) return [{ start: at, end: at + v.length }];
  const out: ChoicePoint[] = [];
  for (let i = 0; i <= v.length; i++) {
    const next = new Set(choices.filter((c) => c.startsWith(v.slice(0, i))).map((c) => (i < c.length ? c[i] : '')));
    if (next.size < 2) continue;
    const last = out[out.length - 1];
    if (last && last.end === at + i) last.end += 1;
    else out.push({ start: at + i, end: at + i + 1, at, choices });
  }
  return out;
}

/** Whether a scalar under `schema` was chosen (more than one value possible). */
function chosen(schema: Schema | undefined): boolean {
  if (!schema) return true;
  if (schema.const !== undefined) return false;
  if (Array.isArray(schema.enum)) return schema.enum.length > 1;
  const alts = branches(schema);
  if (alts) return alts.some((b) => chosen(b)) || alts.length > 1;
  return true;
}

/**
 * The per-token loss mask of a completion: 1 for a token whose characters overlap a chosen span.
 * `offsets[i]` is where token i starts in `text` (ModelProvider.tokenOffsets); the last token
 * ends at `text.length`. Undefined (train on every token) when the text is not one JSON value
 * or no token is chosen.
 */
export function choiceMask(text: string, schema: JsonSchema | undefined, offsets: readonly number[]): number[] | undefined {
  const spans = chosenSpans(text, schema);
  if (!spans?.length) return undefined;
  const mask = offsets.map((start, i) => {
    const end = i + 1 < offsets.length ? offsets[i + 1]! : text.length;
    return end > start && spans.some(([a, b]) => start < b && end > a) ? 1 : 0;
  });
  return mask.some((m) => m === 1) ? mask : undefined;
}

/**
 * What the grammar allowed at each completion token: for a token that writes a chosen part of a
 * value from a known set of strings (`choicePoints`), the ids of every token whose text
 * (`pieces[id]`, ModelProvider/TrainableModel vocabulary) continues the value's text before the
 * token toward one of the strings (its closing quote included), the token itself among them;
 * null for every other token (the whole vocabulary: forced tokens are out of the loss anyway,
 * and free text or a list separator is not restricted here). Undefined when `text` is not one
 * JSON value or no token is restricted. `ids[i]` is the token at `offsets[i]`. This is the
 * allowed set of the JSON-schema grammar at those positions when the value is written in one
 * go between its quotes (as node-llama-cpp's grammar writes a string); a token that would run
 * past the closing quote is left out of it. Pure.
 */
export function choiceAllowed(text: string, schema: JsonSchema | undefined, offsets: readonly number[], ids: readonly number[], pieces: readonly string[]): Array<number[] | null> | undefined {
  const points = choicePoints(text, schema)?.filter((p) => p.choices && p.at !== undefined);
  if (!points?.length || !pieces.length || ids.length !== offsets.length) return undefined;
  let any = false;
  const out = offsets.map((start, i): number[] | null => {
    const end = i + 1 < offsets.length ? offsets[i + 1]! : text.length;
    const p = points.find((q) => start < q.end && end > q.start);
    if (!p || start < p.at!) return null;
    const before = text.slice(p.at!, start);
    const own = ids[i]!;
    if (!p.choices!.some((c) => `${c}"`.startsWith(before + text.slice(start, end)))) return null;
    const allowed: number[] = [];
    pieces.forEach((piece, id) => {
      if (id === own || (piece.length > 0 && p.choices!.some((c) => `${c}"`.startsWith(before + piece)))) allowed.push(id);
    });
    any = true;
    return allowed;
  });
  return any ? out : undefined;
}
