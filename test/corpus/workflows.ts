/** Workflow files: YAML/JSON syntax, schema, graph, templates, non-UTF-8, nesting, output schemas. */
import type { WorkflowEntry } from './types.ts';

const ROLES = 'roles:\n  solver: { kind: executor, instructions: Solve. }\n';
const SCHEMA = '{ type: object, properties: { answer: { type: number } }, required: [answer] }';

/** A one-step workflow with the given prompt and output schema (line 9 holds the schema). */
export const step = (prompt: string, schema = SCHEMA, extra = '') =>
  `name: w\n${ROLES}steps:\n  - id: solve\n    role: solver\n    prompt: ${JSON.stringify(prompt)}\n    output:\n      schema: ${schema}\n${extra}answer: solve.answer\n`;

/** A graph workflow with the given node lines (after `nodes:`) and answer. */
const graph = (nodes: string, answer = 'a', extra = '') => `name: g\n${ROLES}${extra}nodes:\n${nodes}answer: ${answer}\n`;
const agent = (id: string, more = '') => `  - id: ${id}\n    role: solver\n    prompt: "x {{task.question}}"\n${more}`;

const w = (id: string, text: string | Buffer, code: string, line?: number): WorkflowEntry => ({ id: `workflow/${id}`, via: 'workflow', bytes: text, code, line });

export const WORKFLOWS: WorkflowEntry[] = [
  // The hardening findings (test/hardening/inputs.test.ts has the exact messages).
  w('latin1-name', Buffer.concat([Buffer.from('name: caf'), Buffer.from([0xe9]), Buffer.from('\nsteps: []\n')]), 'NOT_UTF8', 1),
  w('deep-flow-20000', `name: d\nsteps: []\nx: ${'['.repeat(20000)}${']'.repeat(20000)}\n`, 'TOO_DEEP', 3),
  w('deep-block-3000', `name: d\nsteps: []\nx:\n${Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')}\n`, 'TOO_DEEP'),
  w('template-unclosed', step('Question: {{task.question\nAnswer as JSON:'), 'BAD_TEMPLATE', 7),
  w('template-not-placeholder', step('Question: {{task question}}'), 'BAD_TEMPLATE', 7),
  w('schema-allOf', step('Q', '{ allOf: [{ type: object, properties: { answer: { type: number } } }, { required: [answer] }] }'), 'INVALID_SCHEMA', 9),
  w('schema-anyOf', step('Q', '{ type: object, properties: { answer: { anyOf: [{ type: number }, { type: string }] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-not', step('Q', '{ type: object, properties: { answer: { type: number, not: { const: 0 } } } }'), 'INVALID_SCHEMA', 9),
  w('schema-enum-vs-type', step('Q', '{ type: object, properties: { answer: { type: string, enum: [1, 2] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-empty-enum', step('Q', '{ type: object, properties: { answer: { enum: [] } } }'), 'INVALID_SCHEMA', 9),
  w('schema-minLength-over-maxLength', step('Q', '{ type: object, properties: { answer: { type: string, minLength: 5, maxLength: 2 } } }'), 'INVALID_SCHEMA', 9),
  w('schema-required-forbidden', step('Q', '{ type: object, properties: { a: { type: number } }, required: [answer], additionalProperties: false }'), 'INVALID_SCHEMA', 9),
  // YAML syntax
  w('yaml-unclosed-flow', 'name: [unclosed\n', 'YAML_SYNTAX', 2),
  w('yaml-tab-indent', 'name: w\nsteps:\n\t- id: a\n', 'YAML_SYNTAX'),
  w('yaml-bad-indent', 'name: w\n  steps: []\n bad: 1\n', 'YAML_SYNTAX'),
  w('yaml-duplicate-key', 'name: w\nname: v\nsteps: []\n', 'YAML_SYNTAX', 2),
  w('yaml-unclosed-quote', 'name: "w\nsteps: []\n', 'YAML_SYNTAX'),
  w('yaml-bad-alias', 'name: *nothing\nsteps: []\n', 'YAML_SYNTAX', 1),
  w('yaml-two-documents', 'name: a\nsteps: []\n---\nname: b\n', 'YAML_SYNTAX'),
  w('json-no-roles', '{"name": "w", "steps": [],}\n', 'SCHEMA', 1),
  w('json-unclosed', '{"name": "w", "steps": [\n', 'YAML_SYNTAX'),
  w('yaml-bom-then-garbage', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name: [\n')]), 'YAML_SYNTAX'),
  // Non-UTF-8
  w('utf16le', Buffer.from('\ufeffname: w\nsteps: []\n', 'utf16le'), 'NOT_UTF8', 1),
  w('latin1-in-prompt', Buffer.concat([Buffer.from(step('Q').split('\n').slice(0, 6).join('\n') + '\n    # r'), Buffer.from([0xe9, 0xe8]), Buffer.from('sum\n')]), 'NOT_UTF8', 7),
  w('overlong-utf8', Buffer.concat([Buffer.from('name: '), Buffer.from([0xc0, 0xaf]), Buffer.from('\nsteps: []\n')]), 'NOT_UTF8', 1),
  w('lone-continuation', Buffer.concat([Buffer.from('name: w\nsteps: []\ndescription: '), Buffer.from([0x80]), Buffer.from('\n')]), 'NOT_UTF8', 3),
  w('truncated-utf8', Buffer.concat([Buffer.from('name: w\nsteps: []\ndescription: caf'), Buffer.from([0xc3])]), 'NOT_UTF8', 3),
  w('surrogate-utf8', Buffer.concat([Buffer.from('name: '), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('\nsteps: []\n')]), 'NOT_UTF8', 1),
  // Nesting
  w('deep-flow-map', `name: d\nsteps: []\nx: ${'{a: '.repeat(5000)}1${'}'.repeat(5000)}\n`, 'TOO_DEEP', 3),
  w('deep-mixed', `name: d\nsteps: []\nx: ${'[{a: '.repeat(400)}1${'}]'.repeat(400)}\n`, 'TOO_DEEP', 3),
  w('deep-json', `{"name": "d", "steps": [], "x": ${'['.repeat(100000)}${']'.repeat(100000)}}`, 'TOO_DEEP', 1),
  w('deep-block-seq', `name: d\nsteps: []\nx:\n${Array.from({ length: 200 }, (_, i) => `${'  '.repeat(i)}-`).join('\n')} 1\n`, 'TOO_DEEP'),
  // Document schema
  w('not-a-mapping', '- a\n- b\n', 'SCHEMA', 1),
  w('scalar-document', 'just text\n', 'SCHEMA', 1),
  w('empty-file', '', 'SCHEMA', 1),
  w('comments-only', '# nothing here\n', 'SCHEMA', 1),
  w('name-number', 'name: 5\nsteps: []\n', 'SCHEMA', 1),
  w('steps-not-list', 'name: w\nsteps: 3\n', 'SCHEMA', 2),
  w('unknown-top-key', 'name: w\nsteps: []\nbogus: 1\n', 'SCHEMA', 1),
  w('step-without-id', `name: w\n${ROLES}steps:\n  - role: solver\n    prompt: x\nanswer: solve\n`, 'SCHEMA', 5),
  w('max-tokens-string', step('Q: {{task.question}}', SCHEMA, '    max_tokens: lots\n').replace('    max_tokens: lots\nanswer', 'answer').replace('    prompt:', '    max_tokens: lots\n    prompt:'), 'SCHEMA', 7),
  w('max-tokens-negative', step('Q').replace('    prompt:', '    max_tokens: -5\n    prompt:'), 'SCHEMA', 7),
  w('max-tokens-huge', step('Q').replace('    prompt:', '    max_tokens: 99999999\n    prompt:'), 'SCHEMA', 7),
  w('role-kind-unknown', 'name: w\nroles:\n  solver: { kind: wizard, instructions: x }\nsteps: []\n', 'SCHEMA', 3),
  w('limits-hops-zero', graph(agent('a'), 'a', 'limits:\n  max_hops: 0\n'), 'SCHEMA', 5),
  w('limits-concurrency-huge', graph(agent('a'), 'a', 'limits:\n  concurrency: 100000\n'), 'SCHEMA', 5),
  w('context-size-huge', `name: w\nmodels:\n  default: { path: m.gguf, context_size: 99999999 }\n${ROLES}steps: []\n`, 'SCHEMA', 3),
  w('threads-huge', `name: w\nmodels:\n  default: { path: m.gguf, threads: 100000 }\n${ROLES}steps: []\n`, 'SCHEMA', 3),
  w('mixed-notation', `name: w\n${ROLES}steps: []\nnodes: []\n`, 'MIXED_NOTATION'),
  // Graph
  w('no-nodes', `name: w\n${ROLES}nodes: []\n`, 'NO_NODES'),
  w('duplicate-id', graph(agent('a') + agent('a')), 'DUPLICATE_ID', 8),
  w('unknown-role', graph('  - id: a\n    role: ghost\n    prompt: x\n'), 'UNKNOWN_ROLE', 6),
  w('missing-role', graph('  - id: a\n    prompt: x\n'), 'MISSING_ROLE', 5),
  w('unknown-tool', graph('  - id: a\n    tool: flux_capacitor\n    role: solver\n'), 'UNKNOWN_TOOL', 6),
  w('dangling-edge', graph(agent('a'), 'a', '') + 'edges:\n  - { from: a, to: nowhere }\n', 'DANGLING_EDGE'),
  w('unknown-input-node', graph(agent('a', '    inputs: { q: ghost.value }\n')), 'UNKNOWN_NODE', 8),
  w('self-loop', graph(agent('a', '    inputs: { q: a }\n')), 'UNBOUNDED_CYCLE', 8),
  w('answer-unknown-node', graph(agent('a'), 'ghost.answer'), 'BAD_ANSWER'),
  w('unknown-check', graph(agent('a', '    output: { checks: [is_prime] }\n')), 'UNKNOWN_CHECK', 8),
  w('unknown-model-ref', 'name: w\nroles:\n  solver: { kind: executor, model: nowhere }\nsteps: []\n', 'UNKNOWN_MODEL', 3),
  w('bad-condition', graph(agent('a') + agent('b'), 'b') + 'edges:\n  - { from: a, to: b, condition: "answer ==== 2" }\n', 'BAD_CONDITION', 13),
  w('tool-unknown-port', graph('  - id: c\n    tool: calculator\n    role: solver\n    inputs: { expr_typo: task.question }\n', 'c'), 'UNKNOWN_PORT', 8),
  w('tool-missing-port', graph('  - id: c\n    tool: calculator\n    role: solver\n', 'c'), 'MISSING_PORT'),
  // Templates
  w('template-unclosed-section', step('Q: {{#feedback}}x {{task.question}}'), 'BAD_TEMPLATE', 7),
  w('template-stray-close', step('Q: {{task.question}} }} {{/feedback}}'), 'BAD_TEMPLATE', 7),
  w('template-empty', step('Q: {{}}'), 'BAD_TEMPLATE', 7),
  w('template-triple-open', step('Q: {{{task.question}'), 'BAD_TEMPLATE', 7),
  w('template-unknown-root', step('Q: {{nothing.here}}'), 'BAD_TEMPLATE', 7),
  // Output schemas (JSON-schema keywords the grammar cannot enforce, contradictions)
  w('schema-if-then', step('Q', '{ type: object, if: { required: [a] }, then: { required: [answer] }, properties: { answer: { type: number } } }'), 'INVALID_SCHEMA', 9),
  w('schema-ref', step('Q', '{ type: object, properties: { answer: { $ref: "#/defs/n" } } }'), 'INVALID_SCHEMA', 9),
  w('schema-patternProperties', step('Q', '{ type: object, patternProperties: { "^a": { type: number } } }'), 'INVALID_SCHEMA', 9),
  w('schema-dependentRequired', step('Q', '{ type: object, properties: { answer: { type: number } }, dependentRequired: { answer: [b] } }'), 'INVALID_SCHEMA', 9),
  w('schema-unknown-type', step('Q', '{ type: object, properties: { answer: { type: decimal } } }'), 'INVALID_SCHEMA', 9),
  w('schema-const-vs-type', step('Q', '{ type: object, properties: { answer: { type: number, const: "x" } } }'), 'INVALID_SCHEMA', 9),
  w('schema-min-over-max', step('Q', '{ type: object, properties: { answer: { type: array, minItems: 4, maxItems: 1 } } }'), 'INVALID_SCHEMA', 9),
  w('schema-minimum-over-maximum', step('Q', '{ type: object, properties: { answer: { type: number, minimum: 5, maximum: 1 } } }'), 'INVALID_SCHEMA', 9),
  w('schema-not-object', step('Q', '[1, 2]'), 'SCHEMA', 9),
  w('schema-required-not-list', step('Q', '{ type: object, properties: { answer: { type: number } }, required: answer }'), 'INVALID_SCHEMA', 9),
  w('schema-enum-bool-vs-int', step('Q', '{ type: object, properties: { answer: { type: integer, enum: [true] } } }'), 'INVALID_SCHEMA', 9),
];
