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

/** Character spans [start, end) of the chosen parts of `text` under `schema`; undefined when `text` is not one JSON value. */
export function chosenSpans(text: string, schema: JsonSchema | undefined): Array<[number, number]> | undefined {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length || !doc.contents) return undefined;
  const spans: Array<[number, number]> = [];
  walk(doc.contents as YamlNode, schema as Schema | undefined, spans, text);
  return spans;
}

function branches(s: Schema | undefined): Schema[] | undefined {
  return s?.oneOf ?? s?.anyOf;
}

function walk(node: YamlNode, schema: Schema | undefined, spans: Array<[number, number]>, text: string): void {
  const range = node.range;
  if (isScalar(node)) {
    if (!range || !chosen(schema)) return;
    const quoted = node.type === 'QUOTE_DOUBLE' || node.type === 'QUOTE_SINGLE';
    const choices = schema?.enum ?? schema?.choices;
    if (quoted && Array.isArray(choices) && choices.every((c) => typeof c === 'string')) {
      spans.push(...branchingSpans(node.value, choices as string[], range[0] + 1, text));
      return;
    }
    spans.push(quoted ? [range[0] + 1, range[1] - 1] : [range[0], range[1]]);
    return;
  }
  if (isSeq(node)) {
    node.items.forEach((item, i) => {
      walk(item as YamlNode, branches(schema) ? undefined : (schema?.prefixItems?.[i] ?? schema?.items), spans, text);
      // Where the list's length is free, the separator after an item (`,`: one more; `]`: stop) is chosen.
      const end = (item as YamlNode).range?.[1];
      if (end === undefined || !schema?.maxItems || i + 1 < (schema.minItems ?? 0) || i + 1 >= schema.maxItems) return;
      const at = text.slice(end).search(/\S/);
      if (at >= 0 && (text[end + at] === ',' || text[end + at] === ']')) spans.push([end + at, end + at + 1]);
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
  const values: Array<[number, number]> = [];
  for (const p of node.items) {
    const k = isScalar(p.key) ? String(p.key.value) : '';
    const r = (p.key as YamlNode | null)?.range;
    if (live.length > 1 && r && !live.every((b) => Object.hasOwn(b.properties!, k))) {
      const keys = [...new Set(live.flatMap((b) => Object.keys(b.properties!)))];
      spans.push(...branchingSpans(k, keys, r[0] + 1, text));
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
  const v = String(value);
  if (text.slice(at, at + v.length) !== v || !choices.includes(v)) return [[at, at + v.length]];
  const out: Array<[number, number]> = [];
  for (let i = 0; i <= v.length; i++) {
    const next = new Set(choices.filter((c) => c.startsWith(v.slice(0, i))).map((c) => (i < c.length ? c[i] : '')));
    if (next.size < 2) continue;
    const last = out[out.length - 1];
    if (last && last[1] === at + i) last[1] += 1;
    else out.push([at + i, at + i + 1]);
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
