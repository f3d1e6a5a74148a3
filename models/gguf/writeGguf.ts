/**
 * A small GGUF v3 writer: metadata key/values, tensor infos and F32 tensor data, written
 * atomically (temp file in the same folder, then rename). Enough to produce LoRA adapters and
 * test fixtures that llama.cpp loads; not a converter.
 *
 * Layout (GGUF v3, little endian): magic `GGUF`, u32 version, u64 tensor count, u64 key/value
 * count; the key/values (u64-length-prefixed UTF-8 key, u32 value type, value); the tensor infos
 * (name, u32 dimension count, u64 `ne` per dimension — `ne[0]` is the fastest-varying axis —,
 * u32 ggml type, u64 offset of the data relative to the data section); zero padding up to
 * `alignment`; then each tensor's data, each starting at a multiple of `alignment`.
 */
import { randomBytes } from 'node:crypto';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** GGUF metadata value types (gguf.h `enum gguf_type`). */
const T = { u8: 0, i8: 1, u16: 2, i16: 3, u32: 4, i32: 5, f32: 6, bool: 7, string: 8, array: 9, u64: 10, i64: 11, f64: 12 } as const;

/** Scalar metadata types by name. */
export type GgufScalarType = 'u8' | 'i8' | 'u16' | 'i16' | 'u32' | 'i32' | 'u64' | 'i64' | 'f32' | 'f64' | 'bool' | 'string';

/**
 * A metadata value. A JS `string` is a GGUF string and a `boolean` a GGUF bool; numbers must
 * say their type (`{ type: 'f32', value: 16 }`), since GGUF readers check it (llama.cpp reads
 * `adapter.lora.alpha` as f32 only). Arrays hold items of one scalar type.
 */
export type GgufValue =
  | string
  | boolean
  | { type: Exclude<GgufScalarType, 'string' | 'bool'>; value: number | bigint }
  | { type: 'array'; itemType: GgufScalarType; items: ReadonlyArray<string | number | bigint | boolean> };

/** One F32 tensor. `dims` are in GGUF `ne` order: `[in, out]` stores a row-major `[out][in]` matrix. */
export interface GgufTensor {
  name: string;
  dims: readonly number[];
  data: Float32Array;
}

export interface GgufDocument {
  /** Key/values in file order (insertion order). */
  metadata: Record<string, GgufValue>;
  tensors: readonly GgufTensor[];
  /**
   * Data alignment in bytes (a power of two). Defaults to 32, GGUF's default; any other value
   * is also written as `general.alignment` so readers find it.
   */
  alignment?: number;
}

/** ggml's name limit (GGML_MAX_NAME = 64, including the terminating NUL). */
const MAX_TENSOR_NAME = 63;
const GGML_TYPE_F32 = 0;

/** Serialises a document to GGUF v3 bytes. Throws `RangeError`/`TypeError` on an invalid document. */
export function encodeGguf(doc: GgufDocument): Buffer {
  const alignment = doc.alignment ?? 32;
  if (!Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0) {
    throw new RangeError(`GGUF alignment must be a power of two, got ${alignment}`);
  }
  const metadata: Record<string, GgufValue> = { ...doc.metadata };
  if (alignment !== 32) metadata['general.alignment'] = { type: 'u32', value: alignment };

  const w = new ByteWriter();
  w.raw(Buffer.from('GGUF', 'latin1'));
  w.u32(3);
  w.u64(BigInt(doc.tensors.length));
  w.u64(BigInt(Object.keys(metadata).length));
  for (const [key, value] of Object.entries(metadata)) {
    w.str(key);
    writeValue(w, key, value);
  }

  const names = new Set<string>();
  let offset = 0;
  const offsets: number[] = [];
  for (const t of doc.tensors) {
    if (!t.name || Buffer.byteLength(t.name, 'utf8') > MAX_TENSOR_NAME) {
      throw new RangeError(`tensor name "${t.name}" must be 1-${MAX_TENSOR_NAME} bytes`);
    }
    if (names.has(t.name)) throw new RangeError(`duplicate tensor name "${t.name}"`);
    names.add(t.name);
    if (t.dims.length < 1 || t.dims.length > 4) throw new RangeError(`tensor "${t.name}" must have 1-4 dimensions, got ${t.dims.length}`);
    for (const d of t.dims) {
      if (!Number.isInteger(d) || d < 1) throw new RangeError(`tensor "${t.name}" has an invalid dimension ${d}`);
    }
    const elements = t.dims.reduce((a, b) => a * b, 1);
    if (t.data.length !== elements) {
      throw new RangeError(`tensor "${t.name}" has ${t.data.length} values, its dimensions [${t.dims.join(', ')}] need ${elements}`);
    }
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(BigInt(d));
    w.u32(GGML_TYPE_F32);
    w.u64(BigInt(offset));
    offsets.push(offset);
    offset = alignUp(offset + elements * 4, alignment);
  }
  w.pad(alignment);
  const dataStart = w.length;
  const out = Buffer.alloc(dataStart + offset);
  w.copyTo(out);
  doc.tensors.forEach((t, i) => {
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    if (isLittleEndian()) {
      bytes.copy(out, dataStart + offsets[i]!);
    } else {
      for (let j = 0; j < t.data.length; j++) out.writeFloatLE(t.data[j]!, dataStart + offsets[i]! + j * 4);
    }
  });
  return out;
}

/**
 * Writes a GGUF file atomically: the bytes go to a temp file next to `file`, which is then
 * renamed over it, so a reader never sees a half-written file (and a crash leaves the old one).
 */
export async function writeGguf(file: string, doc: GgufDocument): Promise<void> {
  const bytes = encodeGguf(doc);
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, bytes, { flag: 'wx' });
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

function writeValue(w: ByteWriter, key: string, value: GgufValue): void {
  if (typeof value === 'string') {
    w.u32(T.string);
    w.str(value);
  } else if (typeof value === 'boolean') {
    w.u32(T.bool);
    w.u8(value ? 1 : 0);
  } else if (value.type === 'array') {
    w.u32(T.array);
    w.u32(T[value.itemType]);
    w.u64(BigInt(value.items.length));
    for (const item of value.items) writeScalar(w, key, value.itemType, item);
  } else {
    w.u32(T[value.type]);
    writeScalar(w, key, value.type, value.value);
  }
}

function writeScalar(w: ByteWriter, key: string, type: GgufScalarType, v: string | number | bigint | boolean): void {
  const bad = () => new TypeError(`metadata "${key}": ${String(v)} is not a valid ${type}`);
  if (type === 'string') {
    if (typeof v !== 'string') throw bad();
    w.str(v);
    return;
  }
  if (type === 'bool') {
    if (typeof v !== 'boolean') throw bad();
    w.u8(v ? 1 : 0);
    return;
  }
  if (typeof v !== 'number' && typeof v !== 'bigint') throw bad();
  if (type === 'f32' || type === 'f64') {
    const n = Number(v);
    if (type === 'f32') w.f32(n);
    else w.f64(n);
    return;
  }
  const n = BigInt(typeof v === 'number' ? (Number.isInteger(v) ? v : NaN) : v);
  const bits = { u8: 8, i8: 8, u16: 16, i16: 16, u32: 32, i32: 32, u64: 64, i64: 64 }[type];
  const signed = type.startsWith('i');
  const min = signed ? -(1n << BigInt(bits - 1)) : 0n;
  const max = signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n;
  if (n < min || n > max) throw bad();
  const b = Buffer.alloc(bits / 8);
  if (bits === 64) {
    if (signed) b.writeBigInt64LE(n);
    else b.writeBigUInt64LE(n);
  } else if (signed) {
    b.writeIntLE(Number(n), 0, bits / 8);
  } else {
    b.writeUIntLE(Number(n), 0, bits / 8);
  }
  w.raw(b);
}

const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;
const isLittleEndian = () => new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Appends little-endian values to growing chunks. */
class ByteWriter {
  private readonly chunks: Buffer[] = [];
  length = 0;

  raw(b: Buffer): void {
    this.chunks.push(b);
    this.length += b.length;
  }
  u8(n: number): void {
    const b = Buffer.alloc(1);
    b.writeUInt8(n);
    this.raw(b);
  }
  u32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    this.raw(b);
  }
  u64(n: bigint): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(n);
    this.raw(b);
  }
  f32(n: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(n);
    this.raw(b);
  }
  f64(n: number): void {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(n);
    this.raw(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(BigInt(b.length));
    this.raw(b);
  }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    if (n) this.raw(Buffer.alloc(n));
  }
  copyTo(out: Buffer): void {
    let o = 0;
    for (const c of this.chunks) {
      c.copy(out, o);
      o += c.length;
    }
  }
}
