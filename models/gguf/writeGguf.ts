/**
 * The GGUF writer: every GGUF file this repository writes (LoRA adapters, trainer checkpoints'
 * copies, test fixtures) is encoded here. Not a converter.
 *
 * Layout (GGUF v3, or v2 on request; ggml's `docs/gguf.md` and `ggml/src/gguf.cpp`; little
 * endian throughout): magic `GGUF`, u32 version, u64 tensor count, u64 key/value count; the
 * key/values (u64-length-prefixed UTF-8 key, u32 value type, value; arrays are u32 item type,
 * u64 count, items); the tensor infos (name, u32 dimension count, u64 `ne` per dimension —
 * `ne[0]` is the fastest-varying axis —, u32 ggml type, u64 offset of the data relative to the
 * data section); zero padding up to `alignment`; then each tensor's data, each starting at a
 * multiple of `alignment` and zero-padded to the next one. Offsets are packed in tensor order
 * (each tensor's offset is the previous one's plus its size rounded up to `alignment`), as
 * llama.cpp's own writer packs them, so re-encoding a parsed llama.cpp file gives its bytes back.
 *
 * Three entry points, one encoder:
 * - {@link encodeGguf} / {@link writeGguf}: a checked document of F32 tensors (names, shapes and
 *   value counts validated), written atomically.
 * - {@link encodeGgufLayout}: exactly the entries, tensor types and payload bytes it is given
 *   (any version, any ggml type, unchecked shapes), for fixtures, including files readers must
 *   refuse.
 * - {@link layoutOfGguf}: a parsed file as a layout, to re-encode it with changes.
 */
import {
  GGUF_VALUE_TYPES,
  GgufError,
  type GgufFile,
  type GgufMetadataValue,
  type GgufValueTypeName,
} from './readGguf.ts';
import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { killPoint } from '../../core/killPoint.ts';

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

/** A checked document of F32 tensors (see {@link encodeGguf}). */
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

/** A metadata value with its GGUF type spelled out: the form {@link encodeGgufLayout} writes and `readGguf` reads. */
export interface GgufTypedValue {
  type: GgufValueTypeName;
  /** For arrays: the items' type (a scalar type). */
  itemType?: GgufValueTypeName;
  value: GgufMetadataValue;
}

/** A tensor as stored: its ggml type number (0 F32, 1 F16, 30 BF16, 2 Q4_0, ...) and its payload bytes. */
export interface GgufRawTensor {
  name: string;
  /** GGUF `ne` order. */
  dims: readonly number[];
  type: number;
  bytes: Uint8Array;
}

/** Everything a GGUF file holds, as {@link encodeGgufLayout} writes it. */
export interface GgufLayout {
  /** GGUF version written. Defaults to 3. */
  version?: number;
  /**
   * Padding of the header and of each payload, in bytes. Defaults to 32. Not added to the
   * metadata: give `general.alignment` yourself when it is not 32.
   */
  alignment?: number;
  /** Key/values in file order (duplicates are written as given). */
  metadata: ReadonlyArray<readonly [string, GgufTypedValue]>;
  tensors: readonly GgufRawTensor[];
}

/** ggml's name limit (GGML_MAX_NAME = 64, including the terminating NUL). */
const MAX_TENSOR_NAME = 63;
const GGML_TYPE_F32 = 0;

/**
 * Serialises a checked document to GGUF v3 bytes.
 * @throws RangeError (alignment not a power of two; a tensor name empty, longer than 63 bytes or
 *   repeated; 0 or more than 4 dimensions; a dimension not a positive integer; a value count
 *   other than the dimensions' product), TypeError (a metadata value not of its type), each
 *   naming the key or tensor.
 */
export function encodeGguf(doc: GgufDocument): Buffer {
  const alignment = doc.alignment ?? 32;
  if (!Number.isInteger(alignment) || alignment <= 0 || (alignment & (alignment - 1)) !== 0) {
    throw new RangeError(`GGUF alignment must be a power of two, got ${alignment}`);
  }
  const metadata: Record<string, GgufValue> = { ...doc.metadata };
  if (alignment !== 32) metadata['general.alignment'] = { type: 'u32', value: alignment };

  const names = new Set<string>();
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
  }
  return encodeGgufLayout({
    alignment,
    metadata: Object.entries(metadata).map(([key, value]) => [key, typedValue(value)] as const),
    tensors: doc.tensors.map((t) => ({ name: t.name, dims: t.dims, type: GGML_TYPE_F32, bytes: f32Bytes(t.data) })),
  });
}

/**
 * Serialises a layout to GGUF bytes exactly as given: no checks of names, shapes, payload sizes
 * or version, so fixtures can hold what readers must refuse.
 * @throws TypeError when a metadata value does not fit its type (out of range, wrong kind, a
 *   nested array), naming the key; RangeError for an alignment that is not a positive integer.
 */
export function encodeGgufLayout(layout: GgufLayout): Buffer {
  const alignment = layout.alignment ?? 32;
  if (!Number.isInteger(alignment) || alignment <= 0) throw new RangeError(`GGUF alignment must be a positive integer, got ${alignment}`);
  const w = new ByteWriter();
  w.raw(Buffer.from('GGUF', 'latin1'));
  w.u32(layout.version ?? 3);
  w.u64(BigInt(layout.tensors.length));
  w.u64(BigInt(layout.metadata.length));
  for (const [key, value] of layout.metadata) {
    w.str(key);
    writeValue(w, key, value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of layout.tensors) {
    w.str(t.name);
    w.u32(t.dims.length);
    for (const d of t.dims) w.u64(BigInt(d));
    w.u32(t.type);
    w.u64(BigInt(offset));
    offsets.push(offset);
    offset = alignUp(offset + t.bytes.length, alignment);
  }
  w.pad(alignment);
  const dataStart = w.length;
  const out = Buffer.alloc(dataStart + offset);
  w.copyTo(out);
  layout.tensors.forEach((t, i) => out.set(t.bytes, dataStart + offsets[i]!));
  return out;
}

/**
 * A parsed file as a layout: its version, alignment, metadata (file order) and tensors, whose
 * payloads are views of `bytes` (the whole file). `encodeGgufLayout(layoutOfGguf(f, b))` gives
 * `b` back for a file with packed offsets (every file llama.cpp writes).
 * @throws GgufError `GGUF_UNSUPPORTED_TENSOR_TYPE` for a tensor of a ggml type whose size is unknown.
 */
export function layoutOfGguf(file: GgufFile, bytes: Uint8Array): Required<GgufLayout> {
  return {
    version: file.version,
    alignment: file.alignment,
    metadata: metadataEntries(file),
    tensors: file.tensors.map((t) => {
      if (t.byteLength === undefined) {
        throw new GgufError('GGUF_UNSUPPORTED_TENSOR_TYPE', `Cannot copy tensor "${t.name}" of unknown type ${t.typeName}: ${file.path}`, file.path, t.name);
      }
      return { name: t.name, dims: t.dims, type: t.type, bytes: bytes.subarray(t.fileOffset, t.fileOffset + t.byteLength) };
    }),
  };
}

/** The metadata of a parsed file as typed entries, in file order, without the keys in `omit`. */
export function metadataEntries(file: GgufFile, omit: readonly string[] = []): Array<[string, GgufTypedValue]> {
  return Object.entries(file.metadata)
    .filter(([k]) => !omit.includes(k))
    .map(([k, value]) => {
      const type = file.valueTypes[k]!;
      const v: GgufTypedValue = { type, value };
      if (type === 'array') v.itemType = file.arrayItemTypes[k] ?? 'u8';
      return [k, v];
    });
}

/**
 * Writes a GGUF file atomically (see {@link writeAtomically}).
 * @throws the errors of {@link encodeGguf} (nothing is written); GgufError `GGUF_IO` naming the file.
 */
export async function writeGguf(file: string, doc: GgufDocument): Promise<void> {
  await writeAtomically(file, encodeGguf(doc));
}

/**
 * Writes `bytes` to `file` atomically: temp file `.<name>.<pid>.<random>.tmp` in the same folder
 * (same file system, so the rename is atomic), fsync, rename. A reader never sees a half-written
 * file, and a crash leaves the old one. Removes the temp file on failure.
 * @throws GgufError `GGUF_IO` naming `file` (the system error's message included).
 */
export async function writeAtomically(file: string, bytes: Uint8Array): Promise<void> {
  const dir = path.dirname(path.resolve(file));
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fh = await open(tmp, 'wx');
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    killPoint('gguf-temp-written');
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    if (err instanceof GgufError) throw err;
    throw new GgufError('GGUF_IO', `Cannot write ${file}: ${(err as Error).message}`, file, undefined, { cause: err });
  }
}

/** A document value in typed form. */
function typedValue(value: GgufValue): GgufTypedValue {
  if (typeof value === 'string') return { type: 'string', value };
  if (typeof value === 'boolean') return { type: 'bool', value };
  if (value.type === 'array') return { type: 'array', itemType: value.itemType, value: [...value.items] };
  return { type: value.type, value: value.value };
}

/** F32 values as little-endian bytes. */
function f32Bytes(data: Float32Array): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  const out = Buffer.alloc(data.length * 4);
  for (let j = 0; j < data.length; j++) out.writeFloatLE(data[j]!, j * 4);
  return out;
}

function writeValue(w: ByteWriter, key: string, v: GgufTypedValue): void {
  w.u32(typeId(key, v.type));
  if (v.type !== 'array') return writeScalar(w, key, v.type, v.value);
  const itemType = v.itemType ?? 'u8';
  if (itemType === 'array') throw new TypeError(`metadata "${key}": nested arrays are not written`);
  if (!Array.isArray(v.value)) throw new TypeError(`metadata "${key}": an array value must be a JS array`);
  w.u32(typeId(key, itemType));
  w.u64(BigInt(v.value.length));
  for (const item of v.value) writeScalar(w, key, itemType, item);
}

function typeId(key: string, type: GgufValueTypeName): number {
  const id = GGUF_VALUE_TYPES.indexOf(type);
  if (id < 0) throw new TypeError(`metadata "${key}": unknown GGUF value type "${String(type)}"`);
  return id;
}

function writeScalar(w: ByteWriter, key: string, type: GgufValueTypeName, v: GgufMetadataValue): void {
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
  const bits = INT_BITS[type as keyof typeof INT_BITS];
  if (bits === undefined) throw bad();
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

const INT_BITS = { u8: 8, i8: 8, u16: 16, i16: 16, u32: 32, i32: 32, u64: 64, i64: 64 } as const;
const alignUp = (n: number, a: number) => Math.ceil(n / a) * a;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

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
