export { LlamaProvider } from './LlamaProvider.ts';
export type { LlamaLoraAdapter, LlamaModelConfig, LlamaProviderOptions, LoadedModelInfo } from './config.ts';
export { readGgufInfo, checkGgufFile, type GgufInfo, type CheckedGguf } from './ggufInfo.ts';
export { readCheckedGgufInfo, scanFiniteWeights, SCAN_LIMIT_BYTES } from './finiteCheck.ts';
