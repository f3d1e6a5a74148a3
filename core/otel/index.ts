/**
 * OpenTelemetry in and out (docs/otel.md): Flowlab runs as OTel GenAI + OpenInference spans
 * (toSpans.ts, built with the official SDK and written as OTLP/JSON by the official transformer),
 * and OTLP/JSON traces (Flowlab's own, losslessly; other frameworks', mapped) read back as runs
 * that structural credit scores (importTraces.ts). Sending spans over OTLP/HTTP is the CLI's
 * (cli/otlpHttp.ts): core does no network I/O.
 */
export { FL, FLOWLAB_SCOPE, GEN_AI, OI, OP, LANGFUSE_OBSERVATION_TYPE } from './attributes.ts';
export { OtelError, type OtelErrorCode } from './errors.ts';
export { creditGraphOfTrace, runTraceGraph, traceGraphOf, type TraceGraph, type TraceGraphEdge, type TraceGraphNode } from './graph.ts';
export { callSpanIdOf, nodeSpanIdOf, runSpanIdOf, traceIdOf } from './ids.ts';
export type { ImportedRun } from './imported.ts';
export { importedGraphOf, importedRecord, importedRunGraded, importRuns, readOtlpTraces, type ImportConfig } from './importTraces.ts';
export { MAX_VALUE_DEPTH, msOf, parseOtlpJson, type AttrValue, type OtlpSpan } from './otlpJson.ts';
export { checkSpanTree, MAX_SPAN_DEPTH } from './spanTree.ts';
export { storedRuns } from './fromStore.ts';
export { hrTimeOf, otlpJsonOf, runSpans, type OtelExperiment, type OtelRun, type SpanOptions } from './toSpans.ts';
export type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
