/**
 * Writes core/workflow/draft07.generated.ts, the precompiled draft-07 meta-schema validator
 * (core/workflow/jsonSchemaMeta.ts explains it). Run after upgrading Ajv:
 * `npx tsx scripts/gen-json-schema-meta.ts`; core/workflow/jsonSchema.test.ts fails until then.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DRAFT_07_GENERATED, draft07ValidatorSource } from '../core/workflow/jsonSchemaMeta.ts';

const file = path.resolve(import.meta.dirname, '..', DRAFT_07_GENERATED);
writeFileSync(file, draft07ValidatorSource());
console.log(`wrote ${path.relative(process.cwd(), file)}`);
