export type { Dataset, Grade, Grader, LoadOptions, SyncGrader, Task } from './types.ts';
export { DatasetError, type DatasetErrorCode } from './errors.ts';
export { resolveDataDir, resolveSharedDir, userDatasetsDir } from './paths.ts';
export { DATASET_SOURCES, datasetBytes, datasetSource, fetchDatasetCommand, type DatasetFile, type DatasetSource } from './downloads.ts';
export {
  extractFinalNumber,
  formatNumber,
  locateFinalNumber,
  numbersEqual,
  parseNumber,
  scanNumbers,
  type FinalNumber,
  type FinalNumberSource,
  type NumberToken,
} from './numeric.ts';
export { GSM8K_SPLITS, createGsm8kDataset, extractGsm8kAnswer, gsm8kGrader } from './gsm8k.ts';
export {
  LEARN_SEED,
  LEARN_SIZES,
  LEARN_SPLITS,
  LEARN_TARGET_WORD,
  LEARN_TOOLS,
  createLearnDataset,
  learnGrader,
  learnTask,
  mentionsWord,
  type LearnKind,
  type LearnSplit,
  type LearnTool,
} from './learn.ts';
export {
  LEARN_DESIGN_SEED,
  LEARN_DESIGN_SIZES,
  LEARN_DESIGN_SPLITS,
  LEARN_DESIGN_TOOLS,
  LEARN_DESIGN_TOOL_NAMES,
  createLearnDesignDataset,
  learnDesignClass,
  learnDesignGrader,
  learnDesignTask,
  readToolCalls,
  type LearnDesignSplit,
  type LearnDesignTool,
  type ToolCallText,
} from './learnDesign.ts';
export { LEARN_JUDGE_DEFAULT_BLIND, LEARN_JUDGE_QUANTITIES, createLearnJudgeDataset, isBlindPair, learnJudgeGrader, learnJudgeTask, parseLearnJudgeName, readJudgeVerdict, type JudgeMistake, type JudgeTaskMeta, type LearnJudgeSplit } from './learnJudge.ts';
export { LEARN_ZONE_SIZES, createLearnZoneDataset, learnZoneTask, type LearnZone } from './learnDesignZones.ts';
export { datasetNames, datasetNeedsSandbox, describeDataset, getDataset, type DatasetLocation } from './registry.ts';
export { answerText, answerTokens, exactMatch, normalizeAnswer, qaGrader, tokenF1 } from './qa.ts';
export { MULTIHOP_FILES, MULTIHOP_SPLITS, createMultihopDataset, type MultihopName } from './multihop.ts';
export {
  DATAWRIGHT_MAX_K,
  DATAWRIGHT_STRATEGIES,
  DATAWRIGHT_TEXT_PORTS,
  composeDataset,
  parseDataWrightName,
  splitAnswer,
  type ComposeOptions,
  type DataWrightPart,
  type DataWrightStrategy,
} from './datawright.ts';
export {
  CODE_GRADE_TIMEOUT_MS,
  HUMANEVAL_SPLITS,
  MBPP_SPLITS,
  createHumanEvalDataset,
  createMbppDataset,
  describeRun,
  extractCode,
  humanEvalProgram,
  mbppProgram,
  mbppQuestion,
  sandboxGrader,
} from './code.ts';
