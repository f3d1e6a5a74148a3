export { OpenAiProvider, retrySeed, type OpenAiProviderOptions } from './OpenAiProvider.ts';
export { probesFile, readVerdicts, writeVerdicts, type ProbeVerdicts } from './verdicts.ts';
export { backoffMs, type FetchLike } from './http.ts';
export { EndpointPool } from './pool.ts';
export { chatBody, readChatReply, structuredFields } from './body.ts';
export { RoutedProvider } from './routed.ts';
export { probeEndpoint, verdictLines, PROBE_SCHEMA, type ProbeOptions } from './probe.ts';
