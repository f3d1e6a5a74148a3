/**
 * The cases of issue 30 ("Hardening, round three"), kept so they cannot come back: output schemas
 * that contradict themselves, NUL characters, hostile OTLP traces (cycles, duplicate span ids,
 * chains past the depth limit, valueless attributes), unscorable Who&When logs, GGUF tensors of an
 * unknown ggml type, request bodies that are not UTF-8, and serve-model requests it cannot honour
 * (target `model`: OpenAI's error shape, `code` = the error's `type`, `field` = its `param`).
 */
import type { ApiEntry, CliEntry, GgufEntry, WorkflowEntry } from './types.ts';
import { step } from './workflows.ts';
import { str, u32, u64 } from './gguf.ts';

const w = (id: string, bytes: string | Buffer, code: string, line?: number): WorkflowEntry => ({ id: `workflow/${id}`, via: 'workflow', bytes, code, ...(line !== undefined && { line }) });

export const WORKFLOWS_30: WorkflowEntry[] = [
  w('schema-const-vs-enum', step('Q', '{ type: object, properties: { answer: { type: number, const: 3, enum: [1, 2] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-const-vs-enum-strings', step('Q', '{ type: object, properties: { answer: { type: string, const: maybe, enum: [yes, no] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-const-vs-enum-object', step('Q', '{ type: object, const: { a: 1 }, enum: [{ a: 2 }], properties: { answer: { type: number } } }'), 'INVALID_SCHEMA', 9),
  w('schema-type-vs-oneOf', step('Q', '{ type: object, properties: { answer: { type: string, oneOf: [{ type: number }, { type: boolean }] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-type-array-vs-oneOf', step('Q', '{ type: object, properties: { answer: { type: [string, "null"], oneOf: [{ type: integer }, { type: array }] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-object-vs-oneOf-strings', step('Q', '{ type: object, oneOf: [{ type: string }, { type: number }], properties: { answer: { type: number } } }'), 'INVALID_SCHEMA', 9),
  w('nul-in-name', 'name: a\0b\nsteps: []\n', 'NUL_CHARACTER', 1),
  w('nul-in-prompt', step('Q: X{{task.question}}').replace('X', '\0'), 'NUL_CHARACTER', 7),
  w('nul-at-start', '\0name: a\nsteps: []\n', 'NUL_CHARACTER', 1),
  w('nul-after-unicode', 'name: café\ndescription: "é\0"\nsteps: []\n', 'NUL_CHARACTER', 2),
];

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const id = (n: number) => n.toString(16).padStart(16, '0');
const span = (n: number, parent?: number, over: Record<string, unknown> = {}) => ({ traceId: TRACE, spanId: id(n), ...(parent !== undefined && { parentSpanId: id(parent) }), name: `s${n}`, startTimeUnixNano: String(1000 + n), endTimeUnixNano: String(2000 + n), ...over });
const req = (spans: unknown[]) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });
const lines = (spans: unknown[]) => spans.map((s) => req([s])).join('\n') + '\n';
const otlp = (name: string, text: string, code: string, place: string, spawn = false): CliEntry => ({ id: `otlp/${name}`, via: 'cli', files: { 't.json': text }, argv: ['import', '{dir}/t.json', '--db', '{db}'], code, place, spawn });
const chain = (n: number) => Array.from({ length: n }, (_, i) => span(i + 1, i === 0 ? undefined : i));

export const OTLP_30: CliEntry[] = [
  otlp('cycle-self', req([span(1, 1)]), 'BAD_SPAN_TREE', `form a cycle: ${id(1)} -> ${id(1)}`),
  otlp('cycle-two', req([span(1), span(2, 3), span(3, 2)]), 'BAD_SPAN_TREE', `form a cycle: ${id(2)} -> ${id(3)} -> ${id(2)}`, true),
  otlp('cycle-no-root', req([span(1, 3), span(2, 1), span(3, 2)]), 'BAD_SPAN_TREE', '{dir}/t.json: resourceSpans[0].scopeSpans[0].spans[0]'),
  otlp('duplicate-id', req([span(1), span(2, 1), span(2, 1)]), 'BAD_SPAN_TREE', `span id ${id(2)} appears twice in trace ${TRACE}`, true),
  otlp('duplicate-root', req([span(1), span(1)]), 'BAD_SPAN_TREE', 'resourceSpans[0].scopeSpans[0].spans[1]'),
  otlp('duplicate-id-json-lines', lines([span(1), span(2, 1), span(2, 1)]), 'BAD_SPAN_TREE', 'line 3: resourceSpans[0].scopeSpans[0].spans[0] (line 3): span id'),
  otlp('chain-1001', req(chain(1001)), 'BAD_SPAN_TREE', `span ${id(1001)} is 1001 parent links deep`),
  otlp('chain-100000', req(chain(100_000)), 'BAD_SPAN_TREE', 'past the limit of 1000', true),
  otlp('attribute-without-value', req([span(1, undefined, { attributes: [{ key: 'gen_ai.agent.name' }] })]), 'BAD_OTLP', 'attributes[0]: attribute "gen_ai.agent.name" has no value'),
  otlp('attribute-value-null', req([span(1, undefined, { attributes: [{ key: 'k', value: null }] })]), 'BAD_OTLP', 'attribute "k" has no value'),
  otlp('event-attribute-without-value', req([span(1, undefined, { events: [{ name: 'e', timeUnixNano: '1', attributes: [{ key: 'x' }] }] })]), 'BAD_OTLP', 'events[0].attributes[0]: attribute "x" has no value'),
  otlp('attribute-nested-deep', req([span(1, undefined, { attributes: [{ key: 'k', value: JSON.parse(`${'{"arrayValue":{"values":['.repeat(40)}{"intValue":1}${']}}'.repeat(40)}`) as unknown }] })]), 'BAD_OTLP', 'nest deeper than 32 levels'),
];

const LOG_OK = { history: [{ role: 'user', content: 'Find x.' }, { role: 'assistant', content: 'x = 2' }], mistake_agent: 'assistant', mistake_step: '1', mistake_reason: 'wrong' };
const logs = (name: string, files: Record<string, string>, place: string): CliEntry => ({
  id: `logs/${name}`, via: 'cli', files: Object.fromEntries(Object.entries(files).map(([f, t]) => [`ww/${f}`, t])), argv: ['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--path', '{dir}/ww'], code: 'BAD_LOGS', place,
});

export const LOGS_30: CliEntry[] = [
  logs('missing-mistake-step', { '1.json': JSON.stringify({ ...LOG_OK, mistake_step: undefined }) }, '{dir}/ww/1.json: missing "mistake_step"'),
  logs('step-out-of-range', { '1.json': JSON.stringify({ ...LOG_OK, mistake_step: '9' }) }, '{dir}/ww/1.json: "mistake_step" "9" is not an integer in range 0..1'),
  logs('missing-mistake-agent', { '1.json': JSON.stringify({ ...LOG_OK, mistake_agent: '' }) }, '{dir}/ww/1.json: missing "mistake_agent"'),
  logs('content-not-string', { '1.json': JSON.stringify({ ...LOG_OK, history: [{ role: 'user', content: 5 }] }) }, '{dir}/ww/1.json: history[0].content is not a string'),
  logs('not-json', { '1.json': '{"history": [' }, '{dir}/ww/1.json: not valid JSON'),
  logs('two-of-three', { '1.json': JSON.stringify(LOG_OK), '2.json': '[]', '3.json': JSON.stringify({ ...LOG_OK, history: [] }) }, '2 of 3 Who&When logs in {dir}/ww cannot be scored; the first: {dir}/ww/2.json: expected a JSON object'),
];

/** A GGUF v3 file with one 4-element tensor "blk.0.attn_q.weight" of ggml type `type` and 64 data bytes. */
const oneTensor = (type: number) => (): Buffer => {
  const head = Buffer.concat([Buffer.from('GGUF'), u32(3), u64(1n), u64(1n), str('general.architecture'), u32(8), str('llama'), str('blk.0.attn_q.weight'), u32(1), u64(4n), u32(type), u64(0n)]);
  return Buffer.concat([head, Buffer.alloc((32 - (head.length % 32)) % 32), Buffer.alloc(64)]);
};
const gguf = (name: string, type: number): GgufEntry[] => [
  { id: `gguf/tensor-type-${name}/readGguf`, via: 'gguf', make: oneTensor(type), reader: 'header', code: 'GGUF_UNKNOWN_TENSOR_TYPE', place: `tensor "blk.0.attn_q.weight" has ggml type ${type}` },
  { id: `gguf/tensor-type-${name}/checked`, via: 'gguf', make: oneTensor(type), reader: 'checked', code: 'MODEL_INVALID', place: `tensor "blk.0.attn_q.weight" has ggml type ${type}` },
];

export const GGUFS_30: GgufEntry[] = [...gguf('77', 77), ...gguf('removed-q4-2', 4), ...gguf('removed-q4-0-4-4', 31), ...gguf('max', 0xffffffff)];

const latin1 = (before: string, bytes: number[], after: string) => Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
const raw = (name: string, method: string, body: Buffer, offset: number): ApiEntry => ({ id: `api/${name}`, via: 'api', method, raw: body, status: 400, code: 'BAD_REQUEST', place: `not UTF-8 at byte offset ${offset}` });
const WF = 'name: one\\nroles:\\n  solver: { kind: executor, instructions: Solve. }\\nsteps: []\\n';

export const API_30: ApiEntry[] = [
  raw('body-latin1-validate', 'validateWorkflow', latin1('{"text": "name: caf', [0xe9], '"}'), 19),
  raw('body-cp1252-quotes', 'getExperiment', latin1('{"id": ', [0x93], 'x"}'), 7),
  raw('body-overlong-slash', 'getExperiment', latin1('{"id": "', [0xc0, 0xaf], '"}'), 8),
  raw('body-lone-surrogate', 'getExperiment', latin1('{"id": "', [0xed, 0xa0, 0x80], '"}'), 8),
  raw('body-cut-sequence', 'listExperiments', latin1('{"x": "', [0xe2, 0x82], ''), 7),
  raw('body-startRun-latin1', 'startRun', latin1('{"workflowText": "name: ', [0xff], '"}'), 24),
  { id: 'api/saveWorkflowFile-nul-text', via: 'api', method: 'saveWorkflowFile', payload: { name: 'nul.yaml', text: `${WF}#\0` }, status: 400, code: 'BAD_REQUEST', field: 'text', place: 'must not contain a NUL character' },
  { id: 'api/startRun-workflow-nul', via: 'api', method: 'startRun', payload: { workflowText: 'name: a\0\nsteps: []\n', dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, threads: 1, models: { default: '{dir}/models/text.gguf' } }, status: 400, code: 'BAD_REQUEST', field: 'workflowText', place: 'NUL character (U+0000) at character offset 7' },
  { id: 'api/startRun-dataset-nul', via: 'api', method: 'startRun', payload: { workflowText: 'name: a\nsteps: []\n', dataset: 'gs\0m', split: 'test', limit: 1, seed: 1, threads: 1, models: { default: '{dir}/models/text.gguf' } }, status: 400, code: 'BAD_REQUEST', field: 'dataset', place: 'NUL character' },
];

const USER = [{ role: 'user', content: 'What is 2 + 2?' }];
const m = (name: string, payload: Record<string, unknown>, field: string | null, place: string, status = 400): ApiEntry => ({
  id: `serve-model/${name}`, via: 'api', target: 'model', method: 'chat/completions', payload: { model: 'tiny', messages: USER, ...payload }, status, code: 'invalid_request_error', ...(field !== null && { field }), place,
});
const schema = (s: unknown) => ({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema: s } } });
const nest = (depth: number): unknown => {
  let s: unknown = { type: 'string' };
  for (let i = 1; i < depth; i++) s = { type: 'object', properties: { a: s } };
  return s;
};

export const MODEL_30: ApiEntry[] = [
  m('schema-type-banana', schema({ type: 'banana' }), 'response_format.json_schema.schema', 'keyword "type" at /type'),
  m('schema-nested-type-banana', schema({ type: 'object', properties: { x: { type: 'banana' } } }), 'response_format.json_schema.schema', 'at /properties/x/type'),
  m('schema-required-not-array', schema({ type: 'object', required: 'x' }), 'response_format.json_schema.schema', 'keyword "required"'),
  m('schema-nested-500', schema(nest(500)), 'response_format.json_schema.schema', 'nests deeper than 64 levels'),
  m('schema-allOf', schema({ allOf: [{ type: 'object' }] }), 'response_format.json_schema.schema', '"allOf" cannot be enforced by the decoding grammar'),
  m('schema-const-vs-enum', schema({ type: 'integer', const: 3, enum: [1, 2] }), 'response_format.json_schema.schema', 'const 3 is not one of its enum values'),
  m('schema-ref-outside', schema({ $ref: 'http://example.com/s.json' }), 'response_format.json_schema.schema', '$ref'),
  m('json-object-schema-invalid', { response_format: { type: 'json_object', schema: { type: 7 } } }, 'response_format.schema', 'keyword "type"'),
  m('guided-json-invalid', { guided_json: { type: 'banana' } }, 'guided_json', 'keyword "type"'),
  m('max-tokens-zero', { max_tokens: 0 }, 'max_tokens', '`max_tokens` must be at least 1 (got 0)'),
  m('max-completion-tokens-zero', { max_completion_tokens: 0 }, 'max_completion_tokens', 'must be at least 1'),
  m('max-tokens-over-cap', { max_tokens: 1_000_000 }, 'max_tokens', 'is at most 32768'),
  m('user-content-null', { messages: [{ role: 'user', content: null }] }, 'messages[0].content', "a user message's content may not be null"),
  m('system-content-missing', { messages: [{ role: 'system' }, ...USER] }, 'messages[0].content', "a system message's content may not be missing"),
  m('tools-required', { tools: [{ type: 'function', function: { name: 'add', parameters: { type: 'object' } } }], tool_choice: 'required' }, 'tools', 'no function calling'),
  m('tool-choice-alone', { tool_choice: 'auto' }, 'tool_choice', '`tool_choice` is not supported'),
  m('functions', { functions: [{ name: 'add', parameters: {} }] }, 'functions', '`functions` is not supported'),
  m('function-call', { function_call: 'auto' }, 'function_call', '`function_call` is not supported'),
  m('parallel-tool-calls', { parallel_tool_calls: true }, 'parallel_tool_calls', 'not supported'),
  m('logit-bias', { logit_bias: { '50256': -100 } }, 'logit_bias', '`logit_bias` is not supported'),
  m('audio', { audio: { voice: 'alloy', format: 'wav' }, modalities: ['text', 'audio'] }, 'audio', '`audio` is not supported'),
  m('n-three', { n: 3 }, 'n', 'only n = 1 is supported'),
  { id: 'serve-model/body-latin1', via: 'api', target: 'model', method: 'chat/completions', raw: latin1('{"model":"tiny","messages":[{"role":"user","content":"caf', [0xe9], '"}]}'), status: 400, code: 'invalid_request_error', place: 'not UTF-8 at byte offset 57' },
];
