import { FlowlabError } from '../errors.ts';

/**
 * Why an OTLP trace file cannot be read as Flowlab traces:
 * - `BAD_JSON`: the text is neither one JSON document nor JSON lines (the line is named);
 * - `BAD_OTLP`: a field breaks the OTLP/JSON mapping of `ExportTraceServiceRequest`
 *   (opentelemetry/proto/collector/trace/v1/trace_service.proto); the message names its path,
 *   e.g. `resourceSpans[0].scopeSpans[0].spans[3].traceId`;
 * - `NO_SPANS`: the document holds no span;
 * - `BAD_FLOWLAB_SPAN`: a span written by Flowlab's exporter (scope `flowlab`) lacks or garbles
 *   an attribute the lossless reading needs (the span and the attribute are named);
 * - `BAD_SPAN_TREE`: a trace's parent links are not a tree (a duplicate span id, a cycle) or are
 *   deeper than the limit (spanTree.ts); the span id, its path and line are named.
 */
export type OtelErrorCode = 'BAD_JSON' | 'BAD_OTLP' | 'NO_SPANS' | 'BAD_FLOWLAB_SPAN' | 'BAD_SPAN_TREE';

/** A trace file that cannot be imported; `location.path` is the field at fault where known. */
export class OtelError extends FlowlabError<OtelErrorCode> {
  override readonly name: string = 'OtelError';
}
