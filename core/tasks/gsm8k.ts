import fs from 'node:fs';
import path from 'node:path';
import { decodeUtf8, utf8FaultMessage } from '../utf8.ts';
import { DatasetError } from './errors.ts';
import { formatNumber, locateFinalNumber, numbersEqual, parseNumber, type FinalNumberSource } from './numeric.ts';
import type { Dataset, Grade, LoadOptions, SyncGrader, Task } from './types.ts';

/** GSM8K splits we ship (`<dataDir>/gsm8k/<split>.jsonl`). */
export const GSM8K_SPLITS = ['test', 'train', 'test_socratic'] as const;

/**
 * The gold final answer of a GSM8K solution text: what follows the LAST `####`, trimmed, with
 * commas removed (`"... #### 1,234"` -> `"1234"`). Null when there is no `####`.
 */
export function extractGsm8kAnswer(solution: string): string | null {
  const at = solution.lastIndexOf('####');
  if (at < 0) return null;
  return solution.slice(at + 4).trim().replace(/,/g, '');
}

/**
 * The GSM8K grader: reads the final number of the answer (see `locateFinalNumber`: `####`,
 * `answer` field, `\boxed{}`, else the last number) and compares it with the gold number
 * within 1e-6. Score 1 or 0. Never throws.
 */
export const gsm8kGrader: SyncGrader = {
  grade(answer: unknown, task: Task): Grade {
    const expected = task.expected;
    const gold = parseNumber(expected);
    const found = locateFinalNumber(answer);
    if (found === null) {
      const what = answer === undefined || answer === null ? 'there is no answer' : 'no number was found in the answer';
      return { score: 0, correct: false, extracted: null, expected, reason: what };
    }
    const extracted = formatNumber(found.value);
    const how = `read ${JSON.stringify(found.text)} (${describeSource(found.source)})`;
    if (gold === null) {
      return { score: 0, correct: false, extracted, expected, reason: `${how}, but the expected answer ${JSON.stringify(expected)} is not a number` };
    }
    const correct = numbersEqual(found.value, gold);
    return {
      score: correct ? 1 : 0,
      correct,
      extracted,
      expected,
      reason: correct ? `${how}, equal to ${expected}` : `${how}, expected ${expected}`,
    };
  },
};

function describeSource(source: FinalNumberSource): string {
  switch (source) {
    case 'number': return 'the answer is a number';
    case 'hashes': return "after the last '####'";
    case 'answer-field': return "from the 'answer' field";
    case 'boxed': return 'inside \\boxed{}';
    case 'last-number': return 'the last number in the text';
    default: return source satisfies never;
  }
}

/**
 * The GSM8K dataset over `dataDir`, which may be a folder containing `gsm8k/` (e.g.
 * `<shared>/data`) or the gsm8k folder itself. Files are read on `load`, not here.
 * Each task: id `gsm8k/<split>/<index>`, `input = {question}`, `expected` = gold number text,
 * `meta = {split, line, solution}`.
 */
export function createGsm8kDataset(dataDir: string): Dataset {
  return {
    name: 'gsm8k',
    splits: [...GSM8K_SPLITS],
    grader: gsm8kGrader,
    load: (opts) => loadGsm8k(dataDir, opts),
  };
}

function loadGsm8k(dataDir: string, opts: LoadOptions): Task[] {
  const { split } = opts;
  if (!(GSM8K_SPLITS as readonly string[]).includes(split)) {
    throw new DatasetError('UNKNOWN_SPLIT', `gsm8k has no split '${split}'; valid splits: ${GSM8K_SPLITS.join(', ')}`, split);
  }
  const offset = checkCount('offset', opts.offset ?? 0);
  const limit = opts.limit === undefined ? Infinity : checkCount('limit', opts.limit);
  const file = findSplitFile(dataDir, split);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (cause) {
    throw new DatasetError('DATASET_NOT_FOUND', `cannot read gsm8k split '${split}' at ${file}: ${(cause as Error).message}`, file, { cause });
  }
  const decoded = decodeUtf8(bytes);
  if ('fault' in decoded) {
    const f = decoded.fault;
    throw new DatasetError('NOT_UTF8', `${utf8FaultMessage(file, f)} (gsm8k split '${split}')`, `${file}:${f.line}`);
  }
  const text = decoded.text.replace(/^\uFEFF/, ''); // tolerate a UTF-8 byte-order mark
  if (text.trim() === '') {
    throw new DatasetError('EMPTY_FILE', `${file}: the gsm8k split '${split}' file is empty (no records); expected one JSON object {question, answer} per line`, file);
  }

  // Walk the file line by line and parse only the records asked for.
  const tasks: Task[] = [];
  let index = 0;
  let lineNo = 0;
  let pos = 0;
  while (pos < text.length && tasks.length < limit) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl;
    const line = text.slice(pos, end).replace(/\r$/, '');
    pos = end + 1;
    lineNo++;
    if (line.trim() === '') continue;
    if (index >= offset) tasks.push(parseRecord(line, `${file}:${lineNo}`, split, index, lineNo));
    index++;
  }
  return tasks;
}

function checkCount(name: string, n: number): number {
  if (!Number.isInteger(n) || n < 0) {
    throw new DatasetError('BAD_OPTIONS', `${name} must be a non-negative integer, got ${String(n)}`);
  }
  return n;
}

/** `<dataDir>/gsm8k/<split>.jsonl`, or `<dataDir>/<split>.jsonl` when dataDir is the gsm8k folder. */
function findSplitFile(dataDir: string, split: string): string {
  const nested = path.join(dataDir, 'gsm8k', `${split}.jsonl`);
  const direct = path.join(dataDir, `${split}.jsonl`);
  if (fs.existsSync(nested)) return nested;
  if (!fs.existsSync(path.join(dataDir, 'gsm8k')) && fs.existsSync(direct)) return direct;
  throw new DatasetError(
    'DATASET_NOT_FOUND',
    `gsm8k split '${split}' not found: no file at ${nested} (nor ${direct}). ` +
      'Set FLOWLAB_SHARED to the shared folder (it holds data/gsm8k/), or pass --data-dir pointing at a folder ' +
      'that contains gsm8k/ (or at the gsm8k folder itself).',
    nested,
  );
}

function parseRecord(line: string, where: string, split: string, index: number, lineNo: number): Task {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch (cause) {
    throw new DatasetError('BAD_LINE', `${where}: not valid JSON (${(cause as Error).message})`, where, { cause });
  }
  if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) {
    throw new DatasetError('BAD_LINE', `${where}: expected a JSON object {question, answer}`, where);
  }
  const { question, answer } = rec as { question?: unknown; answer?: unknown };
  if (typeof question !== 'string' || question.trim() === '') {
    throw new DatasetError('BAD_LINE', `${where}: 'question' must be a non-empty string`, where);
  }
  if (typeof answer !== 'string') {
    throw new DatasetError('BAD_LINE', `${where}: 'answer' must be a string`, where);
  }
  const expected = extractGsm8kAnswer(answer);
  if (expected === null) {
    throw new DatasetError('BAD_LINE', `${where}: the answer has no '####' final answer`, where);
  }
  if (parseNumber(expected) === null) {
    throw new DatasetError('BAD_LINE', `${where}: the final answer after '####' is not a number: ${JSON.stringify(expected)}`, where);
  }
  return {
    id: `gsm8k/${split}/${index}`,
    index,
    input: { question },
    expected,
    meta: { split, line: lineNo, solution: answer },
  };
}
