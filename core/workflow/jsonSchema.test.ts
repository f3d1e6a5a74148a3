import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type AnySchema } from 'ajv';
import { describe, expect, it } from 'vitest';
import { jsonSchemaValidator } from './jsonSchema.ts';
import { DRAFT_07_GENERATED, draft07ValidatorSource } from './jsonSchemaMeta.ts';
import { DRAFT_07_ID, JSON_SCHEMA_OPTIONS } from './jsonSchemaOptions.ts';

/** What `compile` does with a schema: the thrown message, or the validator's verdicts on samples. */
function outcome(ajv: Ajv, schema: AnySchema, samples: unknown[]): { error: string } | { verdicts: boolean[] } {
  try {
    const v = ajv.compile(schema);
    return { verdicts: samples.map((s) => v(s) as boolean) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

const samples = [{ answer: 'x' }, { answer: 3 }, {}, 'text', 4, null];

/** Output schemas as workflows write them, valid and not, against the draft-07 meta-schema. */
const schemas: Array<{ name: string; schema: AnySchema; invalid?: RegExp }> = [
  { name: 'object with required field', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } },
  { name: 'draft-07 $schema with #', schema: { $schema: DRAFT_07_ID, type: 'object' } },
  { name: 'draft-07 $schema without #', schema: { $schema: DRAFT_07_ID.slice(0, -1), type: 'string' } },
  { name: 'enum and uniqueItems', schema: { enum: ['a', 'b', 3], items: { type: 'number' }, uniqueItems: true } },
  { name: 'boolean schema', schema: true },
  { name: 'unknown type', schema: { type: 'strin' }, invalid: /^schema is invalid: data\/type must be equal to one of the allowed values, data\/type must be array, data\/type must match a schema in anyOf$/ },
  { name: 'required not an array', schema: { type: 'object', required: 'answer' }, invalid: /^schema is invalid: data\/required must be array$/ },
  { name: 'duplicate required', schema: { required: ['a', 'a'] }, invalid: /^schema is invalid: data\/required must NOT have duplicate items \(items ## 1 and 0 are identical\)$/ },
  { name: 'negative minLength', schema: { minLength: -1 }, invalid: /^schema is invalid: data\/minLength must be >= 0$/ },
  { name: 'nested invalid property', schema: { properties: { a: { type: 7 } } }, invalid: /^schema is invalid: data\/properties\/a\/type must be equal to one of the allowed values/ },
  { name: 'non-string $schema', schema: { $schema: 7 } as unknown as AnySchema, invalid: /^\$schema must be a string$/ },
  { name: 'unknown meta-schema', schema: { $schema: 'http://json-schema.org/draft-04/schema#' }, invalid: /^no schema with key or ref "http:\/\/json-schema.org\/draft-04\/schema#"$/ },
];

describe('jsonSchemaValidator: the precompiled draft-07 meta-schema check', () => {
  it('is the code Ajv generates now (regenerate with scripts/gen-json-schema-meta.ts)', () => {
    const committed = readFileSync(path.resolve(import.meta.dirname, '../..', DRAFT_07_GENERATED), 'utf8');
    expect(committed).toBe(draft07ValidatorSource());
  });

  for (const { name, schema, invalid } of schemas) {
    it(`compiles "${name}" exactly as Ajv with its run-time meta-schema does`, () => {
      const reference = outcome(new Ajv(JSON_SCHEMA_OPTIONS), schema, samples);
      const got = outcome(jsonSchemaValidator, schema, samples);
      expect(got).toEqual(reference);
      if (invalid) expect((got as { error: string }).error).toMatch(invalid);
      else expect('verdicts' in got).toBe(true);
    });
  }

  it('reports validateSchema errors as Ajv does', () => {
    const reference = new Ajv(JSON_SCHEMA_OPTIONS);
    const bad = { type: 'object', properties: { a: { minimum: 'zero' } }, maxItems: 1.5 };
    expect(jsonSchemaValidator.validateSchema(bad)).toBe(false);
    expect(reference.validateSchema(bad)).toBe(false);
    expect(jsonSchemaValidator.errors).toEqual(reference.errors);
    expect(jsonSchemaValidator.errors?.map((e) => e.instancePath)).toEqual(['/maxItems', '/properties/a/minimum']);
    expect(jsonSchemaValidator.validateSchema({ type: 'number' })).toBe(true);
    expect(jsonSchemaValidator.errors).toBeNull();
  });

  it('never compiles the meta-schema itself', () => {
    jsonSchemaValidator.compile({ type: 'object', properties: { n: { type: 'integer' } } });
    const meta = (jsonSchemaValidator as unknown as { schemas: Record<string, { validate?: unknown }> }).schemas[DRAFT_07_ID.slice(0, -1)];
    expect(meta).toBeDefined();
    expect(meta!.validate).toBeUndefined();
  });
});

describe('prefixItems (JSON Schema 2020-12) in the engine validator', () => {
  it('checks each position against its subschema and leaves later items free', () => {
    const v = jsonSchemaValidator.compile({ type: 'array', prefixItems: [{ const: 'a' }, { type: 'number' }], minItems: 1 });
    expect(v(['a', 2])).toBe(true);
    expect(v(['a', 2, 'anything'])).toBe(true);
    expect(v(['a'])).toBe(true);
    expect(v(['b', 2])).toBe(false);
    expect(v(['a', 'x'])).toBe(false);
    expect(v([])).toBe(false);
  });
});
