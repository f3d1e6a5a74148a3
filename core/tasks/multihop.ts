/**
 * The multi-hop question answering datasets of `<data>/multihop_qa/` (its README names sources
 * and licences): Bamboogle (Press et al. 2022, "Measuring and Narrowing the Compositionality
 * Gap"), BamTwoogle (Aksitov et al. 2023, "ReST meets ReAct"), HotpotQA (Yang et al. 2018),
 * MuSiQue (Trivedi et al. 2022) and 2WikiMultihopQA (Ho et al. 2020). Question/answer pairs only
 * (no contexts or aliases): each task is `input = {question}`, `expected` = the gold answer,
 * graded by `qaGrader` (core/tasks/qa.ts: `correct` = normalised exact match, `score` = token F1).
 *
 * One split each, `test`, as the files are named; they are the public dev/validation splits
 * upstream (the README says so). Four files are one JSON array of `{question, answer}`;
 * `bamtwoogle.csv` is CSV (RFC 4180 quoting) with the header `question,answer`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DatasetError } from './errors.ts';
import { qaGrader } from './qa.ts';
import type { Dataset, LoadOptions, Task } from './types.ts';

/** The dataset names and their files in `multihop_qa/`. */
export const MULTIHOP_FILES = {
  bamboogle: 'bamboogle_test_questions_and_answers.json',
  bamtwoogle: 'bamtwoogle.csv',
  hotpotqa: 'hotpotqa_test_questions_and_answers.json',
  musique: 'musique_test_questions_and_answers.json',
  '2wikimultihopqa': '2wikimultihop_test_questions_and_answers.json',
} as const;
export type MultihopName = keyof typeof MULTIHOP_FILES;
export const MULTIHOP_SPLITS = ['test'] as const;

/** One record of a file, before checking: its text span and where it starts (1-based line and column). */
interface RawRecord {
  text: string;
  line: number;
  col: number;
}

/**
 * A multi-hop QA dataset over `dataDir`, a folder holding `multihop_qa/` (e.g. `<shared>/data`)
 * or the `multihop_qa` folder itself. Files are read on `load`. Task ids `<name>/test/<i>`,
 * `meta = {split, line, record}` (the record's 1-based line in the file and 0-based index).
 */
export function createMultihopDataset(name: MultihopName, dataDir: string): Dataset {
  return { name, splits: [...MULTIHOP_SPLITS], grader: qaGrader, load: (opts) => loadMultihop(name, dataDir, opts) };
}

function loadMultihop(name: MultihopName, dataDir: string, opts: LoadOptions): Task[] {
  if (opts.split !== 'test') throw new DatasetError('UNKNOWN_SPLIT', `${name} has no split '${opts.split}'; valid splits: test`, opts.split);
  const offset = count('offset', opts.offset ?? 0);
  const limit = opts.limit === undefined ? Infinity : count('limit', opts.limit);
  const file = findFile(dataDir, MULTIHOP_FILES[name]);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (cause) {
    throw new DatasetError('DATASET_NOT_FOUND', `cannot read ${name} at ${file}: ${(cause as Error).message}`, file, { cause });
  }
  const records = file.endsWith('.csv') ? csvRecords(text, file) : jsonArrayRecords(text, file);
  const tasks: Task[] = [];
  let index = 0;
  for (const raw of records) {
    if (tasks.length >= limit) break;
    if (index >= offset) tasks.push(toTask(name, file, raw, index));
    index++;
  }
  return tasks;
}

function toTask(name: MultihopName, file: string, raw: RawRecord | { fields: string[]; line: number }, index: number): Task {
  const where = `${file}:${raw.line}`;
  let question: unknown;
  let answer: unknown;
  if ('fields' in raw) {
    if (raw.fields.length !== 2) throw new DatasetError('BAD_LINE', `${where}: record ${index} has ${raw.fields.length} fields, expected 2 (question,answer)`, where);
    [question, answer] = raw.fields;
  } else {
    let rec: unknown;
    try {
      rec = JSON.parse(raw.text);
    } catch (cause) {
      throw new DatasetError('BAD_LINE', `${where}: record ${index} (column ${raw.col}) is not valid JSON (${(cause as Error).message})`, where, { cause });
    }
    if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) throw new DatasetError('BAD_LINE', `${where}: record ${index} (column ${raw.col}) must be an object {question, answer}`, where);
    ({ question, answer } = rec as { question?: unknown; answer?: unknown });
  }
  if (typeof question !== 'string' || question.trim() === '') throw new DatasetError('BAD_LINE', `${where}: record ${index}: 'question' must be a non-empty string`, where);
  if (typeof answer !== 'string' || answer.trim() === '') throw new DatasetError('BAD_LINE', `${where}: record ${index}: 'answer' must be a non-empty string`, where);
  return { id: `${name}/test/${index}`, index, input: { question }, expected: answer, meta: { split: 'test', line: raw.line, record: index } };
}

/**
 * The elements of a top-level JSON array, one span each with the line and column where it
 * starts, scanned lazily (strings and escapes respected, nesting counted); each span is parsed
 * by the caller. Errors (DatasetError BAD_LINE at `file:line`): the text is not an array, or it
 * ends inside one.
 */
function* jsonArrayRecords(text: string, file: string): Generator<RawRecord> {
  let i = 0;
  let line = 1;
  let lineStart = 0;
  const skipSpace = () => {
    for (; i < text.length && /\s/.test(text[i]!); i++) if (text[i] === '\n') { line++; lineStart = i + 1; }
  };
  skipSpace();
  if (text[i] !== '[') throw new DatasetError('BAD_LINE', `${file}:${line}: expected a JSON array of {question, answer} records`, `${file}:${line}`);
  i++;
  for (;;) {
    skipSpace();
    if (text[i] === ']') return;
    if (i >= text.length) throw new DatasetError('BAD_LINE', `${file}:${line}: the JSON array is not closed (the file ends early)`, `${file}:${line}`);
    const start = i;
    const at = { line, col: i - lineStart + 1 };
    let depth = 0;
    let inString = false;
    for (; i < text.length; i++) {
      const c = text[i]!;
      if (c === '\n') { line++; lineStart = i + 1; }
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) break;
        depth--;
      } else if (c === ',' && depth === 0) break;
    }
    if (i >= text.length) throw new DatasetError('BAD_LINE', `${file}:${at.line}: the record at column ${at.col} is not closed (the file ends early)`, `${file}:${at.line}`);
    yield { text: text.slice(start, i), ...at };
    if (text[i] === ',') i++;
  }
}

/**
 * The data rows of a CSV text (RFC 4180: fields separated by `,`, optionally in double quotes,
 * `""` a quote inside them; rows end at CR LF or LF outside quotes), each with the 1-based line
 * it starts on. The first row must be the header `question,answer`. Blank lines are skipped.
 * Errors (DatasetError BAD_LINE): another header, a quote left open.
 */
function* csvRecords(text: string, file: string): Generator<{ fields: string[]; line: number }> {
  let i = 0;
  let line = 1;
  let header = true;
  while (i < text.length) {
    const startLine = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    for (;;) {
      if (i >= text.length) {
        if (quoted) throw new DatasetError('BAD_LINE', `${file}:${startLine}: a quoted field is not closed (the file ends early)`, `${file}:${startLine}`);
        fields.push(field);
        break;
      }
      const c = text[i]!;
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') { field += '"'; i += 2; continue; }
        if (c === '"') { quoted = false; i++; continue; }
        if (c === '\n') line++;
        field += c;
        i++;
        continue;
      }
      if (c === '"' && field === '') { quoted = true; i++; continue; }
      if (c === ',') { fields.push(field); field = ''; i++; continue; }
      if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
        i += c === '\r' ? 2 : 1;
        line++;
        fields.push(field);
        break;
      }
      field += c;
      i++;
    }
    if (fields.length === 1 && fields[0] === '') continue;
    if (header) {
      header = false;
      if (fields.join(',').trim().toLowerCase() !== 'question,answer') throw new DatasetError('BAD_LINE', `${file}:${startLine}: expected the header 'question,answer', got ${JSON.stringify(fields.join(','))}`, `${file}:${startLine}`);
      continue;
    }
    yield { fields, line: startLine };
  }
}

/** `<dataDir>/multihop_qa/<file>`, or `<dataDir>/<file>` when dataDir is the multihop_qa folder. */
function findFile(dataDir: string, name: string): string {
  const nested = path.join(dataDir, 'multihop_qa', name);
  const direct = path.join(dataDir, name);
  if (fs.existsSync(nested)) return nested;
  if (!fs.existsSync(path.join(dataDir, 'multihop_qa')) && fs.existsSync(direct)) return direct;
  throw new DatasetError(
    'DATASET_NOT_FOUND',
    `${name} not found: no file at ${nested} (nor ${direct}). Set FLOWLAB_SHARED to the shared folder (it holds data/multihop_qa/), ` +
      'or pass --data-dir pointing at a folder that contains multihop_qa/ (or at that folder itself).',
    nested,
  );
}

function count(what: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) throw new DatasetError('BAD_OPTIONS', `${what} must be a non-negative integer, got ${String(n)}`);
  return n;
}
