/**
 * Sending spans to an OpenTelemetry collector (or Arize Phoenix, Langfuse, Jaeger...) by
 * OTLP/HTTP with the official exporter (@opentelemetry/exporter-trace-otlp-http
 * `OTLPTraceExporter`: JSON bodies, `Content-Type: application/json`, its own retries on 429/5xx).
 * Network I/O, so it lives in the composition root, not in core (core/otel builds the spans).
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import type { ReadableSpan } from '../core/otel/index.ts';
import { CommandError } from './errors.ts';

/** Where spans go when no URL is given: the standard variables, else a local collector's OTLP/HTTP port. */
export function defaultTracesEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  if (env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) return env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'];
  if (env['OTEL_EXPORTER_OTLP_ENDPOINT']) return `${env['OTEL_EXPORTER_OTLP_ENDPOINT'].replace(/\/+$/, '')}/v1/traces`;
  return 'http://localhost:4318/v1/traces';
}

/** Spans per request at most; a trace (one run) is never split across requests unless it alone is larger. */
export const SPANS_PER_REQUEST = 512;

/**
 * Posts `spans` to `url` in requests of at most SPANS_PER_REQUEST spans, whole traces together,
 * one request at a time. Resolves with the number of requests once the collector accepted every
 * one. Errors: CommandError `EXPORT_FAILED` naming the URL and the collector's answer.
 */
export async function sendOtlpHttp(spans: readonly ReadableSpan[], opts: { url: string; headers?: Record<string, string>; timeoutMillis?: number }): Promise<{ requests: number }> {
  const batches: ReadableSpan[][] = [];
  let current: ReadableSpan[] = [];
  const byTrace = new Map<string, ReadableSpan[]>();
  for (const s of spans) {
    const id = s.spanContext().traceId;
    const list = byTrace.get(id);
    if (list) list.push(s);
    else byTrace.set(id, [s]);
  }
  for (const trace of byTrace.values()) {
    if (current.length && current.length + trace.length > SPANS_PER_REQUEST) {
      batches.push(current);
      current = [];
    }
    current.push(...trace);
  }
  if (current.length) batches.push(current);
  const exporter = new OTLPTraceExporter({ url: opts.url, headers: opts.headers ?? {}, timeoutMillis: opts.timeoutMillis ?? 10_000 });
  try {
    for (const [i, batch] of batches.entries()) {
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(batch, resolve));
      if (result.code !== 0) {
        throw new CommandError('EXPORT_FAILED', `OTLP/HTTP export to ${opts.url} failed on request ${i + 1} of ${batches.length} (${batch.length} spans): ${result.error?.message ?? 'the collector did not accept the spans'}`);
      }
    }
  } finally {
    await exporter.shutdown();
  }
  return { requests: batches.length };
}
