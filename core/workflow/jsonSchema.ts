import { Ajv, type AnySchema, type ValidateFunction } from 'ajv';
import { validateDraft07 } from './draft07.generated.ts';
import { DRAFT_07_ID, JSON_SCHEMA_OPTIONS } from './jsonSchemaOptions.ts';

/** The generated validator, typed (the generated file is not type-checked). */
const metaValidate = validateDraft07 as unknown as ValidateFunction;

/** The `$schema` values that name the draft-07 meta-schema (Ajv strips a trailing `#` when it looks an id up). */
const DRAFT_07_KEYS = new Set([DRAFT_07_ID, DRAFT_07_ID.slice(0, -1)]);

/**
 * Ajv whose meta-schema check uses the precompiled draft-07 validator (core/workflow/jsonSchemaMeta.ts)
 * instead of compiling the meta-schema at run time, ~35 ms of a process's start. `validateSchema`
 * is Ajv 8's own (ajv/dist/core.js) with only the meta validator swapped: same `$schema` rules
 * (a non-string one throws; absent or empty means the default, draft-07), same `errors`, same
 * "schema is invalid: …" message thrown from `compile`. A schema naming another meta-schema goes
 * through Ajv unchanged.
 */
class PrecompiledMetaAjv extends Ajv {
  override validateSchema(schema: AnySchema, throwOrLogError?: boolean): boolean | Promise<unknown> {
    if (typeof schema == 'boolean') return true;
    const $schema: unknown = schema.$schema;
    if ($schema !== undefined && typeof $schema != 'string') throw new Error('$schema must be a string');
    if ($schema && !DRAFT_07_KEYS.has($schema)) return super.validateSchema(schema, throwOrLogError);
    const valid = metaValidate(schema) as boolean;
    this.errors = metaValidate.errors ?? null;
    if (!valid && throwOrLogError) {
      const message = 'schema is invalid: ' + this.errorsText();
      if (this.opts.validateSchema === 'log') this.logger.error(message);
      else throw new Error(message);
    }
    return valid;
  }
}

/**
 * The one JSON Schema validator (Ajv; strict mode off, all errors reported) shared by the
 * workflow compiler (core/workflow/compile/parse.ts), which compiles every output schema to reject
 * invalid ones, and the engine (core/engine/runNode.ts), which validates outputs with it. One
 * instance compiles each schema object once per process (Ajv caches compiled schemas by object);
 * two instances did it twice. The meta-schema is never compiled: see PrecompiledMetaAjv.
 */
export const jsonSchemaValidator: Ajv = new PrecompiledMetaAjv(JSON_SCHEMA_OPTIONS);

/**
 * `prefixItems` (JSON Schema 2020-12, "prefixItems": item i must match subschema i; items past
 * the list are left to `items`, here unconstrained) on the draft-07 validator, which otherwise
 * ignores the word (strict mode is off): a macro that expands it to draft-07's tuple form
 * `items: [...]`, the same positional rule. Flowlab's own schemas use it (a design's steps,
 * core/workflow/compile/designStage.ts); without it the engine accepted a design whose step i was
 * wrong and only the later design check caught it, too late for a retry.
 * A schema giving both `prefixItems` and a single-schema `items` gets draft-07's reading of
 * `items` (every item) beside the positional rule.
 */
jsonSchemaValidator.addKeyword({
  keyword: 'prefixItems',
  type: 'array',
  schemaType: 'array',
  macro: (schema: unknown[]) => ({ items: schema }),
});
