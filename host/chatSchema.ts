/**
 * The JSON schema of a chat-completions request, checked before any token is generated, as the
 * servers `flowlab serve-model` imitates check theirs (OpenAI answers an invalid
 * `response_format` schema with 400 `invalid_request_error`; llama-server and vLLM refuse a schema
 * their grammar compiler cannot take): first its size and nesting depth (walked without recursion,
 * so a 10,000-deep schema costs a loop, not the stack), then the draft-07 meta-schema (Ajv), then
 * — when the server enforces schemas by grammar — what the grammar can decode and whether the
 * schema contradicts itself (core/workflow `schemaProblems`, the rules the workflow loader uses),
 * then Ajv's compile (`$ref`s that resolve). Each refusal names the keyword and its path.
 */
import { MAX_NESTING_DEPTH } from '../core/limits.ts';
import { formatPath, jsonSchemaValidator, schemaProblems } from '../core/workflow/index.ts';

/** Deepest nesting of objects and arrays a request schema may have (root = 1): core/limits.ts. */
export const MAX_SCHEMA_DEPTH = MAX_NESTING_DEPTH;
/** Most objects, arrays and values a request schema may hold. */
export const MAX_SCHEMA_NODES = 20_000;

/** Why a schema is refused: the message and the JSON pointer inside the schema. */
export interface SchemaRefusal {
  message: string;
  pointer: string;
}

/**
 * The first reason to refuse `schema` (see the module comment), or undefined when it is fine.
 * `grammar`: the server decodes under the schema's grammar (adds the grammar-support rules).
 */
export function schemaRefusal(schema: unknown, grammar: boolean): SchemaRefusal | undefined {
  const shape = shapeProblem(schema);
  if (shape) return shape;
  const meta = jsonSchemaValidator.validateSchema(schema as object) as boolean;
  if (!meta) {
    const e = jsonSchemaValidator.errors?.[0];
    const pointer = e?.instancePath || '/';
    const allowed = (e?.params as { allowedValues?: unknown } | undefined)?.allowedValues;
    return { pointer, message: `keyword "${lastKey(pointer)}" at ${pointer} ${e?.message ?? 'is invalid'}${allowed ? ` (${JSON.stringify(allowed)})` : ''}: not a valid JSON Schema (draft-07)` };
  }
  if (grammar) {
    const p = schemaProblems(schema)[0];
    if (p) return { pointer: `/${p.path.join('/')}`, message: `at ${formatPath(p.path) || '(root)'}: ${p.message}` };
  }
  try {
    jsonSchemaValidator.compile(schema as object);
  } catch (e) {
    return { pointer: '/', message: `the schema does not compile: ${(e as Error).message}` };
  }
  return undefined;
}

const lastKey = (pointer: string): string => pointer.split('/').filter(Boolean).pop() ?? '(root)';

/** Depth and size, walked with an explicit stack. */
function shapeProblem(schema: unknown): SchemaRefusal | undefined {
  const stack: Array<{ v: unknown; depth: number; pointer: string }> = [{ v: schema, depth: 1, pointer: '' }];
  let nodes = 0;
  while (stack.length) {
    const { v, depth, pointer } = stack.pop()!;
    if (++nodes > MAX_SCHEMA_NODES) return { pointer: pointer || '/', message: `the schema has more than ${MAX_SCHEMA_NODES} values (objects, arrays and leaves); send a smaller one` };
    if (v === null || typeof v !== 'object') continue;
    if (depth > MAX_SCHEMA_DEPTH) return { pointer, message: `the schema nests deeper than ${MAX_SCHEMA_DEPTH} levels (at ${pointer.slice(0, 200)}${pointer.length > 200 ? '…' : ''})` };
    for (const [k, x] of Object.entries(v)) stack.push({ v: x, depth: depth + 1, pointer: `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` });
  }
  return undefined;
}
