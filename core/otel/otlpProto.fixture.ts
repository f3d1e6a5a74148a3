/**
 * The OTLP trace messages as the proto files define them (opentelemetry-proto:
 * opentelemetry/proto/collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
 * common/v1/common.proto, resource/v1/resource.proto): field numbers, types and the JSON names
 * of the protobuf JSON mapping (lowerCamelCase). Two readers over it, written apart from the
 * OpenTelemetry packages so they can check them:
 *   - `decodeProto(bytes)`: binary protobuf -> canonical JSON mapping;
 *   - `canonicalJson(doc)`: an OTLP/JSON document -> the same canonical form, throwing on any
 *     field the message does not have or any value of the wrong JSON type (hex ids of the right
 *     length, int64 as decimal strings or integers, enums as numbers in range).
 * Canonical: int64/fixed64 as decimal strings, uint32/fixed32/enums as numbers, ids as lowercase
 * hex, other bytes as base64; fields at their proto3 default and empty messages left out (binary
 * protobuf does not write them), except the members of AnyValue's oneof, which are always kept.
 */
type Scalar = 'string' | 'bool' | 'int64' | 'fixed64' | 'uint32' | 'fixed32' | 'double' | 'id16' | 'id8' | 'bytes' | { enum: number };
interface Field {
  name: string;
  type: Scalar | { message: string };
  repeated?: boolean;
  oneof?: boolean;
}

const F = (name: string, type: Field['type'], extra: Partial<Field> = {}): Field => ({ name, type, ...extra });
const M = (message: string) => ({ message });

export const OTLP_SCHEMA: Record<string, Record<number, Field>> = {
  ExportTraceServiceRequest: { 1: F('resourceSpans', M('ResourceSpans'), { repeated: true }) },
  ResourceSpans: { 1: F('resource', M('Resource')), 2: F('scopeSpans', M('ScopeSpans'), { repeated: true }), 3: F('schemaUrl', 'string') },
  Resource: { 1: F('attributes', M('KeyValue'), { repeated: true }), 2: F('droppedAttributesCount', 'uint32') },
  ScopeSpans: { 1: F('scope', M('InstrumentationScope')), 2: F('spans', M('Span'), { repeated: true }), 3: F('schemaUrl', 'string') },
  InstrumentationScope: { 1: F('name', 'string'), 2: F('version', 'string'), 3: F('attributes', M('KeyValue'), { repeated: true }), 4: F('droppedAttributesCount', 'uint32') },
  Span: {
    1: F('traceId', 'id16'),
    2: F('spanId', 'id8'),
    3: F('traceState', 'string'),
    4: F('parentSpanId', 'id8'),
    5: F('name', 'string'),
    6: F('kind', { enum: 6 }),
    7: F('startTimeUnixNano', 'fixed64'),
    8: F('endTimeUnixNano', 'fixed64'),
    9: F('attributes', M('KeyValue'), { repeated: true }),
    10: F('droppedAttributesCount', 'uint32'),
    11: F('events', M('Event'), { repeated: true }),
    12: F('droppedEventsCount', 'uint32'),
    13: F('links', M('Link'), { repeated: true }),
    14: F('droppedLinksCount', 'uint32'),
    15: F('status', M('Status')),
    16: F('flags', 'fixed32'),
  },
  Event: { 1: F('timeUnixNano', 'fixed64'), 2: F('name', 'string'), 3: F('attributes', M('KeyValue'), { repeated: true }), 4: F('droppedAttributesCount', 'uint32') },
  Link: { 1: F('traceId', 'id16'), 2: F('spanId', 'id8'), 3: F('traceState', 'string'), 4: F('attributes', M('KeyValue'), { repeated: true }), 5: F('droppedAttributesCount', 'uint32'), 6: F('flags', 'fixed32') },
  Status: { 2: F('message', 'string'), 3: F('code', { enum: 3 }) },
  KeyValue: { 1: F('key', 'string'), 2: F('value', M('AnyValue')) },
  AnyValue: {
    1: F('stringValue', 'string', { oneof: true }),
    2: F('boolValue', 'bool', { oneof: true }),
    3: F('intValue', 'int64', { oneof: true }),
    4: F('doubleValue', 'double', { oneof: true }),
    5: F('arrayValue', M('ArrayValue'), { oneof: true }),
    6: F('kvlistValue', M('KeyValueList'), { oneof: true }),
    7: F('bytesValue', 'bytes', { oneof: true }),
  },
  ArrayValue: { 1: F('values', M('AnyValue'), { repeated: true }) },
  KeyValueList: { 1: F('values', M('KeyValue'), { repeated: true }) },
};

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Whether `v` is field `f`'s proto3 default (binary protobuf leaves such fields out). */
function isDefault(f: Field, v: Json): boolean {
  if (f.repeated) return Array.isArray(v) && v.length === 0;
  const t = f.type;
  if (typeof t === 'object' && 'message' in t) return typeof v === 'object' && v !== null && Object.keys(v).length === 0;
  if (typeof t === 'object') return v === 0;
  if (t === 'int64' || t === 'fixed64') return v === '0';
  if (t === 'uint32' || t === 'fixed32' || t === 'double') return v === 0;
  if (t === 'bool') return v === false;
  return v === '';
}

function put(out: Record<string, Json>, f: Field, v: Json): void {
  if (f.repeated) {
    ((out[f.name] ??= []) as Json[]).push(v);
    return;
  }
  out[f.name] = v;
}

function finish(out: Record<string, Json>, fields: Record<number, Field>): Record<string, Json> {
  for (const f of Object.values(fields)) if (!f.oneof && f.name in out && isDefault(f, out[f.name]!)) delete out[f.name];
  return out;
}

// ---------- binary protobuf ----------

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly end = buf.length) {}
  varint(): bigint {
    let shift = 0n;
    let v = 0n;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  }
  fixed(bytes: 4 | 8): bigint {
    let v = 0n;
    for (let i = 0; i < bytes; i++) v |= BigInt(this.buf[this.pos + i]!) << BigInt(8 * i);
    this.pos += bytes;
    return v;
  }
  bytes(): Uint8Array {
    const n = Number(this.varint());
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

/** Binary protobuf of `message` (default ExportTraceServiceRequest) in the canonical JSON mapping. Throws on an unknown field or a wrong wire type. */
export function decodeProto(buf: Uint8Array, message = 'ExportTraceServiceRequest'): Record<string, Json> {
  const fields = OTLP_SCHEMA[message]!;
  const r = new Reader(buf);
  const out: Record<string, Json> = {};
  while (r.pos < r.end) {
    const tag = Number(r.varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    const f = fields[no];
    if (!f) throw new Error(`${message}: unknown field number ${no}`);
    const t = f.type;
    const want = typeof t === 'object' && 'message' in t ? 2 : t === 'fixed64' || t === 'double' ? 1 : t === 'fixed32' ? 5 : t === 'string' || t === 'bytes' || t === 'id16' || t === 'id8' ? 2 : 0;
    if (wire !== want) throw new Error(`${message}.${f.name}: wire type ${wire}, expected ${want}`);
    let v: Json;
    if (typeof t === 'object' && 'message' in t) v = decodeProto(r.bytes(), t.message);
    else if (typeof t === 'object') v = Number(r.varint());
    else if (t === 'string') v = new TextDecoder().decode(r.bytes());
    else if (t === 'id16' || t === 'id8') v = Buffer.from(r.bytes()).toString('hex');
    else if (t === 'bytes') v = Buffer.from(r.bytes()).toString('base64');
    else if (t === 'bool') v = r.varint() !== 0n;
    else if (t === 'int64') v = BigInt.asIntN(64, r.varint()).toString();
    else if (t === 'uint32') v = Number(r.varint());
    else if (t === 'fixed64') v = r.fixed(8).toString();
    else if (t === 'fixed32') v = Number(r.fixed(4));
    else {
      const dv = new DataView(r.buf.buffer, r.buf.byteOffset + r.pos, 8);
      v = dv.getFloat64(0, true);
      r.pos += 8;
    }
    put(out, f, v);
  }
  return finish(out, fields);
}

// ---------- OTLP/JSON ----------

/** An OTLP/JSON document of `message` in the canonical form. Throws, naming the path, on anything the mapping does not allow. */
export function canonicalJson(doc: unknown, message = 'ExportTraceServiceRequest', path = message): Record<string, Json> {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error(`${path}: expected an object`);
  const fields = OTLP_SCHEMA[message]!;
  const byName = new Map(Object.values(fields).map((f) => [f.name, f]));
  const out: Record<string, Json> = {};
  for (const [key, raw] of Object.entries(doc as Record<string, unknown>)) {
    const f = byName.get(key);
    if (!f) throw new Error(`${path}.${key}: not a field of ${message} (fields: ${[...byName.keys()].join(', ')})`);
    if (raw === undefined || raw === null) continue;
    const items = f.repeated ? (Array.isArray(raw) ? raw : fail(`${path}.${key}: expected an array`)) : [raw];
    items.forEach((v, i) => put(out, f, value(f, v, f.repeated ? `${path}.${key}[${i}]` : `${path}.${key}`)));
  }
  return finish(out, fields);
}

function fail(msg: string): never {
  throw new Error(msg);
}

function value(f: Field, v: unknown, path: string): Json {
  const t = f.type;
  if (typeof t === 'object' && 'message' in t) return canonicalJson(v, t.message, path);
  if (typeof t === 'object') return Number.isInteger(v) && (v as number) >= 0 && (v as number) < t.enum ? (v as number) : fail(`${path}: expected an enum number 0..${t.enum - 1}, got ${JSON.stringify(v)}`);
  switch (t) {
    case 'string':
      return typeof v === 'string' ? v : fail(`${path}: expected a string`);
    case 'bool':
      return typeof v === 'boolean' ? v : fail(`${path}: expected a boolean`);
    case 'id16':
    case 'id8': {
      const n = t === 'id16' ? 32 : 16;
      return typeof v === 'string' && new RegExp(`^[0-9a-f]{${n}}$`).test(v) ? v : fail(`${path}: expected ${n} lowercase hex digits, got ${JSON.stringify(v)}`);
    }
    case 'bytes':
      return typeof v === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(v) ? v : fail(`${path}: expected base64`);
    case 'int64':
      if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
      return typeof v === 'string' && /^-?\d+$/.test(v) ? v : fail(`${path}: expected an int64 (decimal string or integer), got ${JSON.stringify(v)}`);
    case 'fixed64':
      return typeof v === 'string' && /^\d+$/.test(v) ? v : fail(`${path}: expected a fixed64 as a decimal string, got ${JSON.stringify(v)}`);
    case 'uint32':
    case 'fixed32':
      return Number.isInteger(v) && (v as number) >= 0 && (v as number) < 2 ** 32 ? (v as number) : fail(`${path}: expected a 32-bit unsigned integer`);
    case 'double':
      return typeof v === 'number' ? v : fail(`${path}: expected a number`);
  }
}
