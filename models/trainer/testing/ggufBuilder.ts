/**
 * Test fixture builder: encodes GGUF files with any version, value types, tensor types and
 * alignment, including ones the trainer must refuse (quantised tensor types, other
 * architectures, truncated files). Not used at run time. Tensor payloads are given as raw bytes
 * or as floats (encoded as F32).
 */
import { GGUF_VALUE_TYPES, type GgufFile, type GgufMetadataValue, type GgufValueTypeName } from '../../gguf/readGguf.ts';

export interface BuilderValue {
  type: GgufValueTypeName;
  /** For arrays: the items' type. */
  itemType?: GgufValueTypeName;
  value: GgufMetadataValue;
}

export interface BuilderTensor {
  name: string;
  dims: number[];
  /** ggml type number (0 F32, 1 F16, 2 Q4_0, ...). Default 0. */
  type?: number;
  /** F32 values (type 0) ... */
  values?: Float32Array;
  /** ... or the raw payload. */
  bytes?: Uint8Array;
}

export interface BuilderDoc {
  version?: number;
  alignment?: number;
  metadata: Array<[string, BuilderValue]>;
  tensors: BuilderTensor[];
}

/** A string, bool or typed number: shorthand for metadata entries. */
export const str = (value: string): BuilderValue => ({ type: 'string', value });
export const u32 = (value: number): BuilderValue => ({ type: 'u32', value });
export const f32v = (value: number): BuilderValue => ({ type: 'f32', value });

class W {
  chunks: Buffer[] = [];
  length = 0;
  raw(b: Uint8Array): void {
    const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
    this.chunks.push(buf);
    this.length += buf.length;
  }
  n(size: number, write: (b: Buffer) => void): void {
    const b = Buffer.alloc(size);
    write(b);
    this.raw(b);
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.n(8, (x) => x.writeBigUInt64LE(BigInt(b.length)));
    this.raw(b);
  }
  scalar(type: GgufValueTypeName, v: GgufMetadataValue): void {
    switch (type) {
      case 'u8': return this.n(1, (b) => b.writeUInt8(Number(v)));
      case 'i8': return this.n(1, (b) => b.writeInt8(Number(v)));
      case 'u16': return this.n(2, (b) => b.writeUInt16LE(Number(v)));
      case 'i16': return this.n(2, (b) => b.writeInt16LE(Number(v)));
      case 'u32': return this.n(4, (b) => b.writeUInt32LE(Number(v)));
      case 'i32': return this.n(4, (b) => b.writeInt32LE(Number(v)));
      case 'f32': return this.n(4, (b) => b.writeFloatLE(Number(v)));
      case 'bool': return this.n(1, (b) => b.writeUInt8(v ? 1 : 0));
      case 'string': return this.str(String(v));
      case 'u64': return this.n(8, (b) => b.writeBigUInt64LE(BigInt(v as number | bigint)));
      case 'i64': return this.n(8, (b) => b.writeBigInt64LE(BigInt(v as number | bigint)));
      case 'f64': return this.n(8, (b) => b.writeDoubleLE(Number(v)));
      default: throw new Error(`cannot write scalar of type ${type}`);
    }
  }
  value(v: BuilderValue): void {
    this.n(4, (b) => b.writeUInt32LE(GGUF_VALUE_TYPES.indexOf(v.type)));
    if (v.type === 'array') {
      const items = v.value as GgufMetadataValue[];
      const itemType = v.itemType ?? 'u8';
      this.n(4, (b) => b.writeUInt32LE(GGUF_VALUE_TYPES.indexOf(itemType)));
      this.n(8, (b) => b.writeBigUInt64LE(BigInt(items.length)));
      for (const item of items) {
        if (itemType === 'array') throw new Error('nested arrays: give them as raw');
        this.scalar(itemType, item);
      }
    } else {
      this.scalar(v.type, v.value);
    }
  }
  pad(alignment: number): void {
    const n = (alignment - (this.length % alignment)) % alignment;
    if (n) this.raw(new Uint8Array(n));
  }
  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** Encodes a document as GGUF bytes. */
export function buildGguf(doc: BuilderDoc): Buffer {
  const alignment = doc.alignment ?? 32;
  const w = new W();
  w.raw(Buffer.from('GGUF', 'latin1'));
  w.n(4, (b) => b.writeUInt32LE(doc.version ?? 3));
  w.n(8, (b) => b.writeBigUInt64LE(BigInt(doc.tensors.length)));
  w.n(8, (b) => b.writeBigUInt64LE(BigInt(doc.metadata.length)));
  for (const [key, v] of doc.metadata) {
    w.str(key);
    w.value(v);
  }
  const payloads = doc.tensors.map((t) => {
    if (t.bytes) return t.bytes;
    const v = t.values ?? new Float32Array(t.dims.reduce((a, b) => a * b, 1));
    const b = Buffer.alloc(v.length * 4);
    v.forEach((x, i) => b.writeFloatLE(x, i * 4));
    return b;
  });
  let offset = 0;
  doc.tensors.forEach((t, i) => {
    w.str(t.name);
    w.n(4, (b) => b.writeUInt32LE(t.dims.length));
    for (const d of t.dims) w.n(8, (b) => b.writeBigUInt64LE(BigInt(d)));
    w.n(4, (b) => b.writeUInt32LE(t.type ?? 0));
    const at = offset;
    w.n(8, (b) => b.writeBigUInt64LE(BigInt(at)));
    offset += Math.ceil(payloads[i]!.length / alignment) * alignment;
  });
  w.pad(alignment);
  payloads.forEach((p) => {
    w.raw(p);
    w.pad(alignment);
  });
  return w.bytes();
}

/** The metadata of a parsed file as builder entries (to copy a real model's header). */
export function metadataOf(file: GgufFile, omit: readonly string[] = []): Array<[string, BuilderValue]> {
  return Object.entries(file.metadata)
    .filter(([k]) => !omit.includes(k))
    .map(([k, value]) => {
      const type = file.valueTypes[k]!;
      const v: BuilderValue = { type, value };
      if (type === 'array') v.itemType = file.arrayItemTypes[k] ?? 'u8';
      return [k, v];
    });
}

/** Deterministic pseudo-random floats in [-scale, scale) (mulberry32). */
export function randomFloats(n: number, seed: number, scale = 1): Float32Array {
  let a = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const r = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    out[i] = (r * 2 - 1) * scale;
  }
  return out;
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
