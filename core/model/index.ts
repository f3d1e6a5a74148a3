export * from './provider.ts';
export * from './errors.ts';
export { opensThinking, splitReply, splitThinking, THINK_CLOSE, THINK_OPEN, type ReplyThinking, type SplitThinking } from './thinking.ts';
export { REPAIR_KINDS, repairJson, type RepairKind, type RepairResult } from './repair.ts';
export { ScriptedProvider, type Script } from './scripted.ts';
export { ModelConfigError, type ModelConfig, type ModelRequest, type ModelRequestField, type ModelConfigErrorCode, type LoraAdapterRef, type ProviderFactory, type ModelPort } from './config.ts';
export { ENDPOINT_PREFIX, EndpointRefError, endpointId, isEndpointRef, parseEndpointRef, type EndpointSpec, type KeychainEntry, type StructuredForm } from './endpoint.ts';
export { textStream, type TextStream } from './textStream.ts';
