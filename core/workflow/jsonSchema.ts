import { Ajv } from 'ajv';

/**
 * The one JSON Schema validator (Ajv; strict mode off, all errors reported) shared by the
 * workflow compiler (core/workflow/compile/parse.ts), which compiles every output schema to reject
 * invalid ones, and the engine (core/engine/runNode.ts), which validates outputs with it. One
 * instance compiles Ajv's meta-schema once and each schema object once per process (Ajv caches
 * compiled schemas by object); two instances did both twice, ~60 ms of every replay's start.
 */
export const jsonSchemaValidator = new Ajv({ strict: false, allErrors: true });
