/** Options of the one Ajv instance (core/workflow/jsonSchema.ts) and of its precompiled meta-schema validator. */
export const JSON_SCHEMA_OPTIONS = { strict: false, allErrors: true } as const;

/** Ajv 8's default meta-schema, JSON Schema draft-07, as its `$id` spells it. */
export const DRAFT_07_ID = 'http://json-schema.org/draft-07/schema#';
