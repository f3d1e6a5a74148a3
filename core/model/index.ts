export * from './provider.ts';
export * from './errors.ts';
export { opensThinking, splitThinking, THINK_CLOSE, THINK_OPEN, type SplitThinking } from './thinking.ts';
export { ScriptedProvider, type Script } from './scripted.ts';
export { ModelConfigError, type ModelConfig, type ModelRequest, type ModelRequestField, type ModelConfigErrorCode, type LoraAdapterRef, type ProviderFactory, type ModelPort } from './config.ts';
export { ENDPOINT_PREFIX, EndpointRefError, endpointId, isEndpointRef, parseEndpointRef, type EndpointSpec, type KeychainEntry, type StructuredForm } from './endpoint.ts';
export { textStream, type TextStream } from './textStream.ts';
