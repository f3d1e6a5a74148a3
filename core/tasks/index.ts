export type { Dataset, Grade, Grader, LoadOptions, Task } from './types.ts';
export { DatasetError, type DatasetErrorCode } from './errors.ts';
export { resolveDataDir, resolveSharedDir } from './paths.ts';
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
export { datasetNames, describeDataset, getDataset, type DatasetLocation } from './registry.ts';
