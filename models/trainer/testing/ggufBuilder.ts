/**
 * Test fixture builder on top of the one GGUF writer (`models/gguf/writeGguf.ts`): GGUF files
 * with any version, value types, tensor types and alignment, including ones the trainer must
 * refuse (quantised tensor types, other architectures, truncated files). Not used at run time.
 * Tensor payloads are given as raw bytes or as floats (encoded as F32).
 */
import { mulberry32 } from '../../../core/random.ts';
import type { GgufFile } from '../../gguf/readGguf.ts';
import { encodeGgufLayout, metadataEntries, type GgufTypedValue } from '../../gguf/writeGguf.ts';

/** A metadata value with its type (for arrays, `itemType` gives the items' type; default `u8`). */
export type BuilderValue = GgufTypedValue;

export interface BuilderTensor {
  name: string;
  dims: number[];
  /** ggml type number (0 F32, 1 F16, 2 Q4_0, ...). Default 0. */
  type?: number;
  /** F32 values (type 0; zeros when neither this nor `bytes` is given) ... */
  values?: Float32Array;
  /** ... or the raw payload. */
  bytes?: Uint8Array;
}

export interface BuilderDoc {
  /** Default 3. */
  version?: number;
  /** Default 32; `general.alignment` is not added (put it in `metadata` yourself). */
  alignment?: number;
  metadata: Array<[string, BuilderValue]>;
  tensors: BuilderTensor[];
}

/** A string, bool or typed number: shorthand for metadata entries. */
export const str = (value: string): BuilderValue => ({ type: 'string', value });
export const u32 = (value: number): BuilderValue => ({ type: 'u32', value });
export const f32v = (value: number): BuilderValue => ({ type: 'f32', value });

/** Encodes a document as GGUF bytes, exactly as given (see `encodeGgufLayout`). */
export function buildGguf(doc: BuilderDoc): Buffer {
  return encodeGgufLayout({
    ...(doc.version !== undefined ? { version: doc.version } : {}),
    ...(doc.alignment !== undefined ? { alignment: doc.alignment } : {}),
    metadata: doc.metadata,
    tensors: doc.tensors.map((t) => ({
      name: t.name,
      dims: t.dims,
      type: t.type ?? 0,
      bytes: t.bytes ?? f32Bytes(t.values ?? new Float32Array(t.dims.reduce((a, b) => a * b, 1))),
    })),
  });
}

/** The metadata of a parsed file as builder entries (to copy a real model's header). */
export function metadataOf(file: GgufFile, omit: readonly string[] = []): Array<[string, BuilderValue]> {
  return metadataEntries(file, omit);
}

/** Deterministic pseudo-random floats in [-scale, scale) (mulberry32, `core/stats/paired.ts`). */
export function randomFloats(n: number, seed: number, scale = 1): Float32Array {
  const next = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (next() * 2 - 1) * scale;
  return out;
}

/** Little-endian F32 bytes of `values`. */
function f32Bytes(values: Float32Array): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((x, i) => b.writeFloatLE(x, i * 4));
  return b;
}

/** Options of {@link tinyLlama}. */
export interface TinyLlamaOptions {
  layers?: number;
  dim?: number;
  heads?: number;
  kvHeads?: number;
  ffn?: number;
  vocab?: number;
  /** Omit `output.weight` (the head reuses `token_embd.weight`). */
  tied?: boolean;
  /** `llama.rope.dimension_count` (default: head size). */
  ropeDims?: number;
  seed?: number;
  architecture?: string;
  /** ggml type written for the matrices (payload bytes are zeros unless F32). */
  matrixType?: number;
}

/** A random-weight LLaMA GGUF (no tokenizer): for shape, gradient and refusal tests. */
export function tinyLlama(o: TinyLlamaOptions = {}): Buffer {
  const layers = o.layers ?? 2;
  const dim = o.dim ?? 16;
  const heads = o.heads ?? 4;
  const kvHeads = o.kvHeads ?? 2;
  const ffn = o.ffn ?? 24;
  const vocab = o.vocab ?? 32;
  const hd = dim / heads;
  let seed = o.seed ?? 1;
  const tensor = (name: string, dims: number[], scale: number, norm = false): BuilderTensor => {
    const n = dims.reduce((a, b) => a * b, 1);
    const values = norm ? Float32Array.from(randomFloats(n, seed++, 0.2), (x) => 1 + x) : randomFloats(n, seed++, scale);
    if (!norm && dims.length === 2 && o.matrixType !== undefined && o.matrixType !== 0) {
      const blocks: Record<number, [number, number]> = { 1: [1, 2], 2: [32, 18], 8: [32, 34], 12: [256, 144] };
      const [be, bb] = blocks[o.matrixType] ?? [1, 4];
      return { name, dims, type: o.matrixType, bytes: new Uint8Array(Math.ceil(n / be) * bb) };
    }
    return { name, dims, values };
  };
  const s = 1 / Math.sqrt(dim);
  const tensors: BuilderTensor[] = [tensor('token_embd.weight', [dim, vocab], 1)];
  for (let l = 0; l < layers; l++) {
    tensors.push(
      tensor(`blk.${l}.attn_norm.weight`, [dim], 0, true),
      tensor(`blk.${l}.attn_q.weight`, [dim, dim], s),
      tensor(`blk.${l}.attn_k.weight`, [dim, kvHeads * hd], s),
      tensor(`blk.${l}.attn_v.weight`, [dim, kvHeads * hd], s),
      tensor(`blk.${l}.attn_output.weight`, [dim, dim], s),
      tensor(`blk.${l}.ffn_norm.weight`, [dim], 0, true),
      tensor(`blk.${l}.ffn_gate.weight`, [dim, ffn], s),
      tensor(`blk.${l}.ffn_up.weight`, [dim, ffn], s),
      tensor(`blk.${l}.ffn_down.weight`, [ffn, dim], 1 / Math.sqrt(ffn)),
    );
  }
  tensors.push(tensor('output_norm.weight', [dim], 0, true));
  if (!o.tied) tensors.push(tensor('output.weight', [dim, vocab], s));
  const arch = o.architecture ?? 'llama';
  return buildGguf({
    metadata: [
      ['general.architecture', str(arch)],
      [`${arch}.block_count`, u32(layers)],
      [`${arch}.embedding_length`, u32(dim)],
      [`${arch}.feed_forward_length`, u32(ffn)],
      [`${arch}.attention.head_count`, u32(heads)],
      [`${arch}.attention.head_count_kv`, u32(kvHeads)],
      [`${arch}.context_length`, u32(256)],
      [`${arch}.rope.dimension_count`, u32(o.ropeDims ?? hd)],
      [`${arch}.attention.layer_norm_rms_epsilon`, f32v(1e-5)],
      ['tokenizer.ggml.eos_token_id', u32(2)],
    ],
    tensors,
  });
}
