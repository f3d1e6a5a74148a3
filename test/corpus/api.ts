/**
 * Lab API payloads over HTTP to the browser host (`flowlab serve`'s server): wrong types,
 * missing and unknown fields, out-of-range numbers, paths outside the model folders, broken
 * workflows, bodies that are not JSON. `{dir}` is the served lab's folder (models in `{dir}/models`).
 */
import type { ApiEntry } from './types.ts';

const WORKFLOW = 'name: one\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: "Q: {{task.question}}"\n    output: { schema: { type: object, properties: { answer: { type: number } }, required: [answer] } }\nanswer: solve.answer\n';
const RUN = { workflowText: WORKFLOW, dataset: 'gsm8k', split: 'test', limit: 1, seed: 1, threads: 1, models: { default: '{dir}/models/tiny.gguf' } };
const LOOP = { workflowText: WORKFLOW, dataset: 'gsm8k', models: { default: '{dir}/models/tiny.gguf' } };

const bad = (id: string, method: string, payload: unknown, field: string | undefined, place: string, status = 400, code = 'BAD_REQUEST'): ApiEntry => ({ id: `api/${id}`, via: 'api', method, payload, status, code, field, place });

export const API: ApiEntry[] = [
  bad('getExperiment-no-id', 'getExperiment', {}, 'id', '"id"'),
  bad('getExperiment-id-number', 'getExperiment', { id: 5 }, 'id', '"id"'),
  bad('getExperiment-extra', 'getExperiment', { id: 'x', drop: 'table' }, 'drop', '"drop"'),
  bad('getExperiment-unknown', 'getExperiment', { id: 'exp-nope' }, undefined, 'exp-nope', 404, 'NOT_FOUND'),
  bad('listRuns-long-id', 'listRuns', { experimentId: 'x'.repeat(5000) }, 'experimentId', '"experimentId"'),
  bad('getRunTrace-unknown', 'getRunTrace', { runId: 'run-nope' }, undefined, 'run-nope', 404, 'NOT_FOUND'),
  bad('payload-array', 'listExperiments', [1, 2], undefined, 'listExperiments'),
  bad('payload-string', 'getExperiment', 'exp-1', undefined, 'getExperiment'),
  bad('validate-text-null', 'validateWorkflow', { text: null }, 'text', '"text"'),
  bad('addModel-relative', 'addModel', { path: 'models/x.gguf' }, 'path', '"path"'),
  bad('addModel-etc-shadow', 'addModel', { path: '/etc/shadow' }, 'path', 'outside', 403, 'FORBIDDEN'),
  bad('addModel-dotdot', 'addModel', { path: '{dir}/models/../../../etc/passwd' }, 'path', 'outside', 403, 'FORBIDDEN'),
  bad('addModel-missing', 'addModel', { path: '{dir}/models/nothing.gguf' }, 'path', '{dir}/models/nothing.gguf'),
  bad('addModel-not-gguf', 'addModel', { path: '{dir}/models/text.gguf' }, 'path', '{dir}/models/text.gguf'),
  bad('addModel-nan', 'addModel', { path: '{dir}/models/nan.gguf' }, 'path', 'non-finite weight'),
  bad('testModel-empty-prompt', 'testModel', { path: '{dir}/models/tiny.gguf', prompt: '' }, 'prompt', '"prompt"'),
  bad('testModel-tokens-over', 'testModel', { path: '{dir}/models/tiny.gguf', prompt: 'x', maxTokens: 100000 }, 'maxTokens', '"maxTokens"'),
  bad('testModel-truncated', 'testModel', { path: '{dir}/models/cut.gguf', prompt: 'x' }, 'path', '{dir}/models/cut.gguf'),
  bad('startGeneration-tokens-over', 'startGeneration', { model: '{dir}/models/tiny.gguf', prompt: 'x', maxTokens: 4097 }, 'maxTokens', '"maxTokens"'),
  bad('startGeneration-top-p-over', 'startGeneration', { model: '{dir}/models/tiny.gguf', prompt: 'x', maxTokens: 8, topP: 2 }, 'topP', '"topP"'),
  bad('startGeneration-outside', 'startGeneration', { model: '/etc/x.gguf', prompt: 'x', maxTokens: 8 }, 'model', 'outside', 403, 'FORBIDDEN'),
  bad('startGeneration-not-gguf', 'startGeneration', { model: '{dir}/models/text.gguf', prompt: 'x', maxTokens: 8 }, 'model', '{dir}/models/text.gguf'),
  bad('startGeneration-endpoint-key', 'startGeneration', { model: 'openai:https://api.example.org/v1#m&key=HOME', prompt: 'x', maxTokens: 8 }, 'model', 'API keys', 403, 'FORBIDDEN'),
  bad('startRun-limit-zero', 'startRun', { ...RUN, limit: 0 }, 'limit', '"limit"'),
  bad('startRun-limit-float', 'startRun', { ...RUN, limit: 1.5 }, 'limit', '"limit"'),
  bad('startRun-limit-string', 'startRun', { ...RUN, limit: '0x2' }, 'limit', '"limit"'),
  bad('startRun-limit-huge', 'startRun', { ...RUN, limit: 1e300 }, 'limit', '"limit"'),
  bad('startRun-seed-negative', 'startRun', { ...RUN, seed: -1 }, 'seed', '"seed"'),
  bad('startRun-threads-over', 'startRun', { ...RUN, threads: 100000 }, 'threads', '"threads"'),
  bad('startRun-context-over', 'startRun', { ...RUN, contextSize: 1 << 30 }, 'contextSize', '"contextSize"'),
  bad('startRun-temperature-nan', 'startRun', { ...RUN, kind: 'rollouts', temperature: 'NaN' }, 'temperature', '"temperature"'),
  bad('startRun-group-over', 'startRun', { ...RUN, kind: 'rollouts', group: 65 }, 'group', '"group"'),
  bad('startRun-kind-unknown', 'startRun', { ...RUN, kind: 'exploit' }, 'kind', '"kind"'),
  bad('startRun-workflow-empty', 'startRun', { ...RUN, workflowText: '' }, 'workflowText', '"workflowText"'),
  bad('startRun-workflow-broken', 'startRun', { ...RUN, workflowText: 'name: [\n' }, 'workflowText', '<workflow>:2:1'),
  bad('startRun-workflow-unclosed', 'startRun', { ...RUN, workflowText: WORKFLOW.replace('{{task.question}}', '{{task.question') }, 'workflowText', 'never closed'),
  bad('startRun-workflow-deep', 'startRun', { ...RUN, workflowText: `name: d\nsteps: []\nx: ${'['.repeat(20000)}${']'.repeat(20000)}\n` }, 'workflowText', 'nested deeper'),
  bad('startRun-workflow-model-escape', 'startRun', { ...RUN, workflowText: `models:\n  default: { path: ../../../../../etc/passwd }\n${WORKFLOW}`, models: {} }, 'workflowText', 'outside', 403, 'FORBIDDEN'),
  bad('startRun-dataset-unknown', 'startRun', { ...RUN, dataset: 'nope' }, 'dataset', 'nope'),
  bad('startRun-split-unknown', 'startRun', { ...RUN, split: 'validation' }, 'split', 'validation'),
  bad('startRun-model-outside', 'startRun', { ...RUN, models: { default: '/etc/hostname' } }, 'models.default', 'outside', 403, 'FORBIDDEN'),
  bad('startRun-model-nan', 'startRun', { ...RUN, models: { default: '{dir}/models/nan.gguf' } }, 'models.default', 'non-finite weight'),
  bad('startRun-inject-bad', 'startRun', { ...RUN, inject: ['solver=explode@2'] }, 'inject.0', 'solver=explode@2'),
  bad('startRun-role-versions-unknown', 'startRun', { ...RUN, roleVersions: { solver: 'wv-nope' } }, 'roleVersions.solver', 'wv-nope'),
  bad('resumeRun-unknown', 'resumeRun', { experimentId: 'exp-nope' }, undefined, 'exp-nope', 404, 'NOT_FOUND'),
  bad('cancelRun-unknown', 'cancelRun', { experimentId: 'exp-nope' }, undefined, 'exp-nope', 404, 'NOT_FOUND'),
  bad('startTrainLoop-lr-one', 'startTrainLoop', { ...LOOP, lr: 1 }, 'lr', '"lr"'),
  bad('startTrainLoop-temperature-zero', 'startTrainLoop', { ...LOOP, temperature: 0 }, 'temperature', '"temperature"'),
  bad('startTrainLoop-iterations-zero', 'startTrainLoop', { ...LOOP, iterations: 0 }, 'iterations', '"iterations"'),
  bad('startTrainLoop-roles-empty', 'startTrainLoop', { ...LOOP, roles: [] }, 'roles', '"roles"'),
  bad('diffRuns-missing-b', 'diffRuns', { a: 'r1' }, 'b', '"b"'),
  bad('getStudy-unknown', 'getStudy', { studyId: 'st-nope' }, undefined, 'st-nope', 404, 'NOT_FOUND'),
  { id: 'api/unknown-method', via: 'api', method: 'dropDatabase', payload: {}, status: 404, code: 'NOT_FOUND', place: 'dropDatabase' },
  { id: 'api/body-not-json', via: 'api', method: 'getExperiment', raw: '{"id": ', status: 400, code: 'BAD_REQUEST', place: 'getExperiment' },
  // Issue 30: refused as not UTF-8 (it was decoded with a replacement character and looked up).
  { id: 'api/body-latin1', via: 'api', method: 'getExperiment', raw: Buffer.concat([Buffer.from('{"id": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]), status: 400, code: 'BAD_REQUEST', place: 'not UTF-8 at byte offset 11' },
  { id: 'api/body-deep', via: 'api', method: 'getExperiment', raw: `${'['.repeat(200000)}${']'.repeat(200000)}`, status: 400, code: 'BAD_REQUEST', place: 'getExperiment' },
  { id: 'api/body-too-large', via: 'api', method: 'validateWorkflow', raw: `{"text": "${'x'.repeat(9 * 1024 * 1024)}"}`, status: 413, code: 'BAD_REQUEST', place: 'validateWorkflow' },
  { id: 'api/no-token', via: 'api', method: 'listExperiments', payload: {}, headers: { 'x-flowlab-token': 'wrong' }, status: 401, code: 'FORBIDDEN', place: 'token' },
  bad('saveWorkflowFile-dotdot', 'saveWorkflowFile', { name: '../escape.yaml', text: 'x' }, 'name', '"name"'),
  bad('saveWorkflowFile-absolute', 'saveWorkflowFile', { name: '/etc/cron.d/x.yaml', text: 'x' }, 'name', 'not a path'),
  bad('saveWorkflowFile-not-yaml', 'saveWorkflowFile', { name: 'run.sh', text: 'x' }, 'name', '.yaml or .yml'),
  bad('readWorkflowFile-missing', 'readWorkflowFile', { name: 'nope.yaml' }, 'name', 'nope.yaml', 404, 'NOT_FOUND'),
  { id: 'api/foreign-origin', via: 'api', method: 'listExperiments', payload: {}, headers: { origin: 'http://evil.example' }, status: 403, code: 'FORBIDDEN', place: 'rigin' },
];
