/**
 * CLI entries: flags, datasets, databases, Who&When logs and OTLP/JSON imports, each given to
 * `main` (cli/main.ts) as argv with the files it reads.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { step } from './workflows.ts';
import type { CliEntry, Files } from './types.ts';

const WF = 'examples/gsm8k-single.yaml';
const RUN = ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}'];

/** A usage error (exit 2) for `argv`, whose message must name `place` (the flag). */
const usage = (id: string, argv: string[], place: string, spawn = false): CliEntry => ({ id: `flags/${id}`, via: 'cli', argv, code: 'USAGE', place, exit: 2, spawn });

const BAD_INTS: Array<[string, string]> = [['negative', '-1'], ['hex', '0x2'], ['float', '1.5'], ['exponent', '1e300'], ['word', 'ten'], ['empty', ''], ['space', ' 2'], ['plus', '+3'], ['octal-ish', '0o7'], ['underscore', '1_000'], ['over-max', '10001'], ['huge', '99999999999999999999']];

export const FLAGS: CliEntry[] = [
  ...BAD_INTS.map(([id, v]) => usage(`run-limit-${id}`, [...RUN, '--limit', v], '--limit', id === 'hex')),
  ...BAD_INTS.slice(0, 6).map(([id, v]) => usage(`run-seed-${id}`, [...RUN, '--seed', v], '--seed')),
  usage('run-limit-zero', [...RUN, '--limit', '0'], '--limit'),
  usage('run-offset-negative', [...RUN, '--offset', '-3'], '--offset'),
  usage('run-threads-zero', [...RUN, '--threads', '0'], '--threads'),
  usage('run-threads-100000', [...RUN, '--threads', '100000'], '--threads', true),
  usage('run-threads-float', [...RUN, '--threads', '2.5'], '--threads'),
  usage('run-context-zero', [...RUN, '--context-size', '0'], '--context-size'),
  usage('run-context-huge', [...RUN, '--context-size', '99999999'], '--context-size'),
  usage('run-card-budget-hex', [...RUN, '--card-budget', '0x10'], '--card-budget'),
  usage('run-distill-every-zero', [...RUN, '--distill-every', '0'], '--distill-every'),
  usage('run-unknown-flag', [...RUN, '--bogus'], '--bogus'),
  usage('run-unknown-flag-value', [...RUN, '--limits=3'], '--limits'),
  usage('run-missing-value', [...RUN, '--limit'], '--limit'),
  usage('run-gpu-bad', [...RUN, '--gpu', 'maybe'], '--gpu'),
  usage('run-role-model-no-equals', [...RUN, '--role-model', 'solver'], '--role-model'),
  usage('run-no-workflow', ['run', '--dataset', 'gsm8k'], 'workflow'),
  usage('rollouts-group-zero', ['rollouts', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}', '--group', '0'], '--group'),
  usage('rollouts-group-over', ['rollouts', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}', '--group', '65'], '--group'),
  usage('rollouts-temperature-word', ['rollouts', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}', '--temperature', 'hot'], '--temperature'),
  usage('train-loop-iterations-zero', ['train-loop', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}', '--iterations', '0'], '--iterations'),
  usage('train-loop-iterations-hex', ['train-loop', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}', '--iterations', '0x3'], '--iterations'),
  usage('blame-eval-runs-negative', ['blame-eval', WF, '--runs', '-2', '--db', '{db}'], '--runs'),
  usage('attribution-limit-float', ['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--limit', '2.0'], '--limit'),
  usage('attribution-max-chars-exp', ['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--max-chars', '3e2'], '--max-chars'),
  usage('export-format-unknown', ['export', 'exp-x', '--format', 'xml', '--db', '{db}'], '--format'),
  usage('unknown-command', ['frobnicate'], 'frobnicate', true),
];

const dataRun = (split = 'test') => ['run', WF, '--dataset', 'gsm8k', '--split', split, '--model', '{dir}/none.gguf', '--db', '{db}', '--data-dir', '{dir}/data'];
const ds = (id: string, bytes: string | Buffer, code: string, place: string, spawn = false): CliEntry => ({ id: `datasets/${id}`, via: 'cli', files: { 'data/gsm8k/test.jsonl': bytes }, argv: dataRun(), code, place, spawn });
const LINE = '{"question":"2+2?","answer":"#### 4"}';

export const DATASETS: CliEntry[] = [
  ds('empty', '', 'EMPTY_FILE', '{dir}/data/gsm8k/test.jsonl', true),
  ds('blank-lines', '\n \n\t\n', 'EMPTY_FILE', '{dir}/data/gsm8k/test.jsonl'),
  ds('not-json', 'question: 2+2\n', 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('bad-second-line', `${LINE}\n{"question": "x", \n`, 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:2'),
  ds('array-line', `${LINE}\n[1, 2]\n`, 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:2'),
  ds('missing-answer', '{"question":"2+2?"}\n', 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('missing-question', '{"answer":"#### 4"}\n', 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('answer-number', '{"question":"2+2?","answer":4}\n', 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('answer-no-marker', '{"question":"2+2?","answer":"four"}\n', 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('question-null', '{"question":null,"answer":"#### 4"}\n', 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('latin1', Buffer.concat([Buffer.from(`${LINE}\n{"question":"caf`), Buffer.from([0xe9]), Buffer.from('?","answer":"#### 1"}\n')]), 'NOT_UTF8', '{dir}/data/gsm8k/test.jsonl:2'),
  ds('utf16', Buffer.from(`\ufeff${LINE}\n`, 'utf16le'), 'NOT_UTF8', '{dir}/data/gsm8k/test.jsonl:1'),
  ds('nul-bytes', Buffer.concat([Buffer.from(LINE), Buffer.from([0, 0, 0]), Buffer.from('\n')]), 'BAD_LINE', '{dir}/data/gsm8k/test.jsonl:1'),
  { id: 'datasets/missing-file', via: 'cli', files: { 'data/gsm8k/.keep': '' }, argv: dataRun(), code: 'DATASET_NOT_FOUND', place: '{dir}/data/gsm8k/test.jsonl' },
  { id: 'datasets/unknown-split', via: 'cli', files: { 'data/gsm8k/test.jsonl': `${LINE}\n` }, argv: dataRun('validation'), code: 'UNKNOWN_SPLIT', place: 'validation' },
  { id: 'datasets/unknown-dataset', via: 'cli', argv: ['run', WF, '--dataset', 'nope', '--model', '{dir}/none.gguf', '--db', '{db}'], code: 'UNKNOWN_DATASET', place: 'nope' },
  { id: 'datasets/datawright-bad', via: 'cli', argv: ['run', WF, '--dataset', 'datawright:weird:2:gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}'], code: 'UNKNOWN_DATASET', place: 'datawright:weird:2:gsm8k' },
];

/** A SQLite file written by `build` (run on a fresh better-sqlite3 database). */
const sqlite = (build: (db: Database.Database) => void) => (ctx: { dir: string }) => {
  const file = `${ctx.dir}/made-${Math.random().toString(36).slice(2)}.db`;
  const db = new Database(file);
  build(db);
  db.close();
  return readFileSync(file);
};

const dbCase = (id: string, files: Files, argv: string[], code: string, place: string, spawn = false): CliEntry => ({ id: `databases/${id}`, via: 'cli', files, argv, code, place, spawn });
const NOT_SQLITE: Files = { 'x.db': 'this is a text file, not SQLite\n'.repeat(20) };
const FOREIGN: Files = { 'x.db': sqlite((db) => db.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers VALUES (1, 'a')")) };
const TOO_NEW: Files = { 'x.db': sqlite((db) => db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL); INSERT INTO schema_migrations VALUES (9999, 'future', 0)")) };
const TRUNCATED: Files = { 'x.db': (ctx) => readFileSync(ctx.db).subarray(0, 1500) };

export const DATABASES: CliEntry[] = [
  dbCase('not-sqlite-run', NOT_SQLITE, ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{dir}/x.db'], 'NOT_A_DATABASE', '{dir}/x.db', true),
  dbCase('not-sqlite-show', NOT_SQLITE, ['show', 'run-1', '--db', '{dir}/x.db'], 'NOT_A_DATABASE', '{dir}/x.db'),
  dbCase('not-sqlite-import', { ...NOT_SQLITE, 't.json': '{"resourceSpans": []}' }, ['import', '{dir}/t.json', '--db', '{dir}/x.db'], 'NO_SPANS', '{dir}/t.json'),
  dbCase('foreign-sqlite-run', FOREIGN, ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{dir}/x.db'], 'NOT_A_DATABASE', '{dir}/x.db'),
  dbCase('foreign-sqlite-compare', FOREIGN, ['compare', 'a', 'b', '--db', '{dir}/x.db'], 'NOT_A_DATABASE', '{dir}/x.db'),
  dbCase('too-new-run', TOO_NEW, ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{dir}/x.db'], 'SCHEMA_TOO_NEW', '{dir}/x.db'),
  dbCase('too-new-show', TOO_NEW, ['show', 'run-1', '--db', '{dir}/x.db'], 'SCHEMA_TOO_NEW', '{dir}/x.db'),
  dbCase('truncated-show', TRUNCATED, ['show', 'run-1', '--db', '{dir}/x.db'], 'NOT_A_DATABASE', '{dir}/x.db'),
  dbCase('missing-folder', {}, ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{dir}/no/such/folder/x.db'], 'CANNOT_OPEN', '{dir}/no/such/folder/x.db'),
  dbCase('is-a-folder', { 'x.db/.keep': '' }, ['show', 'run-1', '--db', '{dir}/x.db'], 'CANNOT_OPEN', '{dir}/x.db'),
  dbCase('show-unknown-run', {}, ['show', 'run-nope', '--db', '{db}'], 'NOT_FOUND', 'run-nope'),
  dbCase('resume-unknown', {}, ['resume', 'exp-nope', '--db', '{db}'], 'NOT_FOUND', 'exp-nope'),
  dbCase('export-unknown', {}, ['export', 'exp-nope', '--out', '{dir}/out', '--db', '{db}'], 'NOT_FOUND', 'exp-nope'),
  dbCase('fork-unknown-run', {}, ['fork', 'run-nope', '--node', 'solve', '--seed', '1', '--db', '{db}'], 'UNKNOWN_RUN', 'run-nope'),
  dbCase('counterfactual-unknown', {}, ['counterfactual', 'exp-nope', '--with', 'oracle', '--db', '{db}'], 'NOT_FOUND', 'exp-nope'),
  dbCase('annotate-unknown-run', {}, ['annotate', 'run-nope', '--tag', 'x', '--author', 'a', '--db', '{db}'], 'NOT_FOUND', 'run-nope'),
  dbCase('annotations-rm-unknown', {}, ['annotations', 'rm', 'ann-nope', '--db', '{db}'], 'NOT_FOUND', 'ann-nope'),
];


export const LOGS: CliEntry[] = [
  { id: 'logs/no-logs', via: 'cli', files: { 'ww/readme.txt': 'x' }, argv: ['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--path', '{dir}/ww'], code: 'NO_LOGS', place: '{dir}/ww' },
  { id: 'logs/no-folder', via: 'cli', argv: ['attribution-eval', '--dataset', 'who-and-when', '--method', 'surfaced', '--path', '{dir}/nowhere'], code: 'FOLDER_NOT_FOUND', place: '{dir}/nowhere' },
  { id: 'logs/unknown-method', via: 'cli', argv: ['attribution-eval', '--dataset', 'who-and-when', '--method', 'astrology', '--path', '{dir}/nowhere'], code: 'USAGE', exit: 2, place: 'astrology' },
];

const otlp = (id: string, text: string | Buffer, code: string, place: string, spawn = false): CliEntry => ({ id: `otlp/${id}`, via: 'cli', files: { 't.json': text }, argv: ['import', '{dir}/t.json', '--db', '{db}'], code, place, spawn });
const span = (over: Record<string, unknown> = {}) => ({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', name: 'agent', startTimeUnixNano: '1', endTimeUnixNano: '2', ...over });
const req = (spans: unknown[]) => JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans }] }] });

export const OTLP: CliEntry[] = [
  otlp('not-json', '{"resourceSpans": [', 'BAD_JSON', '{dir}/t.json', true),
  otlp('second-line-not-json', `${req([span()])}\n{oops\n`, 'BAD_JSON', 'line 2'),
  otlp('empty-object', '{}', 'NO_SPANS', '{dir}/t.json'),
  otlp('no-spans', req([]), 'NO_SPANS', '{dir}/t.json'),
  otlp('resource-spans-string', '{"resourceSpans": "x"}', 'BAD_OTLP', 'resourceSpans'),
  otlp('span-not-object', req([5]), 'BAD_OTLP', 'spans[0]'),
  otlp('trace-id-short', req([span({ traceId: 'abc' })]), 'BAD_OTLP', 'traceId'),
  otlp('span-id-missing', req([span({ spanId: undefined })]), 'BAD_OTLP', 'spanId'),
  otlp('start-not-number', req([span({ startTimeUnixNano: 'yesterday' })]), 'BAD_OTLP', 'startTimeUnixNano'),
  otlp('name-number', req([span({ name: 7 })]), 'BAD_OTLP', 'name'),
  otlp('attributes-not-list', req([span({ attributes: { a: 1 } })]), 'BAD_OTLP', 'attributes'),
  otlp('status-code-word', req([span({ status: { code: 'bad' } })]), 'BAD_OTLP', 'status'),
  otlp('latin1', Buffer.concat([Buffer.from('{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "caf'), Buffer.from([0xe9]), Buffer.from('"}]}]}]}')]), 'BAD_FILE', '{dir}/t.json:1:60: not UTF-8 text (byte 0xe9'),
  otlp('deep-json', `${'['.repeat(50000)}${']'.repeat(50000)}`, 'BAD_OTLP', '{dir}/t.json'),
  { id: 'otlp/missing-file', via: 'cli', argv: ['import', '{dir}/nothing.json', '--db', '{db}'], code: 'NOT_FOUND', place: '{dir}/nothing.json' },
];

/** Workflow files given to the CLI itself (the loader's entries run in process, see workflows.ts). */
export const CLI_WORKFLOWS: CliEntry[] = [
  { id: 'cli-workflow/unclosed-template', via: 'cli', files: { 'w.yaml': step('Q: {{task.question') }, argv: ['run', '{dir}/w.yaml', '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}'], code: 'BAD_TEMPLATE', place: '{dir}/w.yaml:7', spawn: true },
  { id: 'cli-workflow/missing', via: 'cli', argv: ['run', '{dir}/nowhere.yaml', '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}'], code: 'FILE_NOT_FOUND', place: '{dir}/nowhere.yaml' },
  { id: 'cli-workflow/latin1-rollouts', via: 'cli', files: { 'w.yaml': Buffer.concat([Buffer.from('name: caf'), Buffer.from([0xe9]), Buffer.from('\nsteps: []\n')]) }, argv: ['rollouts', '{dir}/w.yaml', '--dataset', 'gsm8k', '--group', '2', '--model', '{dir}/none.gguf', '--db', '{db}'], code: 'NOT_UTF8', place: '{dir}/w.yaml:1' },
  { id: 'cli-workflow/missing-model', via: 'cli', argv: ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/none.gguf', '--db', '{db}', '--data-dir', '{dir}/data'], files: { 'data/gsm8k/test.jsonl': `${LINE}\n` }, code: 'MODEL_NOT_FOUND', place: '{dir}/none.gguf' },
  { id: 'cli-workflow/model-not-gguf', via: 'cli', files: { 'm.gguf': 'not a model at all', 'data/gsm8k/test.jsonl': `${LINE}\n` }, argv: ['run', WF, '--dataset', 'gsm8k', '--model', '{dir}/m.gguf', '--db', '{db}', '--data-dir', '{dir}/data'], code: 'MODEL_INVALID', place: '{dir}/m.gguf' },
];

export const CLI_ENTRIES: CliEntry[] = [...FLAGS, ...DATASETS, ...DATABASES, ...LOGS, ...OTLP, ...CLI_WORKFLOWS];
