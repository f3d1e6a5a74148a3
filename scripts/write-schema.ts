/** Writes schema/workflow.schema.json (the workflow document's JSON Schema, for editors). */
import { writeFileSync } from 'node:fs';
import { workflowJsonSchema } from '../core/workflow/index.ts';

const out = new URL('../schema/workflow.schema.json', import.meta.url);
writeFileSync(out, JSON.stringify({ title: 'Flowlab workflow', ...workflowJsonSchema() }, null, 2) + '\n');
console.log(`wrote ${out.pathname}`);
