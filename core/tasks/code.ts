/**
 * Code-generation datasets graded by running their unit tests in a `CodeSandbox`:
 * HumanEval (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", section 2:
 * program = prompt + completion, then the task's `check(entry_point)`) and sanitized MBPP
 * (Austin et al. 2021, "Program Synthesis with Large Language Models", section 2.1: the
 * hand-verified subset; a solution passes when its three `assert` tests pass).
 *
 * Files: `<dataDir>/humaneval/HumanEval.jsonl` (`{task_id, prompt, entry_point,
 * canonical_solution, test}`) and `<dataDir>/mbpp/sanitized-mbpp.json` (a JSON array of
 * `{task_id, prompt, code, test_imports, test_list}`). A task's `expected` is the reference
 * solution (HumanEval: the canonical body; MBPP: the reference code); graders never show it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { CodeSandbox, SandboxResult } from '../sandbox/index.ts';
import { DatasetError } from './errors.ts';
import type { Dataset, Grade, Grader, LoadOptions, Task } from './types.ts';

/** HumanEval has one split of 164 problems. */
export const HUMANEVAL_SPLITS = ['test'] as const;

/**
 * Sanitized-MBPP splits by upstream task id (the MBPP README): `test` 11-510, `prompt` 1-10
 * (few-shot examples), `validation` 511-600, `train` 601-974; `all` is the whole file (427).
 */
export const MBPP_SPLITS = ['test', 'train', 'validation', 'prompt', 'all'] as const;

const MBPP_RANGES: Record<string, [number, number]> = { test: [11, 510], prompt: [1, 10], validation: [511, 600], train: [601, 974], all: [1, Infinity] };

/** Limits each graded program runs under (HumanEval's harness uses 3 s; Pyodide is slower). */
export const CODE_GRADE_TIMEOUT_MS = 10_000;

/**
 * The Python source in a model's answer: the answer text (a string, or an object's `code` or
 * `answer` field); inside it, the first ```python fenced block, else the first fenced block,
 * else the whole text. Null when there is no text or it is blank.
 */
export function extractCode(answer: unknown): string | null {
  let text: unknown = answer;
  if (text !== null && typeof text === 'object' && !Array.isArray(text)) {
    const o = text as Record<string, unknown>;
    text = typeof o.code === 'string' ? o.code : o.answer;
  }
  if (typeof text !== 'string') return null;
  const fences = [...text.matchAll(/```([\w+-]*)[^\n]*\n([\s\S]*?)(?:```|$)/g)];
  const py = fences.find((m) => /^py(thon)?3?$/i.test(m[1] ?? ''));
  const code = (py ?? fences[0])?.[2] ?? text;
  return code.trim() === '' ? null : code;
}

/**
 * The HumanEval program for a completion: `prompt + code` when the code continues the body;
 * when the code defines `entry_point` itself, the prompt's function is closed with `pass` and
 * the code's definition replaces it (so the prompt's imports and helpers stay). Then the task's
 * tests and `check(<entry_point>)`.
 */
export function humanEvalProgram(task: Task, code: string): string {
  const { prompt, test, entry_point } = task.meta as { prompt: string; test: string; entry_point: string };
  const defines = new RegExp(`^\\s*def\\s+${entry_point}\\s*\\(`, 'm').test(code);
  const body = defines ? `${prompt}    pass\n\n${code}` : `${prompt}${code}`;
  return `${body}\n\n${test}\n\ncheck(${entry_point})\n`;
}

/** The MBPP program: the code, the task's `test_imports`, then its `assert` lines. */
export function mbppProgram(task: Task, code: string): string {
  const { test_imports, test_list } = task.meta as { test_imports: string[]; test_list: string[] };
  return `${code}\n\n${test_imports.join('\n')}\n${test_list.join('\n')}\n`;
}

/**
 * A grader that runs `program(task, code)` in the sandbox: score 1 when the run ends `ok`
 * (every test passed), else 0 with the run's status and exception in `reason`. Without a
 * sandbox it throws `DatasetError` `NO_SANDBOX` (a set-up error, not a wrong answer).
 * `withMeta` gives a task its `meta` (the tests) when it comes back from the store without it
 * (experiments store only a task's id, input and expected answer).
 */
export function sandboxGrader(name: string, sandbox: CodeSandbox | undefined, program: (task: Task, code: string) => string, withMeta: (task: Task) => Task = (t) => t): Grader {
  return {
    async grade(answer: unknown, task: Task): Promise<Grade> {
      const expected = task.expected;
      const code = extractCode(answer);
      if (code === null) return { score: 0, correct: false, extracted: null, expected, reason: 'there is no code in the answer' };
      if (!sandbox) {
        throw new DatasetError('NO_SANDBOX', `${name} is graded by running code, but no code sandbox was given (DatasetLocation.sandbox)`, task.id);
      }
      const result = await sandbox.run({ code: program(withMeta(task), code), timeoutMs: CODE_GRADE_TIMEOUT_MS });
      const correct = result.status === 'ok';
      return { score: correct ? 1 : 0, correct, extracted: code, expected, reason: describeRun(result) };
    },
  };
}

/** One line on how a graded run ended, e.g. `tests passed (12 ms)` or `error: AssertionError (8 ms)`. */
export function describeRun(r: SandboxResult): string {
  const ms = `${Math.round(r.ms)} ms`;
  if (r.status === 'ok') return `tests passed (${ms})`;
  const what = r.error ? `${r.error.type}${r.error.message && r.error.message !== r.error.type ? `: ${r.error.message.split('\n').pop()!.slice(0, 160)}` : ''}` : '';
  return `${r.status}${what ? `: ${what}` : ''} (${ms})`;
}

/** The HumanEval dataset over `dataDir` (holding `humaneval/`, or that folder itself). */
export function createHumanEvalDataset(dataDir: string, sandbox?: CodeSandbox): Dataset {
  return {
    name: 'humaneval',
    splits: [...HUMANEVAL_SPLITS],
    grader: sandboxGrader('humaneval', sandbox, humanEvalProgram, metaLookup('humaneval', () => readHumanEval(dataDir))),
    load: (opts) => slice('humaneval', HUMANEVAL_SPLITS, opts, () => readHumanEval(dataDir)),
  };
}

/** The sanitized MBPP dataset over `dataDir` (holding `mbpp/`, or that folder itself). */
export function createMbppDataset(dataDir: string, sandbox?: CodeSandbox): Dataset {
  return {
    name: 'mbpp',
    splits: [...MBPP_SPLITS],
    grader: sandboxGrader('mbpp', sandbox, mbppProgram, metaLookup('mbpp', (split) => readMbpp(dataDir, split))),
    load: (opts) => slice('mbpp', MBPP_SPLITS, opts, () => readMbpp(dataDir, opts.split)),
  };
}

/**
 * A task with its `meta`: as given when it has one, else the dataset's task of the same id
 * (`<name>/<split>/<index>`), read from the file once per split.
 * @throws DatasetError `BAD_LINE` when the id is not one of the dataset's.
 */
function metaLookup(name: string, read: (split: string) => Task[]): (task: Task) => Task {
  const bySplit = new Map<string, Map<string, Task>>();
  return (task) => {
    if (task.meta) return task;
    const split = task.id.split('/')[1] ?? '';
    let byId = bySplit.get(split);
    if (!byId) {
      byId = new Map(read(split).map((t) => [t.id, t]));
      bySplit.set(split, byId);
    }
    const found = byId.get(task.id);
    if (!found) throw new DatasetError('BAD_LINE', `${name} has no task with id '${task.id}'`, task.id);
    return { ...task, meta: found.meta };
  };
}

function slice(name: string, splits: readonly string[], opts: LoadOptions, read: () => Task[]): Task[] {
  if (!splits.includes(opts.split)) {
    throw new DatasetError('UNKNOWN_SPLIT', `${name} has no split '${opts.split}'; valid splits: ${splits.join(', ')}`, opts.split);
  }
  const offset = count('offset', opts.offset ?? 0);
  const limit = opts.limit === undefined ? Infinity : count('limit', opts.limit);
  return read().slice(offset, offset + limit);
}

function count(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new DatasetError('BAD_OPTIONS', `${name} must be a non-negative integer, got ${String(n)}`);
  return n;
}

/** `<dataDir>/<folder>/<file>`, or `<dataDir>/<file>` when dataDir is that folder. */
function findFile(dataDir: string, folder: string, file: string, name: string): string {
  const nested = path.join(dataDir, folder, file);
  const direct = path.join(dataDir, file);
  if (fs.existsSync(nested)) return nested;
  if (!fs.existsSync(path.join(dataDir, folder)) && fs.existsSync(direct)) return direct;
  throw new DatasetError(
    'DATASET_NOT_FOUND',
    `${name} not found: no file at ${nested} (nor ${direct}). Set FLOWLAB_SHARED to the shared folder (it holds data/${folder}/), ` +
      `or pass --data-dir pointing at a folder that contains ${folder}/ (or at that folder itself).`,
    nested,
  );
}

function readText(file: string, name: string): string {
  try {
    return fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (cause) {
    throw new DatasetError('DATASET_NOT_FOUND', `cannot read ${name} at ${file}: ${(cause as Error).message}`, file, { cause });
  }
}

function str(rec: Record<string, unknown>, field: string, where: string): string {
  const v = rec[field];
  if (typeof v !== 'string') throw new DatasetError('BAD_LINE', `${where}: '${field}' must be a string`, where);
  return v;
}

function strings(rec: Record<string, unknown>, field: string, where: string): string[] {
  const v = rec[field];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new DatasetError('BAD_LINE', `${where}: '${field}' must be a list of strings`, where);
  return v as string[];
}

function readHumanEval(dataDir: string): Task[] {
  const file = findFile(dataDir, 'humaneval', 'HumanEval.jsonl', 'humaneval');
  const tasks: Task[] = [];
  readText(file, 'humaneval').split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const where = `${file}:${i + 1}`;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch (cause) {
      throw new DatasetError('BAD_LINE', `${where}: not valid JSON (${(cause as Error).message})`, where, { cause });
    }
    const prompt = str(rec, 'prompt', where);
    const entry_point = str(rec, 'entry_point', where);
    if (!/^[A-Za-z_]\w*$/.test(entry_point)) throw new DatasetError('BAD_LINE', `${where}: 'entry_point' is not a Python name: ${JSON.stringify(entry_point)}`, where);
    const index = tasks.length;
    tasks.push({
      id: `humaneval/test/${index}`,
      index,
      input: { question: prompt, prompt, entry_point },
      expected: str(rec, 'canonical_solution', where),
      meta: { split: 'test', line: i + 1, task_id: str(rec, 'task_id', where), prompt, entry_point, test: str(rec, 'test', where) },
    });
  });
  return tasks;
}

/**
 * The prompt MBPP's paper and later harnesses use (Austin et al. 2021, section 2.1): the
 * description, then the tests the code must pass.
 */
export function mbppQuestion(prompt: string, tests: string[]): string {
  return `You are an expert Python programmer, and here is your task: ${prompt} Your code should pass these tests:\n\n${tests.join('\n')}`;
}

function readMbpp(dataDir: string, split: string): Task[] {
  const file = findFile(dataDir, 'mbpp', 'sanitized-mbpp.json', 'mbpp (sanitized)');
  let records: unknown;
  try {
    records = JSON.parse(readText(file, 'mbpp'));
  } catch (cause) {
    if (cause instanceof DatasetError) throw cause;
    throw new DatasetError('BAD_LINE', `${file}: not valid JSON (${(cause as Error).message})`, file, { cause });
  }
  if (!Array.isArray(records)) throw new DatasetError('BAD_LINE', `${file}: expected a JSON array of problems`, file);
  const range = MBPP_RANGES[split];
  if (!range) return [];
  const [lo, hi] = range;
  const tasks: Task[] = [];
  records.forEach((raw, i) => {
    const where = `${file}#${i}`;
    if (typeof raw !== 'object' || raw === null) throw new DatasetError('BAD_LINE', `${where}: expected an object`, where);
    const rec = raw as Record<string, unknown>;
    const taskId = rec.task_id;
    if (typeof taskId !== 'number' || !Number.isInteger(taskId)) throw new DatasetError('BAD_LINE', `${where}: 'task_id' must be an integer`, where);
    if (taskId < lo || taskId > hi) return;
    const prompt = str(rec, 'prompt', where);
    const test_list = strings(rec, 'test_list', where);
    const test_imports = strings(rec, 'test_imports', where);
    const entry_point = /assert\s+(?:not\s+)?\(?\s*(?:set\(|math\.isclose\()?\s*([A-Za-z_]\w*)\s*\(/.exec(test_list[0] ?? '')?.[1] ?? '';
    const index = tasks.length;
    tasks.push({
      id: `mbpp/${split}/${index}`,
      index,
      input: { question: mbppQuestion(prompt, test_list), prompt, tests: test_list.join('\n'), entry_point },
      expected: str(rec, 'code', where),
      meta: { split, task_id: taskId, entry_point, test_imports, test_list },
    });
  });
  return tasks;
}
