/**
 * A GGUF file's tensor payloads for training: F32 / F16 / BF16 tensors as `Float32Array`s, read
 * at the offsets the header gives (the header itself: readGguf.ts), and the check that a model
 * is one the trainer can train (llama, float tensors only).
 */
import { open } from 'node:fs/promises';
import { GGML_TYPE, GgufError, isFloatTensorType, type GgufFile, type GgufTensorInfo } from './readGguf.ts';

/**
 * Converts one tensor's raw payload to floats.
 *
 * @param bytes exactly the tensor's payload (`byteLength` bytes, little endian).
 * @returns `elements` floats in file order (`ne[0]` fastest).
 * @throws GgufError `GGUF_UNSUPPORTED_TENSOR_TYPE` for types other than F32, F16, BF16.
 */
export function decodeTensor(file: string, info: GgufTensorInfo, bytes: Uint8Array): Float32Array {
  const n = info.elements;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float32Array(n);
  if (info.type === GGML_TYPE.F32) {
    if (LITTLE_ENDIAN) new Uint8Array(out.buffer).set(bytes.subarray(0, n * 4));
    else for (let i = 0; i < n; i++) out[i] = view.getFloat32(i * 4, true);
  } else if (info.type === GGML_TYPE.F16) {
    for (let i = 0; i < n; i++) out[i] = f16ToF32(view.getUint16(i * 2, true));
  } else if (info.type === GGML_TYPE.BF16) {
    const u = new Uint32Array(out.buffer);
    for (let i = 0; i < n; i++) u[i] = view.getUint16(i * 2, true) << 16;
  } else {
    throw unsupportedType(file, info);
  }
  return out;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function unsupportedType(file: string, t: GgufTensorInfo): GgufError {
  return new GgufError(
    'GGUF_UNSUPPORTED_TENSOR_TYPE',
    `Unsupported tensor type ${t.typeName} of tensor "${t.name}" for training (F32, F16 and BF16 are supported; quantised models cannot be trained): ${file}`,
    file,
    t.name,
  );
}

/**
 * Reads tensors' payloads as floats (one open of the file).
 *
 * @param names the tensors to read; all of the file's when omitted.
 * @returns name -> floats in GGUF order (`ne[0]` fastest: a weight with `ne = [in, out]` comes
 *   out as row-major `[out][in]`).
 * @throws GgufError `GGUF_TENSOR_NOT_FOUND`, `GGUF_UNSUPPORTED_TENSOR_TYPE` (naming the tensor and
 *   its type), `GGUF_TRUNCATED`, `GGUF_IO`.
 */
export async function readGgufTensors(file: GgufFile, names?: readonly string[]): Promise<Map<string, Float32Array>> {
  const byName = new Map(file.tensors.map((t) => [t.name, t]));
  const wanted = (names ?? file.tensors.map((t) => t.name)).map((name) => {
    const t = byName.get(name);
    if (!t) throw new GgufError('GGUF_TENSOR_NOT_FOUND', `No tensor "${name}" in ${file.path}`, file.path, name);
    if (!isFloatTensorType(t.type)) throw unsupportedType(file.path, t);
    return t;
  });
  const out = new Map<string, Float32Array>();
  const fh = await open(file.path, 'r').catch((err: unknown) => {
    throw new GgufError('GGUF_IO', `Cannot open ${file.path}: ${(err as Error).message}`, file.path, undefined, { cause: err });
  });
  try {
    for (const t of wanted) {
      const buf = Buffer.alloc(t.byteLength!);
      const { bytesRead } = await fh.read(buf, 0, buf.length, t.fileOffset);
      if (bytesRead < buf.length) {
        throw new GgufError('GGUF_TRUNCATED', `Truncated GGUF file (tensor "${t.name}" is cut short): ${file.path}`, file.path, t.name);
      }
      out.set(t.name, decodeTensor(file.path, t, buf));
    }
  } finally {
    await fh.close();
  }
  return out;
}

/** Reads one tensor's payload as floats; see {@link readGgufTensors}. */
export async function readGgufTensor(file: GgufFile, name: string): Promise<Float32Array> {
  return (await readGgufTensors(file, [name])).get(name)!;
}

/**
 * Refuses, with an error naming the file and the thing, a GGUF the trainer cannot train: an
 * architecture other than `llama`, or any tensor of a type other than F32/F16/BF16.
 *
 * @throws GgufError `GGUF_UNSUPPORTED_ARCHITECTURE` (message names the architecture) or
 *   `GGUF_UNSUPPORTED_TENSOR_TYPE` (names the first such tensor, its type, and how many there are).
 */
export function assertTrainableGguf(file: GgufFile): void {
  const arch = file.architecture;
  if (arch !== 'llama') {
    throw new GgufError(
      'GGUF_UNSUPPORTED_ARCHITECTURE',
      `Unsupported architecture ${arch === undefined ? '(no general.architecture)' : `"${arch}"`} for training (only "llama" is supported): ${file.path}`,
      file.path,
    );
  }
  const bad = file.tensors.filter((t) => !isFloatTensorType(t.type));
  if (bad.length > 0) {
    const first = bad[0]!;
    const more = bad.length > 1 ? ` and ${bad.length - 1} more tensor(s) of types ${[...new Set(bad.map((t) => t.typeName))].join(', ')}` : '';
    throw new GgufError(
      'GGUF_UNSUPPORTED_TENSOR_TYPE',
      `Unsupported tensor type ${first.typeName} of tensor "${first.name}"${more} for training (F32, F16 and BF16 are supported; quantised models cannot be trained): ${file.path}`,
      file.path,
      first.name,
    );
  }
}

/** IEEE half (as its 16 bits) to a number. */
export function f16ToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 0x1f) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}
