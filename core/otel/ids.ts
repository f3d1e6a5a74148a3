/**
 * Deterministic trace and span ids, so the same run always exports the same spans: ids are the
 * leading bytes of a SHA-256 of the run id (the trace), the run id alone (the run's root span),
 * run id + node id + attempt (a node run) and those + call index (a model call). OTLP wants a
 * 16-byte trace id and 8-byte span ids, written as lowercase hex in OTLP/JSON, none all zeroes
 * (opentelemetry/proto/trace/v1/trace.proto, `Span.trace_id` / `span_id`).
 */
import { createHash } from 'node:crypto';

function hexOf(parts: ReadonlyArray<string | number>, hexDigits: number): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, hexDigits);
  // An all-zero id is invalid; a SHA-256 prefix of zeroes is astronomically unlikely, but stay valid.
  return /^0+$/.test(h) ? `${h.slice(0, -1)}1` : h;
}

/** The trace of a run: 32 hex digits. */
export const traceIdOf = (runId: string): string => hexOf(['flowlab/trace', runId], 32);
/** The run's root span (`invoke_workflow`): 16 hex digits. */
export const runSpanIdOf = (runId: string): string => hexOf(['flowlab/run', runId], 16);
/** A node run's span (`invoke_agent` / `execute_tool`). */
export const nodeSpanIdOf = (runId: string, nodeId: string, attempt: number): string => hexOf(['flowlab/node', runId, nodeId, attempt], 16);
/** A model call's span (`chat`). */
export const callSpanIdOf = (runId: string, nodeId: string, attempt: number, callIndex: number): string =>
  hexOf(['flowlab/call', runId, nodeId, attempt, callIndex], 16);
