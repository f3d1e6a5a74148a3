export {
  LlamaProvider,
  type LlamaLoraAdapter,
  type LlamaModelConfig,
  type LlamaProviderOptions,
  type LoadedModelInfo,
} from './LlamaProvider.ts';
export { readGgufInfo, checkGgufFile, type GgufInfo, type CheckedGguf } from './ggufInfo.ts';
