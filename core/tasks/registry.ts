import { composeDataset, parseDataWrightName } from './datawright.ts';
import type { CodeSandbox } from '../sandbox/index.ts';
import { createHumanEvalDataset, createMbppDataset } from './code.ts';
import { DatasetError } from './errors.ts';
import { createGsm8kDataset } from './gsm8k.ts';
import { createLearnDataset } from './learn.ts';
import { createLearnDesignDataset } from './learnDesign.ts';
import { createLearnJudgeDataset, parseLearnJudgeName } from './learnJudge.ts';
import { createLearnUnitDataset } from './learnUnit.ts';
import { createLearnDesignJudgeDataset } from './learnDesignJudge.ts';
import { createMultihopDataset } from './multihop.ts';
import { createLearnZoneDataset } from './learnDesignZones.ts';
import { resolveDataDir } from './paths.ts';
import type { Dataset } from './types.ts';

/** Where datasets are read from: an explicit data folder (`--data-dir`), or the shared folder. */
export interface DatasetLocation {
  /** A folder holding `<name>/` (or, for a single dataset, that dataset's folder itself). */
  dataDir?: string;
  /** The shared folder; its `data/` is used when `dataDir` is not given. */
  sharedDir?: string;
  /** A user data folder whose `datasets/` is used when no shared folder is named or found (core/tasks/paths.ts). */
  userDataDir?: string;
  /**
   * Where graded code runs, for datasets graded by running tests (`datasetNeedsSandbox`). The
   * composition root creates it (models/sandbox) and closes it.
   */
  sandbox?: CodeSandbox;
}

/** One entry per dataset; adding one is one line here. */
const DATASETS: Record<string, { describe: string; create: (dataDir: string, loc: DatasetLocation) => Dataset; sandbox?: true }> = {
  gsm8k: { describe: 'GSM8K grade-school math (numeric final answer)', create: createGsm8kDataset },
  learn: { describe: 'Laptop RL family, mixed: say the word, copy a number into JSON, pick the tool (procedural, exact)', create: () => createLearnDataset('learn', ['word', 'json', 'tool']) },
  'learn-word': { describe: 'Say the word: a story continuation that says "happy" (the toy reward)', create: () => createLearnDataset('learn-word', ['word']) },
  'learn-json': { describe: 'Copy a number 1-9 into a JSON field', create: () => createLearnDataset('learn-json', ['json']) },
  'learn-tool': { describe: 'Pick the right tool name (calculator, weather, search) for a request', create: () => createLearnDataset('learn-tool', ['tool']) },
  'learn-team': { describe: 'Two roles: a story that says "happy" (planner) and the right tool (solver, graded)', create: () => createLearnDataset('learn-team', ['team']) },
  'learn-judge': { describe: 'Pairwise judging: which of two answers to a measurement request is right; a share of the wrong ones are a plausible wrong unit (the blind spot; learn-judge:blind=<share>, default 0.25)', create: () => createLearnJudgeDataset() },
  'learn-unit': { describe: 'Answer a measurement request from a tool reading: the number and the unit the request names (the solving side of learn-judge; the other unit is the blind spot)', create: () => createLearnUnitDataset() },
  'learn-design-judge': { describe: 'Pairwise judging of learn-design answers: which of two (tool, argument) answers fits the request (wrong tool, wrong argument, both, none); what evolve learn-design --judge pair asks', create: () => createLearnDesignJudgeDataset() },
  'learn-design': { describe: 'Pick the tool a request needs (weather, search, math) and its argument; graded per part (tool, argument)', create: () => createLearnDesignDataset('learn-design') },
  bamboogle: { describe: 'Bamboogle: 125 two-hop questions (exact match; score = token F1)', create: (d) => createMultihopDataset('bamboogle', d) },
  bamtwoogle: { describe: 'BamTwoogle: 100 handcrafted 2-4-hop questions (exact match; score = token F1)', create: (d) => createMultihopDataset('bamtwoogle', d) },
  hotpotqa: { describe: 'HotpotQA dev: 7,405 multi-hop questions (exact match; score = token F1)', create: (d) => createMultihopDataset('hotpotqa', d) },
  musique: { describe: 'MuSiQue-Ans dev: 2,417 2-4-hop questions (exact match; score = token F1)', create: (d) => createMultihopDataset('musique', d) },
  '2wikimultihopqa': { describe: '2WikiMultihopQA dev: 12,576 multi-hop questions (exact match; score = token F1)', create: (d) => createMultihopDataset('2wikimultihopqa', d) },
  'learn-design-ood': { describe: 'learn-design out of distribution: the same tools and grader, requests in wordings no learn-design split uses (split test)', create: () => createLearnZoneDataset('ood') },
  'learn-errand': { describe: 'Out of domain for learn-design: everyday situations that imply the tool and argument (split test; same tools and grader)', create: () => createLearnZoneDataset('errand') },
  humaneval: { describe: 'HumanEval: 164 Python functions from docstrings, graded by running their tests in the sandbox', create: (dir, loc) => createHumanEvalDataset(dir, loc.sandbox), sandbox: true },
  mbpp: { describe: 'MBPP (sanitized, 427): basic Python tasks, graded by running their asserts in the sandbox', create: (dir, loc) => createMbppDataset(dir, loc.sandbox), sandbox: true },
};

/** Names of the datasets `getDataset` knows, sorted. */
export function datasetNames(): string[] {
  return Object.keys(DATASETS).sort();
}

/**
 * A dataset's one-line description (e.g. for a picker), or undefined for an unknown name; a
 * DataWright name (`datawright:paired:2:learn-design`) is described when its base is known.
 */
export function describeDataset(name: string): string | undefined {
  let dw: ReturnType<typeof parseDataWrightName>;
  try {
    dw = parseDataWrightName(name);
  } catch {
    return undefined;
  }
  if (name.toLowerCase().startsWith('learn-judge:')) {
    try {
      return `${DATASETS['learn-judge']!.describe.split(';')[0]}; blind-spot share ${parseLearnJudgeName(name)!.blind}`;
    } catch {
      return undefined;
    }
  }
  if (dw) return describeDataset(dw.base) && `DataWright ${dw.strategy}, k = ${dw.k} sub-questions per task, over ${dw.base.toLowerCase()} (score = mean over the parts)`;
  return Object.hasOwn(DATASETS, name.toLowerCase()) ? DATASETS[name.toLowerCase()]!.describe : undefined;
}

/** Whether grading the dataset runs code, so `getDataset` needs `DatasetLocation.sandbox` (false for unknown names). */
export function datasetNeedsSandbox(name: string): boolean {
  return Object.hasOwn(DATASETS, name.toLowerCase()) && DATASETS[name.toLowerCase()]!.sandbox === true;
}

/**
 * A dataset by name (case-insensitive), reading from `resolveDataDir(opts)`. A name
 * `datawright:<strategy>:<k>:<base>[:<seed>]` is the base dataset composed by DataWright
 * (core/tasks/datawright.ts), e.g. `datawright:decoy:3:gsm8k`.
 * Files are not touched until `load`.
 * @throws DatasetError `UNKNOWN_DATASET` (the message lists the known names, or shows the
 *   DataWright form for a malformed one).
 */
export function getDataset(name: string, opts: DatasetLocation = {}): Dataset {
  const dw = parseDataWrightName(name);
  if (dw) return composeDataset(getDataset(dw.base, opts), { strategy: dw.strategy, k: dw.k, seed: dw.seed });
  const judge = name.toLowerCase() === 'learn-judge' ? undefined : parseLearnJudgeName(name);
  if (judge) return createLearnJudgeDataset(judge.blind);
  const entry = Object.hasOwn(DATASETS, name.toLowerCase()) ? DATASETS[name.toLowerCase()] : undefined;
  if (!entry) {
    throw new DatasetError('UNKNOWN_DATASET', `unknown dataset '${name}'; known datasets: ${datasetNames().join(', ')}`, name);
  }
  return entry.create(resolveDataDir(opts), opts);
}
