/**
 * The parent links of one trace's spans, checked before a trace is mapped to a run, without
 * recursion (a 100,000-deep chain costs a loop, not the stack): a span id used twice in a trace,
 * a cycle of parent links, or a chain deeper than {@link MAX_SPAN_DEPTH} is an error naming the
 * file, the span id, its place in the document and its line. A parent id that is not in the file
 * is allowed — the OpenTelemetry data model lets a trace arrive in parts (the parent may be in
 * another process's export) — and reported as a warning; the span is then read as a top span.
 */
import { OtelError } from './errors.ts';
import type { OtlpSpan } from './otlpJson.ts';

/** Deepest parent chain accepted (root = 1). Agent workflows nest a few levels; 1,000 leaves room for recursive agents. */
export const MAX_SPAN_DEPTH = 1000;

/** Where a span sits: its document path and, when the text is at hand, its line (1-based). */
function place(s: OtlpSpan, text: string | undefined): string {
  const line = text === undefined ? undefined : lineOfSpan(text, s);
  return `${s.path}${line !== undefined ? ` (line ${line})` : ''}`;
}

/**
 * The line of the `occurrence`-th (0-based) appearance of the span's id in `text`, or undefined.
 * Ids are searched as written in hex (OTLP/JSON's encoding), so a duplicate's second line is found
 * with `occurrence` 1. A JSON-lines span's path already names its line.
 */
export function lineOfSpan(text: string, s: OtlpSpan, occurrence = 0): number | undefined {
  const m = /^line (\d+): /.exec(s.path);
  if (m) return Number(m[1]);
  let at = -1;
  for (let k = 0; k <= occurrence; k++) {
    at = text.indexOf(`"${s.spanId}"`, at + 1);
    if (at < 0) at = text.toLowerCase().indexOf(`"${s.spanId}"`, at + 1);
    if (at < 0) return undefined;
  }
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * Checks one trace's spans (see the module comment). `text` (the file's text) lets errors name
 * lines; `warn` hears each dangling parent. Errors: OtelError `BAD_SPAN_TREE`.
 */
export function checkSpanTree(spans: readonly OtlpSpan[], file: string, text?: string, warn?: (message: string) => void): void {
  const byId = new Map<string, OtlpSpan>();
  const seen = new Map<string, number>();
  for (const s of spans) {
    const first = byId.get(s.spanId);
    if (first) {
      const n = seen.get(s.spanId) ?? 1;
      seen.set(s.spanId, n + 1);
      const line = text === undefined ? undefined : lineOfSpan(text, s, n);
      throw new OtelError('BAD_SPAN_TREE', `${file}: ${s.path}${line !== undefined ? ` (line ${line})` : ''}: span id ${s.spanId} appears twice in trace ${s.traceId} (first at ${place(first, text)}); span ids must be unique within a trace`, { file, path: s.path, ...(line !== undefined && { line }) });
    }
    byId.set(s.spanId, s);
  }
  let dangling = 0;
  for (const s of spans) {
    if (s.parentSpanId && !byId.has(s.parentSpanId) && dangling++ === 0) {
      warn?.(`${file}: ${s.path}: span ${s.spanId} names parent ${s.parentSpanId}, which is not in the file (a partial trace): read as a top span`);
    }
  }
  if (dangling > 1) warn?.(`${file}: trace ${spans[0]!.traceId}: ${dangling} spans in all name a parent that is not in the file`);

  // Depth of every span by following parent links, memoised; a cycle is a walk that meets itself.
  const depth = new Map<string, number>();
  const onPath = new Set<string>();
  for (const start of spans) {
    if (depth.has(start.spanId)) continue;
    const path: OtlpSpan[] = [];
    let s: OtlpSpan | undefined = start;
    let base = 0;
    while (s) {
      const known = depth.get(s.spanId);
      if (known !== undefined) {
        base = known;
        break;
      }
      if (onPath.has(s.spanId)) {
        const from = path.findIndex((x) => x.spanId === s!.spanId);
        const ring = path.slice(from).map((x) => x.spanId);
        const line = text === undefined ? undefined : lineOfSpan(text, s);
        throw new OtelError('BAD_SPAN_TREE', `${file}: ${place(s, text)}: the parent links of trace ${s.traceId} form a cycle: ${[...ring, s.spanId].join(' -> ')} (each span names the next as its parent); a trace is a tree`, { file, path: s.path, ...(line !== undefined && { line }) });
      }
      onPath.add(s.spanId);
      path.push(s);
      s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
    }
    for (let i = path.length - 1; i >= 0; i--) {
      const d = base + (path.length - i);
      depth.set(path[i]!.spanId, d);
      onPath.delete(path[i]!.spanId);
      if (d > MAX_SPAN_DEPTH) {
        const deep = path[i]!;
        const line = text === undefined ? undefined : lineOfSpan(text, deep);
        throw new OtelError('BAD_SPAN_TREE', `${file}: ${place(deep, text)}: span ${deep.spanId} is ${MAX_SPAN_DEPTH + 1} parent links deep in trace ${deep.traceId}, past the limit of ${MAX_SPAN_DEPTH}; is the file a generated chain?`, { file, path: deep.path, ...(line !== undefined && { line }) });
      }
    }
  }
}
