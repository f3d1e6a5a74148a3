/**
 * A GGUF reader for training: the header (metadata key/values of every value type, tensor infos),
 * with typed errors that name the file and what is wrong with it. The F32 / F16 / BF16 tensor
 * payloads as `Float32Array`: readTensors.ts.
 *
 * Layout (ggml's `docs/gguf.md` and `ggml/src/gguf.cpp`; little endian throughout):
 * - magic `GGUF`, u32 version (2 or 3; version 1 used u32 counts and is not read), u64 tensor
 *   count, u64 key/value count;
 * - key/values: u64-length-prefixed UTF-8 key, u32 value type, value (strings are
 *   u64-length-prefixed UTF-8; arrays are u32 item type + u64 count + items, arrays of arrays
 *   allowed);
 * - tensor infos: name (string), u32 dimension count `n` (<= 4), `n` u64 dimensions `ne`
 *   (`ne[0]` is the fastest-varying axis: a weight with `ne = [in, out]` is a row-major
 *   `[out][in]` matrix, applied as `x @ Wᵀ`), u32 ggml type, u64 offset relative to the data
 *   section (a multiple of the alignment);
 * - zero padding up to `general.alignment` (u32, default 32), then the data section.
 */
import { open, stat } from 'node:fs/promises';
import { FlowlabError } from '../../core/errors.ts';

/** Stable codes of {@link GgufError}. */
export type GgufErrorCode =
  /** Nothing at the path, or it is not a regular file. */
  | 'GGUF_NOT_FOUND'
  /** Does not start with the `GGUF` magic. */
  | 'GGUF_NOT_GGUF'
  /** The file ends inside the header or inside a tensor's data. */
  | 'GGUF_TRUNCATED'
  /** GGUF version other than 2 or 3. */
  | 'GGUF_UNSUPPORTED_VERSION'
  /** Header is inconsistent (unknown value type, bad alignment, misaligned tensor offset, ...). */
  | 'GGUF_CORRUPT'
  /** A tensor's ggml type number is none ggml knows (ggml.h `enum ggml_type`, removed types included): `tensor` names it. */
  | 'GGUF_UNKNOWN_TENSOR_TYPE'
  /** A tensor's ggml type cannot be read as floats (quantised types): `tensor` names it. */
  | 'GGUF_UNSUPPORTED_TENSOR_TYPE'
  /** `general.architecture` is not one the trainer implements (`llama`). */
  | 'GGUF_UNSUPPORTED_ARCHITECTURE'
  /** A llama file with something the trainer's forward pass does not implement (extra tensor, rope scaling, MoE, ...). */
  | 'GGUF_UNSUPPORTED_MODEL'
  /** A tensor asked for by name is not in the file. */
  | 'GGUF_TENSOR_NOT_FOUND'
  /** An I/O error while reading or writing. */
  | 'GGUF_IO';

/** Every failure of this module: `code` says what, `file` which file, `tensor` which tensor (when one). */
export class GgufError extends FlowlabError<GgufErrorCode> {
  override readonly name = 'GgufError';
  constructor(
    code: GgufErrorCode,
    message: string,
    readonly file: string,
    readonly tensor?: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, { file }, options);
  }
}

/** A metadata value: integers as `number` (64-bit ones as `bigint` when beyond 2^53), floats as `number`. */
export type GgufMetadataValue = string | number | bigint | boolean | GgufMetadataValue[];

/** GGUF metadata value type names (gguf.h `enum gguf_type`, by number). */
export const GGUF_VALUE_TYPES = ['u8', 'i8', 'u16', 'i16', 'u32', 'i32', 'f32', 'bool', 'string', 'array', 'u64', 'i64', 'f64'] as const;
export type GgufValueTypeName = (typeof GGUF_VALUE_TYPES)[number];

/** ggml tensor types: number -> [name, elements per block, bytes per block] (ggml.c `type_traits`). */
const GGML_TYPES: Record<number, readonly [name: string, blockElements: number, blockBytes: number]> = {
  0: ['F32', 1, 4],
  1: ['F16', 1, 2],
  2: ['Q4_0', 32, 18],
  3: ['Q4_1', 32, 20],
  6: ['Q5_0', 32, 22],
  7: ['Q5_1', 32, 24],
  8: ['Q8_0', 32, 34],
  9: ['Q8_1', 32, 36],
  10: ['Q2_K', 256, 84],
  11: ['Q3_K', 256, 110],
  12: ['Q4_K', 256, 144],
  13: ['Q5_K', 256, 176],
  14: ['Q6_K', 256, 210],
  15: ['Q8_K', 256, 292],
  16: ['IQ2_XXS', 256, 66],
  17: ['IQ2_XS', 256, 74],
  18: ['IQ3_XXS', 256, 98],
  19: ['IQ1_S', 256, 50],
  20: ['IQ4_NL', 32, 18],
  21: ['IQ3_S', 256, 110],
  22: ['IQ2_S', 256, 82],
  23: ['IQ4_XS', 256, 136],
  24: ['I8', 1, 1],
  25: ['I16', 1, 2],
  26: ['I32', 1, 4],
  27: ['I64', 1, 8],
  28: ['F64', 1, 8],
  29: ['IQ1_M', 256, 56],
  30: ['BF16', 1, 2],
  34: ['TQ1_0', 256, 54],
  35: ['TQ2_0', 256, 66],
  39: ['MXFP4', 32, 17],
};

/** ggml type numbers this module reads as floats (and `rewriteGguf` writes). */
export const GGML_TYPE = { F32: 0, F16: 1, BF16: 30 } as const;

/** Name of a ggml tensor type number (`Q4_K`, ...), `type <n>` when unknown. */
export function ggmlTypeName(type: number): string {
  return GGML_TYPES[type]?.[0] ?? `type ${type}`;
}

/** True for the tensor types whose payload {@link readGgufTensor} converts to floats. */
export function isFloatTensorType(type: number): boolean {
  return type === GGML_TYPE.F32 || type === GGML_TYPE.F16 || type === GGML_TYPE.BF16;
}

/** One tensor of the tensor table. */
export interface GgufTensorInfo {
  name: string;
  /** GGUF `ne`, fastest-varying axis first: `[in, out]` for a weight stored as row-major `[out][in]`. */
  dims: number[];
  /** ggml type number (0 F32, 1 F16, 30 BF16, 2 Q4_0, 12 Q4_K, ...). */
  type: number;
  /** ggml type name, e.g. `F32`. */
  typeName: string;
  /** Product of `dims`. */
  elements: number;
  /** Offset of the payload relative to the data section, as stored in the file. */
  offset: number;
  /** Absolute byte position of the payload in the file (`dataStart + offset`). */
  fileOffset: number;
  /** Payload size in bytes; undefined for a ggml type this module does not know. */
  byteLength?: number;
}

/** A parsed GGUF header. */
export interface GgufFile {
  /** The path as given. */
  path: string;
  sizeBytes: number;
  version: number;
  /** Key/values in file order. */
  metadata: Record<string, GgufMetadataValue>;
  /** Value type of each key (`array` for arrays; see `arrayItemTypes`). */
  valueTypes: Record<string, GgufValueTypeName>;
  /** Item type of each array-valued key. */
  arrayItemTypes: Record<string, GgufValueTypeName>;
  /** Tensor infos in file order. */
  tensors: GgufTensorInfo[];
  /** `general.architecture`, when present. */
  architecture?: string;
  /** `general.alignment` or 32. */
  alignment: number;
  /** Byte position of the data section: the end of the header rounded up to `alignment`. */
  dataStart: number;
}

/** Thrown inside the parser when the bytes run out (the caller reads more or reports truncation). */
/** The reader ran past the end of the bytes; `readGguf` reports it as `GGUF_TRUNCATED`. */
class OutOfBytes extends FlowlabError<'GGUF_TRUNCATED'> {
  override readonly name = 'OutOfBytes';
  constructor() {
    super('GGUF_TRUNCATED', 'unexpected end of the GGUF bytes');
  }
}

/** Little-endian cursor over a header prefix. */
class Cursor {
  pos = 0;
  private readonly view: DataView;
  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  need(n: number): void {
    if (this.pos + n > this.bytes.length) throw new OutOfBytes();
  }
  u8(): number {
    this.need(1);
    return this.view.getUint8(this.pos++);
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.pos, true);
    this.pos += 8;
    return v;
  }
  string(): string {
    const len = this.u64();
    if (len > BigInt(this.bytes.length - this.pos)) throw new OutOfBytes();
    const n = Number(len);
    const s = Buffer.from(this.bytes.buffer, this.bytes.byteOffset + this.pos, n).toString('utf8');
    this.pos += n;
    return s;
  }
  scalar(type: number): GgufMetadataValue {
    const v = this.view;
    const at = (n: number) => {
      this.need(n);
      const p = this.pos;
      this.pos += n;
      return p;
    };
    switch (type) {
      case 0: return v.getUint8(at(1));
      case 1: return v.getInt8(at(1));
      case 2: return v.getUint16(at(2), true);
      case 3: return v.getInt16(at(2), true);
      case 4: return v.getUint32(at(4), true);
      case 5: return v.getInt32(at(4), true);
      case 6: return v.getFloat32(at(4), true);
      case 7: return v.getUint8(at(1)) !== 0;
      case 8: return this.string();
      case 10: return small(v.getBigUint64(at(8), true));
      case 11: return small(v.getBigInt64(at(8), true));
      case 12: return v.getFloat64(at(8), true);
      default: throw new RangeError(`unknown value type ${type}`);
    }
  }
}

/** A 64-bit integer as a number when it is exactly representable. */
function small(v: bigint): number | bigint {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
}

/**
 * Parses a GGUF header from the first bytes of a file.
 *
 * @param bytes a prefix of the file (at least the whole header; the data section is not read).
 * @param filePath named in errors and kept as `path`.
 * @param sizeBytes the whole file's size (for the truncation checks); defaults to `bytes.length`.
 * @throws GgufError `GGUF_NOT_GGUF`, `GGUF_UNSUPPORTED_VERSION`, `GGUF_CORRUPT`, `GGUF_TRUNCATED`
 *   (the header ends past `sizeBytes`, or a tensor's payload does). When `bytes` is shorter than
 *   `sizeBytes` and the header does not fit in it, throws `RangeError('need more bytes')`
 *   ({@link readGguf} then reads more).
 */
export function parseGgufHeader(bytes: Uint8Array, filePath: string, sizeBytes = bytes.length): GgufFile {
  const fail = (code: GgufErrorCode, what: string, tensor?: string) =>
    new GgufError(code, `${what}: ${filePath}`, filePath, tensor);
  if (bytes.length < 4 || Buffer.from(bytes.buffer, bytes.byteOffset, 4).toString('latin1') !== 'GGUF') {
    const found = bytes.length === 0 ? 'an empty file' : `bytes ${Buffer.from(bytes.subarray(0, 4)).toString('hex')}`;
    throw fail('GGUF_NOT_GGUF', `Not a GGUF file (expected the magic "GGUF" at the start, found ${found})`);
  }
  const c = new Cursor(bytes);
  c.pos = 4;
  let stage = 'the header';
  try {
    const version = c.u32();
    if (version !== 2 && version !== 3) {
      throw fail('GGUF_UNSUPPORTED_VERSION', `Unsupported GGUF version ${version} (versions 2 and 3 are read)`);
    }
    const tensorCount = c.u64();
    const kvCount = c.u64();
    const metadata: Record<string, GgufMetadataValue> = {};
    const valueTypes: Record<string, GgufValueTypeName> = {};
    const arrayItemTypes: Record<string, GgufValueTypeName> = {};

    const readValue = (type: number, key: string): GgufMetadataValue => {
      if (type === 9) {
        const itemType = c.u32();
        const count = c.u64();
        if (itemType > 12) throw fail('GGUF_CORRUPT', `Corrupt GGUF header (metadata "${key}": unknown array item type ${itemType})`);
        // Each item takes at least one byte: a count beyond the bytes left is a truncated or corrupt file.
        if (count > BigInt(bytes.length - c.pos)) throw new OutOfBytes();
        const items: GgufMetadataValue[] = new Array(Number(count));
        for (let i = 0; i < items.length; i++) items[i] = readValue(itemType, key);
        if (arrayItemTypes[key] === undefined) arrayItemTypes[key] = GGUF_VALUE_TYPES[itemType]!;
        return items;
      }
      if (type > 12) throw fail('GGUF_CORRUPT', `Corrupt GGUF header (metadata "${key}": unknown value type ${type})`);
      return c.scalar(type);
    };

    for (let i = 0n; i < kvCount; i++) {
      stage = `metadata key/value ${i}`;
      const key = c.string();
      stage = `metadata "${key}"`;
      const type = c.u32();
      metadata[key] = readValue(type, key);
      if (type <= 12) valueTypes[key] = GGUF_VALUE_TYPES[type]!;
    }

    let alignment = 32;
    if (metadata['general.alignment'] !== undefined) {
      const a = metadata['general.alignment'];
      if (typeof a !== 'number' || !Number.isInteger(a) || a <= 0 || (a & (a - 1)) !== 0) {
        throw fail('GGUF_CORRUPT', `Corrupt GGUF header (general.alignment ${String(a)} is not a power of two)`);
      }
      alignment = a;
    }

    const tensors: GgufTensorInfo[] = [];
    for (let i = 0n; i < tensorCount; i++) {
      stage = `tensor info ${i}`;
      const name = c.string();
      stage = `tensor info "${name}"`;
      const nDims = c.u32();
      if (nDims < 1 || nDims > 4) {
        throw fail('GGUF_CORRUPT', `Corrupt GGUF header (tensor "${name}" has ${nDims} dimensions; ggml allows 1-4)`, name);
      }
      const dims: number[] = [];
      for (let d = 0; d < nDims; d++) {
        const n = c.u64();
        if (n > BigInt(Number.MAX_SAFE_INTEGER)) throw fail('GGUF_CORRUPT', `Corrupt GGUF header (tensor "${name}" dimension ${n})`, name);
        dims.push(Number(n));
      }
      const type = c.u32();
      const offset = c.u64();
      if (offset % BigInt(alignment) !== 0n) {
        throw fail('GGUF_CORRUPT', `Corrupt GGUF header (tensor "${name}" offset ${offset} is not a multiple of the alignment ${alignment})`, name);
      }
      const elements = dims.reduce((a, b) => a * b, 1);
      const traits = GGML_TYPES[type];
      if (!traits) {
        throw fail('GGUF_UNKNOWN_TENSOR_TYPE', `tensor "${name}" has ggml type ${type}, which is not a tensor type ggml knows (0-39 less the removed 4, 5, 31-33 and 36-38); the file is damaged or from an unsupported ggml`, name);
      }
      const info: GgufTensorInfo = { name, dims, type, typeName: ggmlTypeName(type), elements, offset: Number(offset), fileOffset: 0 };
      if (traits) info.byteLength = Math.ceil(elements / traits[1]) * traits[2];
      tensors.push(info);
    }

    const headerEnd = c.pos;
    const dataStart = Math.ceil(headerEnd / alignment) * alignment;
    for (const t of tensors) {
      t.fileOffset = dataStart + t.offset;
      const end = t.fileOffset + (t.byteLength ?? 0);
      if (end > sizeBytes) {
        throw fail(
          'GGUF_TRUNCATED',
          `Truncated GGUF file (tensor "${t.name}" ends at byte ${end}, the file has ${sizeBytes} bytes)`,
          t.name,
        );
      }
    }
    const architecture = metadata['general.architecture'];
    const file: GgufFile = { path: filePath, sizeBytes, version, metadata, valueTypes, arrayItemTypes, tensors, alignment, dataStart };
    if (typeof architecture === 'string') file.architecture = architecture;
    return file;
  } catch (err) {
    if (err instanceof OutOfBytes) {
      if (bytes.length < sizeBytes) throw new RangeError('need more bytes');
      throw fail('GGUF_TRUNCATED', `Truncated GGUF file (it ends inside ${stage}, at ${sizeBytes} bytes)`);
    }
    if (err instanceof RangeError && /unknown value type/.test(err.message)) {
      throw fail('GGUF_CORRUPT', `Corrupt GGUF header (${stage}: ${err.message})`);
    }
    throw err;
  }
}

/**
 * Reads a GGUF file's header (metadata and tensor table; no tensor data).
 *
 * @throws GgufError `GGUF_NOT_FOUND`, `GGUF_NOT_GGUF`, `GGUF_TRUNCATED`, `GGUF_UNSUPPORTED_VERSION`,
 *   `GGUF_CORRUPT`, `GGUF_IO`; every message names the file.
 */
export async function readGguf(filePath: string): Promise<GgufFile> {
  let size: number;
  try {
    const st = await stat(filePath);
    if (!st.isFile()) throw new GgufError('GGUF_NOT_FOUND', `Not a regular file: ${filePath}`, filePath);
    size = st.size;
  } catch (err) {
    if (err instanceof GgufError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new GgufError('GGUF_NOT_FOUND', `GGUF file not found: ${filePath}`, filePath, undefined, { cause: err });
    throw new GgufError('GGUF_IO', `Cannot read ${filePath}: ${(err as Error).message}`, filePath, undefined, { cause: err });
  }
  const fh = await open(filePath, 'r').catch((err: unknown) => {
    throw new GgufError('GGUF_IO', `Cannot open ${filePath}: ${(err as Error).message}`, filePath, undefined, { cause: err });
  });
  try {
    // Headers are mostly the tokenizer vocabulary: 1 MiB holds a 32k-token one; grow as needed.
    let want = Math.min(size, 1 << 20);
    for (;;) {
      const buf = Buffer.alloc(want);
      const { bytesRead } = await fh.read(buf, 0, want, 0);
      try {
        return parseGgufHeader(buf.subarray(0, bytesRead), filePath, size);
      } catch (err) {
        if (err instanceof RangeError && err.message === 'need more bytes' && want < size) {
          want = Math.min(size, want * 4);
          continue;
        }
        throw err;
      }
    }
  } finally {
    await fh.close();
  }
}
