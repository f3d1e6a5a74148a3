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
