/**
 * What an output schema may say, given how it is used: the schema is both the decoding grammar
 * (node-llama-cpp's JSON-schema grammar, `createGrammarForJsonSchema`, which implements the
 * keywords in {@link GRAMMAR_KEYWORDS} and ignores the rest) and the contract the engine checks
 * the output against (Ajv, core/workflow/jsonSchema.ts). A keyword the grammar cannot enforce
 * and that changes which structures are valid (`allOf`, `not`, `if`, ...) would let the grammar
 * produce outputs the contract then rejects on every run, and the role would be blamed for the
 * workflow's fault; so is a schema that contradicts itself (`type: string, enum: [1, 2]`: the
 * grammar decodes `1` or `2`, the contract accepts neither; a `const` outside its own `enum`; a
 * `type` that no `oneOf` branch has). Both are load-time errors
 * ({@link schemaProblems}). Value constraints the grammar skips but which only narrow values
 * (`minimum`, `pattern`, ...) are allowed with a warning ({@link schemaWarnings}): the output is
 * still validated after decoding, so a model that breaks one fails its contract honestly.
 */
import type { DocPath } from './graph.ts';

/** Keywords the decoding grammar implements (node-llama-cpp 3.x `GbnfJsonSchema`). */
export const GRAMMAR_KEYWORDS: ReadonlySet<string> = new Set([
  'type', 'enum', 'const', 'oneOf', 'properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties',
  'items', 'prefixItems', 'minItems', 'maxItems', 'minLength', 'maxLength', 'format', '$defs', '$ref',
]);
/** Annotations: no effect on validity, safe anywhere. */
const ANNOTATIONS: ReadonlySet<string> = new Set(['description', 'title', '$schema', '$id', '$comment', 'examples', 'default', 'readOnly', 'writeOnly', 'deprecated']);
/** Value constraints the grammar does not enforce but the contract checks after decoding. */
const POST_VALIDATED: ReadonlySet<string> = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'pattern', 'uniqueItems']);
/** The `format` values the grammar decodes; others are checked only after decoding. */
const GRAMMAR_FORMATS: ReadonlySet<string> = new Set(['date-time', 'time', 'date']);

/** One problem or warning at a path inside the schema. */
export interface SchemaNote {
  path: DocPath;
  message: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The JSON type names a value has (`integer` also for whole numbers, which are `number` too). */
function jsonTypes(v: unknown): string[] {
  if (v === null) return ['null'];
  if (Array.isArray(v)) return ['array'];
  if (typeof v === 'number') return Number.isInteger(v) ? ['integer', 'number'] : ['number'];
  return [typeof v];
}

/** Every subschema with its path, the root first (properties, items, prefixItems, oneOf, $defs, ...). */
function* subschemas(schema: unknown, path: DocPath = []): Generator<[Json, DocPath]> {
  if (!isObject(schema)) return;
  yield [schema, path];
  for (const key of ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']) {
    const m = schema[key];
    if (isObject(m)) for (const [k, s] of Object.entries(m)) yield* subschemas(s, [...path, key, k]);
  }
  for (const key of ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'additionalItems']) {
    const s = schema[key];
    if (Array.isArray(s)) for (const [i, x] of s.entries()) yield* subschemas(x, [...path, key, i]);
    else yield* subschemas(s, [...path, key]);
  }
  for (const key of ['oneOf', 'anyOf', 'allOf', 'prefixItems']) {
    const list = schema[key];
    if (Array.isArray(list)) for (const [i, s] of list.entries()) yield* subschemas(s, [...path, key, i]);
  }
}

/** Deep equality of two JSON values (as JSON Schema's `const` and `enum` compare them). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Json)[k], (b as Json)[k]));
}

/** Why `value` cannot satisfy the sibling keywords of `s` (type, length, range), or undefined. */
function valueConflict(s: Json, value: unknown): string | undefined {
  const declared = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : undefined;
  if (declared && !jsonTypes(value).some((t) => declared.includes(t))) return `${JSON.stringify(value)} is not of type ${declared.join(' or ')}`;
  if (typeof value === 'string') {
    if (typeof s.maxLength === 'number' && value.length > s.maxLength) return `${JSON.stringify(value)} is longer than maxLength ${s.maxLength}`;
    if (typeof s.minLength === 'number' && value.length < s.minLength) return `${JSON.stringify(value)} is shorter than minLength ${s.minLength}`;
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return `${value} is below minimum ${s.minimum}`;
    if (typeof s.maximum === 'number' && value > s.maximum) return `${value} is above maximum ${s.maximum}`;
  }
  return undefined;
}

/**
 * The load-time problems of an output schema: keywords that change validity but that the
 * grammar cannot enforce, and self-contradictions (an `enum`/`const` value that breaks the
 * schema's own `type` or bounds, an empty `enum`, `min*` above `max*`, a required property that
 * `additionalProperties: false` forbids, a `$ref` outside `#/$defs/`). Paths are inside the schema.
 */
export function schemaProblems(schema: unknown): SchemaNote[] {
  const out: SchemaNote[] = [];
  for (const [s, path] of subschemas(schema)) {
    for (const key of Object.keys(s)) {
      if (GRAMMAR_KEYWORDS.has(key) || ANNOTATIONS.has(key) || POST_VALIDATED.has(key)) continue;
      out.push({ path: [...path, key], message: `"${key}" cannot be enforced by the decoding grammar (it implements ${[...GRAMMAR_KEYWORDS].join(', ')}); the model would be steered to outputs the contract rejects. Rewrite the schema without it (e.g. merge allOf into one object, use oneOf for anyOf)` });
    }
    if (Array.isArray(s.enum)) {
      if (s.enum.length === 0) out.push({ path: [...path, 'enum'], message: 'enum is empty: no output can satisfy the schema' });
      for (const [i, v] of s.enum.entries()) {
        const why = valueConflict(s, v);
        if (why) out.push({ path: [...path, 'enum', i], message: `the schema contradicts itself: enum value ${why}, so the grammar can decode an output the contract rejects` });
      }
    }
    if (Object.hasOwn(s, 'const')) {
      const why = valueConflict(s, s.const);
      if (why) out.push({ path: [...path, 'const'], message: `the schema contradicts itself: const ${why}` });
      if (Array.isArray(s.enum) && !s.enum.some((v) => sameJson(v, s.const))) {
        out.push({ path: [...path, 'const'], message: `the schema contradicts itself: const ${JSON.stringify(s.const).slice(0, 80)} is not one of its enum values, so no output can satisfy both` });
      }
    }
    const declared = typeof s.type === 'string' ? [s.type] : Array.isArray(s.type) ? (s.type as string[]) : undefined;
    if (declared && Array.isArray(s.oneOf) && s.oneOf.length > 0) {
      const branchTypes = s.oneOf.map((b) => (isObject(b) ? (typeof b.type === 'string' ? [b.type] : Array.isArray(b.type) ? (b.type as string[]) : undefined) : undefined));
      // Only when every branch names its types: a branch without `type` may match anything.
      if (branchTypes.every((t) => t !== undefined) && branchTypes.every((t) => !t!.some((x) => declared.some((d) => d === x || (d === 'number' && x === 'integer') || (d === 'integer' && x === 'number'))))) {
        out.push({ path: [...path, 'oneOf'], message: `the schema contradicts itself: type ${declared.join(' or ')} matches no oneOf branch (their types: ${branchTypes.map((t) => t!.join(' or ')).join('; ')}), so no output can satisfy it` });
      }
    }
    for (const [lo, hi] of [['minLength', 'maxLength'], ['minItems', 'maxItems'], ['minProperties', 'maxProperties'], ['minimum', 'maximum']] as const) {
      if (typeof s[lo] === 'number' && typeof s[hi] === 'number' && (s[lo] as number) > (s[hi] as number)) {
        out.push({ path: [...path, lo], message: `the schema contradicts itself: ${lo} ${String(s[lo])} is above ${hi} ${String(s[hi])}` });
      }
    }
    if (s.additionalProperties === false && Array.isArray(s.required)) {
      const props = isObject(s.properties) ? s.properties : {};
      for (const [i, name] of s.required.entries()) {
        if (typeof name === 'string' && !Object.hasOwn(props, name)) out.push({ path: [...path, 'required', i], message: `the schema contradicts itself: "${name}" is required but additionalProperties is false and properties does not list it` });
      }
    }
    if (typeof s.$ref === 'string' && !s.$ref.startsWith('#/$defs/')) out.push({ path: [...path, '$ref'], message: `$ref ${JSON.stringify(s.$ref)}: the decoding grammar only follows references to "#/$defs/<name>"` });
  }
  return out;
}

/**
 * Keywords the grammar skips but the contract still checks after decoding (`minimum`,
 * `pattern`, a `format` other than date, time, date-time, ...): allowed, with this note, since a
 * model may still produce outputs that fail them (a fair CONTRACT_VIOLATION of the role).
 */
export function schemaWarnings(schema: unknown): SchemaNote[] {
  const out: SchemaNote[] = [];
  for (const [s, path] of subschemas(schema)) {
    for (const key of Object.keys(s)) {
      if (POST_VALIDATED.has(key)) out.push({ path: [...path, key], message: `"${key}" is not enforced while decoding; outputs are checked against it afterwards, and one that breaks it fails the node's contract` });
    }
    if (typeof s.format === 'string' && !GRAMMAR_FORMATS.has(s.format)) out.push({ path: [...path, 'format'], message: `format "${s.format}" is not enforced while decoding (only date, time, date-time are); outputs are checked afterwards` });
  }
  return out;
}
