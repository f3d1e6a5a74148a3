/**
 * Writes a new version of a GGUF by replacing tensor payloads in place: the source file is copied
 * byte for byte (header, metadata, tokenizer, untouched tensors) and the chosen tensors' payloads
 * are overwritten at their offsets. Shapes and types stay as they are, so llama.cpp loads the
 * result exactly like the source. F32 payloads are written as is, F16/BF16 ones converted
 * (round to nearest even).
 *
 * Atomic (`writeAtomically` in `writeGguf.ts`): the bytes go to a temp file in the destination's
 * folder, are flushed to disk, and the temp file is renamed over the destination. A crash or an
 * error at any point leaves the old destination (if any) whole, never a truncated model; the
 * temp file is removed on errors.
 */
import { readFile } from 'node:fs/promises';
import { GGML_TYPE, GgufError, parseGgufHeader, type GgufTensorInfo } from './readGguf.ts';
import { writeAtomically } from './writeGguf.ts';

/** Timings of one {@link rewriteGguf} call, in milliseconds. */
export interface RewriteStats {
  /** Reading and parsing the source. */
  readMs: number;
  /** Encoding the new payloads into the copy. */
  encodeMs: number;
  /** Writing the temp file, flushing it, and renaming it into place. */
  writeMs: number;
  /** Tensors replaced. */
  tensors: number;
  bytes: number;
}

/**
 * Copies `srcPath` to `dstPath` with the payloads of the tensors in `replacements` replaced.
 *
 * @param replacements tensor name -> new values in GGUF element order (`ne[0]` fastest: a weight
 *   with `ne = [in, out]` as row-major `[out][in]`), exactly `elements` values each.
 * @param dstPath may equal `srcPath` (the source is read fully before anything is written).
 * @throws GgufError `GGUF_TENSOR_NOT_FOUND` (a name not in the source),
 *   `GGUF_UNSUPPORTED_TENSOR_TYPE` (the tensor is quantised), `GGUF_CORRUPT` (wrong value count),
 *   the header errors of `parseGgufHeader`, `GGUF_IO`. Nothing is written when one is thrown
 *   before the write starts; the destination is untouched whenever one is thrown.
 */
export async function rewriteGguf(
  srcPath: string,
  dstPath: string,
  replacements: ReadonlyMap<string, Float32Array> | Readonly<Record<string, Float32Array>>,
): Promise<RewriteStats> {
  const t0 = performance.now();
  let bytes: Buffer;
  try {
    bytes = await readFile(srcPath);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new GgufError(code === 'ENOENT' ? 'GGUF_NOT_FOUND' : 'GGUF_IO', `Cannot read ${srcPath}: ${(err as Error).message}`, srcPath, undefined, {
      cause: err,
    });
  }
  const file = parseGgufHeader(bytes, srcPath);
  const t1 = performance.now();

  const entries = replacements instanceof Map ? [...replacements.entries()] : Object.entries(replacements);
  const byName = new Map(file.tensors.map((t) => [t.name, t]));
  for (const [name, values] of entries) {
    const t = byName.get(name);
    if (!t) throw new GgufError('GGUF_TENSOR_NOT_FOUND', `No tensor "${name}" in ${srcPath} to replace`, srcPath, name);
    if (values.length !== t.elements) {
      throw new GgufError(
        'GGUF_CORRUPT',
        `Tensor "${name}" of ${srcPath} has ${t.elements} elements (ne [${t.dims.join(', ')}]); ${values.length} values were given`,
        srcPath,
        name,
      );
    }
    encodePayload(srcPath, t, values, bytes);
  }
  const t2 = performance.now();

  await writeAtomically(dstPath, bytes);
  return { readMs: t1 - t0, encodeMs: t2 - t1, writeMs: performance.now() - t2, tensors: entries.length, bytes: bytes.length };
}

/** Writes `values` over `t`'s payload inside `out` (the whole file's bytes). */
function encodePayload(file: string, t: GgufTensorInfo, values: Float32Array, out: Buffer): void {
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  const base = t.fileOffset;
  if (t.type === GGML_TYPE.F32) {
    if (LITTLE_ENDIAN) out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), base);
    else for (let i = 0; i < values.length; i++) view.setFloat32(base + i * 4, values[i]!, true);
  } else if (t.type === GGML_TYPE.F16) {
    for (let i = 0; i < values.length; i++) view.setUint16(base + i * 2, f32ToF16(values[i]!), true);
  } else if (t.type === GGML_TYPE.BF16) {
    for (let i = 0; i < values.length; i++) view.setUint16(base + i * 2, f32ToBf16(values[i]!), true);
  } else {
    throw new GgufError(
      'GGUF_UNSUPPORTED_TENSOR_TYPE',
      `Cannot write tensor "${t.name}" of type ${t.typeName} (F32, F16 and BF16 are supported): ${file}`,
      file,
      t.name,
    );
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** A number to IEEE half bits, rounding to nearest even; overflow gives ±Infinity. */
export function f32ToF16(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf / NaN
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00; // overflow
  if (e <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit 1 into place.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let m = mant >>> shift;
    if (rest > half || (rest === half && (m & 1))) m++;
    return sign | m;
  }
  let m = mant >>> 13;
  const rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && (m & 1))) {
    m++;
    if (m === 0x400) {
      m = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | m;
}

/** A number to bfloat16 bits, rounding to nearest even. */
export function f32ToBf16(value: number): number {
  f32[0] = value;
  const x = u32[0]!;
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff; // NaN stays NaN
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}
