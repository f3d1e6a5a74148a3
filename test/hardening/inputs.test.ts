/**
 * Malformed inputs are refused where they enter, with a code and a message naming the file and
 * the place. Each table is (input, expected code, what the message must say), ready for a
 * standing corpus to run: `WORKFLOW_INPUTS` (workflow text), `DATASET_INPUTS` (a GSM8K split
 * file's bytes), `EXTRACTIONS` (a model answer and the number the GSM8K grader must read).
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../../cli/main.ts';
import { openStore, StoreError } from '../../core/store/index.ts';
import { createGsm8kDataset, DatasetError, extractFinalNumber } from '../../core/tasks/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile, SpecError, type SpecIssueCode } from '../../core/workflow/index.ts';
import { capture, newExperiment, scratchDir } from '../fixtures.ts';

const dir = scratchDir('inputs');

const step = (prompt: string, schema = '{ type: object, properties: { answer: { type: number } }, required: [answer] }') =>
  `name: w\nroles:\n  solver: { kind: executor, instructions: Solve. }\nsteps:\n  - id: solve\n    role: solver\n    prompt: ${JSON.stringify(prompt)}\n    output:\n      schema: ${schema}\nanswer: solve.answer\n`;

/** (name, file bytes, code, line, message part). */
export const WORKFLOW_INPUTS: ReadonlyArray<{ name: string; bytes: Buffer; code: SpecIssueCode; line?: number; message: string | RegExp }> = [
  { name: 'latin1.yaml', bytes: Buffer.concat([Buffer.from('name: caf'), Buffer.from([0xe9]), Buffer.from('\nsteps: []\n')]), code: 'NOT_UTF8', line: 1, message: 'not UTF-8 text (byte 0xe9 at byte offset 9)' },
  { name: 'latin1-line3.yaml', bytes: Buffer.concat([Buffer.from(step('Q: {{task.question}}').split('\n').slice(0, 2).join('\n') + '\n# na'), Buffer.from([0xef, 0x28]), Buffer.from('ve\n')]), code: 'NOT_UTF8', line: 3, message: 'not UTF-8 text (byte 0xef at byte offset' },
  { name: 'deep-flow.yaml', bytes: Buffer.from(`name: d\nsteps: []\nx: ${'['.repeat(20000)}${']'.repeat(20000)}\n`), code: 'TOO_DEEP', line: 3, message: 'nested deeper than 64 levels, the most a workflow may have' },
  { name: 'deep-block.yaml', bytes: Buffer.from(`name: d\nsteps: []\nx:\n${Array.from({ length: 3000 }, (_, i) => `${' '.repeat(i + 1)}a:`).join('\n')}\n`), code: 'TOO_DEEP', message: 'nested deeper than 64 levels' },
  { name: 'unclosed.yaml', bytes: Buffer.from(step('Question: {{task.question\nAnswer as JSON:')), code: 'BAD_TEMPLATE', line: 7, message: 'placeholder "{{task.question\\nAnswer as JSON:" at offset 10 is never closed with }}' },
  { name: 'not-a-placeholder.yaml', bytes: Buffer.from(step('Question: {{task question}}')), code: 'BAD_TEMPLATE', message: '"{{task question}}" at offset 10 is not a placeholder' },
  { name: 'allOf.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ allOf: [{ type: object, properties: { answer: { type: number } } }, { required: [answer] }] }')), code: 'INVALID_SCHEMA', line: 9, message: '"allOf" cannot be enforced by the decoding grammar' },
  { name: 'anyOf.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { anyOf: [{ type: number }, { type: string }] } } }')), code: 'INVALID_SCHEMA', message: '"anyOf" cannot be enforced' },
  { name: 'not.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { type: number, not: { const: 0 } } } }')), code: 'INVALID_SCHEMA', message: '"not" cannot be enforced' },
  { name: 'enum-vs-type.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { type: string, enum: [1, 2] } } }')), code: 'INVALID_SCHEMA', message: 'the schema contradicts itself: enum value 1 is not of type string' },
  { name: 'empty-enum.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { enum: [] } } }')), code: 'INVALID_SCHEMA', message: /enum|must NOT have fewer than 1 items/ },
  { name: 'min-over-max.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { type: string, minLength: 5, maxLength: 2 } } }')), code: 'INVALID_SCHEMA', message: 'minLength 5 is above maxLength 2' },
  { name: 'const-vs-enum.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { type: number, const: 3, enum: [1, 2] } } }')), code: 'INVALID_SCHEMA', line: 9, message: 'const 3 is not one of its enum values' },
  { name: 'type-vs-oneOf.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { answer: { type: string, oneOf: [{ type: number }, { type: boolean }] } } }')), code: 'INVALID_SCHEMA', line: 9, message: 'type string matches no oneOf branch (their types: number; boolean)' },
  { name: 'required-forbidden.yaml', bytes: Buffer.from(step('Q: {{task.question}}', '{ type: object, properties: { a: { type: number } }, required: [answer], additionalProperties: false }')), code: 'INVALID_SCHEMA', message: '"answer" is required but additionalProperties is false' },
];

describe('workflow files', () => {
  for (const input of WORKFLOW_INPUTS) {
    it(`${input.name}: ${input.code}`, () => {
      const file = path.join(dir(), input.name);
      writeFileSync(file, input.bytes);
      let err: unknown;
      try {
        loadWorkflowFile(file, { tools: defaultTools() });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(SpecError);
      const issue = (err as SpecError).issues.find((i) => i.code === input.code);
      expect(issue, JSON.stringify((err as SpecError).issues)).toBeDefined();
      expect(issue!.file).toBe(file);
      if (input.line !== undefined) expect(issue!.line).toBe(input.line);
      if (typeof input.message === 'string') expect(issue!.message).toContain(input.message);
      else expect(issue!.message).toMatch(input.message);
    });
  }

  it('YAML numbers that lose what was written are warnings with their line; post-validated keywords too', () => {
    const file = path.join(dir(), 'lossy.yaml');
    writeFileSync(file, `version: 1.10\n${step('Q: {{task.question}}', '{ type: object, properties: { answer: { type: number, minimum: 0 }, v: { enum: [1.10, 1.20] } }, required: [answer] }')}`);
    const w = loadWorkflowFile(file, { tools: defaultTools() });
    expect(w.warnings.map((x) => [x.code, x.line, x.message])).toEqual([
      ['LOSSY_NUMBER', 1, '1.10 reads as the number 1.1, not as written; quote it ("1.10") to keep it as text'],
      ['LOSSY_NUMBER', 10, '1.10 reads as the number 1.1, not as written; quote it ("1.10") to keep it as text'],
      ['LOSSY_NUMBER', 10, '1.20 reads as the number 1.2, not as written; quote it ("1.20") to keep it as text'],
      ['UNENFORCED_KEYWORD', 10, `output schema: "minimum" is not enforced while decoding; outputs are checked against it afterwards, and one that breaks it fails the node's contract`],
    ]);
    expect(w.warnings[0]!.path).toEqual(['version']);
  });

  it('the CLI prints the warnings with file and line', async () => {
    const file = path.join(dir(), 'lossy-cli.yaml');
    writeFileSync(file, `version: 1.10\n${step('Q: {{task.question}}')}`);
    const io = capture();
    await main(['run', file, '--dataset', 'gsm8k', '--model', '/nonexistent/m.gguf', '--db', path.join(dir(), 'w.db'), '--data-dir', path.join(dir(), 'nodata')], io);
    expect(io.err).toContain(`Warning: ${file}:1:10 at version: 1.10 reads as the number 1.1, not as written; quote it ("1.10") to keep it as text [LOSSY_NUMBER]`);
  });
});

/** (name, test.jsonl bytes, code, where, message part). */
export const DATASET_INPUTS: ReadonlyArray<{ name: string; bytes: Buffer; code: string; where: (file: string) => string; message: string }> = [
  { name: 'empty', bytes: Buffer.alloc(0), code: 'EMPTY_FILE', where: (f) => f, message: "the gsm8k split 'test' file is empty (no records)" },
  { name: 'blank-lines', bytes: Buffer.from('\n\n  \n'), code: 'EMPTY_FILE', where: (f) => f, message: 'is empty (no records)' },
  { name: 'latin1', bytes: Buffer.concat([Buffer.from('{"question":"2+2?","answer":"#### 4"}\n{"question":"caf'), Buffer.from([0xe9]), Buffer.from('?","answer":"#### 1"}\n')]), code: 'NOT_UTF8', where: (f) => `${f}:2`, message: ':2:17: not UTF-8 text (byte 0xe9 at byte offset 54)' },
];

describe('dataset files', () => {
  for (const input of DATASET_INPUTS) {
    it(`${input.name}: ${input.code} naming the file`, () => {
      const data = path.join(dir(), `data-${input.name}`);
      mkdirSync(path.join(data, 'gsm8k'), { recursive: true });
      const file = path.join(data, 'gsm8k', 'test.jsonl');
      writeFileSync(file, input.bytes);
      let err: unknown;
      try {
        createGsm8kDataset(data).load({ split: 'test', limit: 10 });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(DatasetError);
      const d = err as DatasetError;
      expect([d.code, d.where]).toEqual([input.code, input.where(file)]);
      expect(d.message).toContain(file);
      expect(d.message).toContain(input.message);
    });
  }
});

/** (model answer, the number the GSM8K extraction must read). */
export const EXTRACTIONS: ReadonlyArray<[string, number]> = [
  ['\\boxed{9{,}500}', 9500],
  ['The answer is $9{,}500.', 9500],
  ['\\boxed{8,000}', 8000],
  ['so the total is $\\boxed{8{,}000}$', 8000],
  ['about 9\\,500 people', 9500],
  ['\\boxed{1{,}234{,}567}', 1234567],
  ['the list 1{,}2', 2],
];

describe('GSM8K extraction', () => {
  for (const [text, want] of EXTRACTIONS) it(`${JSON.stringify(text)} -> ${want}`, () => expect(extractFinalNumber(text)).toBe(want));
});

/** Whether this process can make a file unwritable to itself (root ignores permission bits; chattr needs a capability). */
function makeReadOnly(file: string): boolean {
  if (process.getuid?.() !== 0) {
    chmodSync(file, 0o444);
    return true;
  }
  try {
    execFileSync('chattr', ['+i', file], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('databases and --out', () => {
  it('a read-only database: READ_ONLY naming the file for a command that writes; reading still works', async () => {
    const db = path.join(dir(), 'ro.db');
    const s = openStore(db);
    s.close();
    if (!makeReadOnly(db)) return void console.log('[hardening] skipping the read-only database check: cannot make a file read-only here');
    try {
      let err: unknown;
      try {
        openStore(db);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('READ_ONLY');
      expect((err as StoreError).message).toContain(`database ${db} is read-only`);
      const io = capture();
      expect(await main(['run', 'examples/gsm8k-single.yaml', '--dataset', 'gsm8k', '--model', '/nonexistent/m.gguf', '--db', db], io)).toBe(1);
      expect(io.err).toContain(`database ${db} is read-only`);
      expect(io.err).toContain('[READ_ONLY]');
      expect(io.err).not.toContain('attempt to write a readonly database');
      openStore(db, { mustExist: true }).close(); // reading commands open it
    } finally {
      try {
        execFileSync('chattr', ['-i', db], { stdio: 'ignore' });
      } catch {
        chmodSync(db, 0o644);
      }
    }
  });

  it('export --out at an existing file: BAD_OUT naming it, not a raw EEXIST', async () => {
    const db = path.join(dir(), 'out.db');
    const store = openStore(db);
    const exp = store.createExperiment(newExperiment({ kind: 'rollouts', limit: 1, config: { rollouts: { group: 1, temperature: 0.8, mode: 'single', learningRoles: [] } } }));
    store.close();
    const file = path.join(dir(), 'existing.txt');
    writeFileSync(file, 'x');
    for (const argv of [['export', exp.id, '--out', file], ['export', exp.id, '--out', path.join(file, 'sub'), '--format', 'csv'], ['export', exp.id, '--out', dir(), '--format', 'otlp-json']]) {
      const io = capture();
      expect(await main([...argv, '--db', db], io), argv.join(' ')).toBe(1);
      expect(io.err).toContain('[BAD_OUT]');
      expect(io.err).not.toMatch(/EEXIST|ENOTDIR|EISDIR/);
    }
    const io = capture();
    await main(['export', exp.id, '--out', file, '--db', db], io);
    expect(io.err).toBe(`flowlab export: --out ${file} is an existing file, not a folder: this export writes several files into a folder; pass a folder path [BAD_OUT]\n`);
  });
});

