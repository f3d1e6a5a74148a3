/**
 * Reading OTLP/JSON traces: an `ExportTraceServiceRequest` (`{resourceSpans: [...]}`,
 * opentelemetry/proto/collector/trace/v1/trace_service.proto) as the OTLP/JSON encoding writes it
 * (opentelemetry.io/docs/specs/otlp, "JSON Protobuf Encoding": lowerCamelCase field names, trace
 * and span ids as hex, int64 as decimal strings or numbers, enums as numbers). Also read: an
 * array of requests, and JSON lines of requests (the collector's file exporter writes one per
 * line); proto field names (`resource_spans`), enum names (`STATUS_CODE_ERROR`) and base64 ids,
 * which generic proto3 JSON encoders write. Pure.
 */
import { OtelError } from './errors.ts';

/** An attribute value as read: AnyValue's string, bool, int (as a number), double, bytes (base64 text), array or key-value list. */
export type AttrValue = string | number | boolean | null | AttrValue[] | { [key: string]: AttrValue };

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  /** SpanKind number (0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer). */
  kind: number;
  /** Epoch nanoseconds. */
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, AttrValue>;
  /** StatusCode number (0 unset, 1 ok, 2 error). */
  status: { code: number; message?: string };
  events: Array<{ name: string; timeNs: bigint; attributes: Record<string, AttrValue> }>;
  scope: { name: string; version?: string };
  resource: Record<string, AttrValue>;
  /** Where the span sits in the document, e.g. `resourceSpans[0].scopeSpans[1].spans[3]` (line-prefixed for JSON lines). */
  path: string;
}

const SPAN_KINDS = ['SPAN_KIND_UNSPECIFIED', 'SPAN_KIND_INTERNAL', 'SPAN_KIND_SERVER', 'SPAN_KIND_CLIENT', 'SPAN_KIND_PRODUCER', 'SPAN_KIND_CONSUMER'];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

type Obj = Record<string, unknown>;

/**
 * Every span of an OTLP/JSON document, in document order. `file` names the source in errors.
 * Errors: OtelError `BAD_JSON` (not JSON, nor JSON lines: the first bad line is named),
 * `BAD_OTLP` (a field that breaks the mapping, with its path), `NO_SPANS`.
 */
export function parseOtlpJson(text: string, file = 'the trace file'): OtlpSpan[] {
  const docs: Array<{ doc: unknown; prefix: string }> = [];
  try {
    const whole = JSON.parse(text) as unknown;
    if (Array.isArray(whole)) whole.forEach((d, i) => docs.push({ doc: d, prefix: `[${i}].` }));
    else docs.push({ doc: whole, prefix: '' });
  } catch {
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (!line) continue;
      try {
        docs.push({ doc: JSON.parse(line), prefix: `line ${i + 1}: ` });
      } catch (e) {
        throw new OtelError('BAD_JSON', `${file}: line ${i + 1} is not JSON (${(e as Error).message}); expected an OTLP/JSON ExportTraceServiceRequest or JSON lines of them`, { file, line: i + 1 });
      }
    }
  }
  const out: OtlpSpan[] = [];
  for (const { doc, prefix } of docs) readRequest(doc, prefix, file, out);
  if (!out.length) throw new OtelError('NO_SPANS', `${file}: no spans (expected {"resourceSpans": [{"scopeSpans": [{"spans": [...]}]}]})`, { file });
  return out;
}

function readRequest(doc: unknown, prefix: string, file: string, out: OtlpSpan[]): void {
  const bad = (path: string, what: string): never => {
    throw new OtelError('BAD_OTLP', `${file}: ${prefix}${path}: ${what}`, { file, path: `${prefix}${path}` });
  };
  if (!isObj(doc)) bad('(document)', 'expected an object with resourceSpans');
  const rs = field(doc as Obj, 'resourceSpans', 'resource_spans') ?? [];
  if (!Array.isArray(rs)) bad('resourceSpans', 'expected an array');
  (rs as unknown[]).forEach((r, i) => {
    const rp = `resourceSpans[${i}]`;
    if (!isObj(r)) bad(rp, 'expected an object');
    const resObj = field(r as Obj, 'resource');
    const resource = resObj === undefined ? {} : attributesOf(isObj(resObj) ? field(resObj, 'attributes') : bad(`${rp}.resource`, 'expected an object'), `${rp}.resource.attributes`, bad);
    const ss = field(r as Obj, 'scopeSpans', 'scope_spans') ?? [];
    if (!Array.isArray(ss)) bad(`${rp}.scopeSpans`, 'expected an array');
    (ss as unknown[]).forEach((s, j) => {
      const sp = `${rp}.scopeSpans[${j}]`;
      if (!isObj(s)) bad(sp, 'expected an object');
      const scopeObj = field(s as Obj, 'scope');
      const scope = { name: isObj(scopeObj) ? str(field(scopeObj, 'name'), `${sp}.scope.name`, bad) ?? '' : '', version: isObj(scopeObj) ? str(field(scopeObj, 'version'), `${sp}.scope.version`, bad) : undefined };
      const spans = field(s as Obj, 'spans') ?? [];
      if (!Array.isArray(spans)) bad(`${sp}.spans`, 'expected an array');
      (spans as unknown[]).forEach((span, k) => out.push(readSpan(span, `${sp}.spans[${k}]`, scope, resource, prefix, bad)));
    });
  });
}

function readSpan(span: unknown, p: string, scope: OtlpSpan['scope'], resource: Record<string, AttrValue>, prefix: string, bad: (path: string, what: string) => never): OtlpSpan {
  if (!isObj(span)) bad(p, 'expected an object');
  const o = span as Obj;
  const traceId = id(field(o, 'traceId', 'trace_id'), 16, `${p}.traceId`, bad, true)!;
  const spanId = id(field(o, 'spanId', 'span_id'), 8, `${p}.spanId`, bad, true)!;
  const parentSpanId = id(field(o, 'parentSpanId', 'parent_span_id'), 8, `${p}.parentSpanId`, bad, false);
  const statusObj = field(o, 'status');
  const status = isObj(statusObj)
    ? { code: enumOf(field(statusObj, 'code'), STATUS_CODES, `${p}.status.code`, bad), message: str(field(statusObj, 'message'), `${p}.status.message`, bad) || undefined }
    : { code: 0 };
  const evs = field(o, 'events') ?? [];
  if (!Array.isArray(evs)) bad(`${p}.events`, 'expected an array');
  return {
    traceId,
    spanId,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: str(field(o, 'name'), `${p}.name`, bad) ?? '',
    kind: enumOf(field(o, 'kind'), SPAN_KINDS, `${p}.kind`, bad),
    startNs: nanos(field(o, 'startTimeUnixNano', 'start_time_unix_nano'), `${p}.startTimeUnixNano`, bad),
    endNs: nanos(field(o, 'endTimeUnixNano', 'end_time_unix_nano'), `${p}.endTimeUnixNano`, bad),
    attributes: attributesOf(field(o, 'attributes'), `${p}.attributes`, bad),
    status,
    events: (evs as unknown[]).map((ev, i) => {
      const ep = `${p}.events[${i}]`;
      if (!isObj(ev)) bad(ep, 'expected an object');
      return { name: str(field(ev as Obj, 'name'), `${ep}.name`, bad) ?? '', timeNs: nanos(field(ev as Obj, 'timeUnixNano', 'time_unix_nano'), `${ep}.timeUnixNano`, bad), attributes: attributesOf(field(ev as Obj, 'attributes'), `${ep}.attributes`, bad) };
    }),
    scope,
    resource,
    path: `${prefix}${p}`,
  };
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function field(o: Obj, camel: string, snake?: string): unknown {
  return o[camel] ?? (snake === undefined ? undefined : o[snake]);
}

function str(v: unknown, p: string, bad: (path: string, what: string) => never): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : bad(p, `expected a string, got ${JSON.stringify(v)}`);
}

/** A trace (16 bytes) or span (8 bytes) id: hex as OTLP/JSON writes it, or base64 as proto3 JSON does; lowercase hex out. */
function id(v: unknown, bytes: number, p: string, bad: (path: string, what: string) => never, required: boolean): string | undefined {
  const an = bytes === 8 ? 'an' : 'a';
  if (v === undefined || v === null || v === '') return required ? bad(p, `missing (${an} ${bytes}-byte id as ${bytes * 2} hex digits)`) : undefined;
  if (typeof v !== 'string') return bad(p, `expected a hex string, got ${JSON.stringify(v)}`);
  let hex: string | undefined;
  if (v.length === bytes * 2 && /^[0-9a-fA-F]+$/.test(v)) hex = v.toLowerCase();
  else if (/^[A-Za-z0-9+/]+={0,2}$/.test(v)) {
    const raw = Buffer.from(v, 'base64');
    if (raw.length === bytes) hex = raw.toString('hex');
  }
  if (!hex) return bad(p, `"${v}" is not ${an} ${bytes}-byte id (${bytes * 2} hex digits)`);
  if (/^0+$/.test(hex)) return bad(p, 'an all-zero id is invalid');
  return hex;
}

/** fixed64 nanoseconds: a decimal string or a number. */
function nanos(v: unknown, p: string, bad: (path: string, what: string) => never): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return BigInt(v);
  return bad(p, `expected epoch nanoseconds as a decimal string, got ${JSON.stringify(v)}`);
}

function enumOf(v: unknown, names: readonly string[], p: string, bad: (path: string, what: string) => never): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < names.length) return v;
  if (typeof v === 'string' && names.includes(v)) return names.indexOf(v);
  return bad(p, `expected one of 0..${names.length - 1} (${names.join(', ')}), got ${JSON.stringify(v)}`);
}

/** Deepest nesting of attribute values (arrayValue / kvlistValue inside each other). */
export const MAX_VALUE_DEPTH = 32;

function attributesOf(v: unknown, p: string, bad: (path: string, what: string) => never, depth = 0): Record<string, AttrValue> {
  if (v === undefined || v === null) return {};
  if (!Array.isArray(v)) return bad(p, 'expected an array of {key, value}');
  const out: Record<string, AttrValue> = {};
  v.forEach((kv, i) => {
    if (!isObj(kv) || typeof kv['key'] !== 'string') bad(`${p}[${i}]`, 'expected {key: string, value: AnyValue}');
    const key = (kv as Obj)['key'] as string;
    // The OpenTelemetry common spec: an attribute is a key and a value; a null value is not allowed.
    if ((kv as Obj)['value'] === undefined || (kv as Obj)['value'] === null) bad(`${p}[${i}]`, `attribute "${key.slice(0, 100)}" has no value (an attribute is {key, value: AnyValue})`);
    out[key] = anyValue((kv as Obj)['value'], `${p}[${i}].value`, bad, depth);
  });
  return out;
}

function anyValue(v: unknown, p: string, bad: (path: string, what: string) => never, depth = 0): AttrValue {
  if (v === undefined || v === null) return null;
  if (depth >= MAX_VALUE_DEPTH) return bad(p, `attribute values nest deeper than ${MAX_VALUE_DEPTH} levels`);
  if (!isObj(v)) return bad(p, 'expected an AnyValue object');
  const o = v as Obj;
  const s = field(o, 'stringValue', 'string_value');
  if (s !== undefined) return typeof s === 'string' ? s : bad(p, 'stringValue must be a string');
  const b = field(o, 'boolValue', 'bool_value');
  if (b !== undefined) return typeof b === 'boolean' ? b : bad(p, 'boolValue must be a boolean');
  const i = field(o, 'intValue', 'int_value');
  if (i !== undefined) {
    if (typeof i === 'number' && Number.isInteger(i)) return i;
    if (typeof i === 'string' && /^-?\d+$/.test(i)) return Number(i);
    return bad(p, `intValue must be an integer (number or decimal string), got ${JSON.stringify(i)}`);
  }
  const d = field(o, 'doubleValue', 'double_value');
  if (d !== undefined) {
    if (typeof d === 'number') return d;
    if (d === 'NaN' || d === 'Infinity' || d === '-Infinity') return Number(d);
    return bad(p, 'doubleValue must be a number');
  }
  const bytes = field(o, 'bytesValue', 'bytes_value');
  if (bytes !== undefined) return typeof bytes === 'string' ? bytes : bad(p, 'bytesValue must be base64 text');
  const arr = field(o, 'arrayValue', 'array_value');
  if (arr !== undefined) {
    const values = isObj(arr) ? (arr['values'] ?? []) : bad(p, 'arrayValue must be {values: [...]}');
    if (!Array.isArray(values)) return bad(`${p}.arrayValue.values`, 'expected an array');
    return values.map((x, k) => anyValue(x, `${p}.arrayValue.values[${k}]`, bad, depth + 1));
  }
  const kv = field(o, 'kvlistValue', 'kvlist_value');
  if (kv !== undefined) {
    if (!isObj(kv)) return bad(p, 'kvlistValue must be {values: [...]}');
    return attributesOf(kv['values'] ?? [], `${p}.kvlistValue.values`, bad, depth + 1);
  }
  return null; // an empty AnyValue
}

/** Epoch nanoseconds as epoch milliseconds (exact for whole milliseconds). */
export function msOf(ns: bigint): number {
  return Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6;
}
