import type { CodeSandbox } from '../sandbox/index.ts';
import { createHumanEvalDataset, createMbppDataset } from './code.ts';
import { DatasetError } from './errors.ts';
import { createGsm8kDataset } from './gsm8k.ts';
import { createLearnDataset } from './learn.ts';
import { createLearnDesignDataset } from './learnDesign.ts';
import { resolveDataDir } from './paths.ts';
import type { Dataset } from './types.ts';

/** Where datasets are read from: an explicit data folder (`--data-dir`), or the shared folder. */
export interface DatasetLocation {
  /** A folder holding `<name>/` (or, for a single dataset, that dataset's folder itself). */
  dataDir?: string;
  /** The shared folder; its `data/` is used when `dataDir` is not given. */
  sharedDir?: string;
  /**
   * Where graded code runs, for datasets graded by running tests (`datasetNeedsSandbox`). The
   * composition root creates it (models/sandbox) and closes it.
   */
  sandbox?: CodeSandbox;
}

/** One entry per dataset; adding mbpp, humaneval or multihop QA is one line here. */
const DATASETS: Record<string, { describe: string; create: (dataDir: string, loc: DatasetLocation) => Dataset; sandbox?: true }> = {
  gsm8k: { describe: 'GSM8K grade-school math (numeric final answer)', create: createGsm8kDataset },
  learn: { describe: 'Laptop RL family, mixed: say the word, copy a number into JSON, pick the tool (procedural, exact)', create: () => createLearnDataset('learn', ['word', 'json', 'tool']) },
  'learn-word': { describe: 'Say the word: a story continuation that says "happy" (the toy reward)', create: () => createLearnDataset('learn-word', ['word']) },
  'learn-json': { describe: 'Copy a number 1-9 into a JSON field', create: () => createLearnDataset('learn-json', ['json']) },
  'learn-tool': { describe: 'Pick the right tool name (calculator, weather, search) for a request', create: () => createLearnDataset('learn-tool', ['tool']) },
  'learn-team': { describe: 'Two roles: a story that says "happy" (planner) and the right tool (solver, graded)', create: () => createLearnDataset('learn-team', ['team']) },
  'learn-design': { describe: 'Pick the tool a request needs (weather, search, math) and its argument; graded per part (tool, argument)', create: () => createLearnDesignDataset('learn-design') },
  humaneval: { describe: 'HumanEval: 164 Python functions from docstrings, graded by running their tests in the sandbox', create: (dir, loc) => createHumanEvalDataset(dir, loc.sandbox), sandbox: true },
  mbpp: { describe: 'MBPP (sanitized, 427): basic Python tasks, graded by running their asserts in the sandbox', create: (dir, loc) => createMbppDataset(dir, loc.sandbox), sandbox: true },
};

/** Names of the datasets `getDataset` knows, sorted. */
export function datasetNames(): string[] {
  return Object.keys(DATASETS).sort();
}

/** A dataset's one-line description (e.g. for a picker), or undefined for an unknown name. */
export function describeDataset(name: string): string | undefined {
  return Object.hasOwn(DATASETS, name.toLowerCase()) ? DATASETS[name.toLowerCase()]!.describe : undefined;
}

/** Whether grading the dataset runs code, so `getDataset` needs `DatasetLocation.sandbox` (false for unknown names). */
export function datasetNeedsSandbox(name: string): boolean {
  return Object.hasOwn(DATASETS, name.toLowerCase()) && DATASETS[name.toLowerCase()]!.sandbox === true;
}

/**
 * A dataset by name (case-insensitive), reading from `resolveDataDir(opts)`.
 * Files are not touched until `load`.
 * @throws DatasetError `UNKNOWN_DATASET` (the message lists the known names).
 */
export function getDataset(name: string, opts: DatasetLocation = {}): Dataset {
  const entry = Object.hasOwn(DATASETS, name.toLowerCase()) ? DATASETS[name.toLowerCase()] : undefined;
  if (!entry) {
    throw new DatasetError('UNKNOWN_DATASET', `unknown dataset '${name}'; known datasets: ${datasetNames().join(', ')}`, name);
  }
  return entry.create(resolveDataDir(opts), opts);
}
