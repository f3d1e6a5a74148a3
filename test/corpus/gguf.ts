/**
 * GGUF model files: hand-made headers (wrong magic, bad version, absurd counts, unknown value
 * types) and files derived from the shared tiny model through Flowlab's own GGUF writer
 * (`models/gguf/writeGguf.ts`, `models/llama/ggufFixture.ts`): truncated, re-versioned,
 * misaligned, NaN and infinite weights. Every file is made at test time in a temp folder.
 * Each case runs through both readers: `readGguf` (training, train-loop) and
 * `readCheckedGgufInfo` (the CLI's and the host's check before a model loads).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodeGgufLayout, layoutOfGguf, type GgufLayout } from '../../models/gguf/index.ts';
import { parseGgufHeader } from '../../models/gguf/readGguf.ts';
import { writeNonFiniteGguf } from '../../models/llama/ggufFixture.ts';
import type { Bytes, GgufEntry } from './types.ts';

export const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
export const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return b;
};
/** A GGUF string: its byte length as u64, then its UTF-8 bytes. */
export const str = (s: string) => Buffer.concat([u64(BigInt(Buffer.byteLength(s))), Buffer.from(s)]);
const MAGIC = Buffer.from('GGUF');
/** A header: magic, version, tensor count, metadata count, then `rest`. */
const header = (version: number, tensors: bigint, kvs: bigint, ...rest: Buffer[]) => Buffer.concat([MAGIC, u32(version), u64(tensors), u64(kvs), ...rest]);

/** The tiny model's layout changed by `edit`, encoded by the one GGUF writer. */
const derived = (edit: (l: Required<GgufLayout>) => GgufLayout) => (tiny: string): Buffer => {
  const bytes = readFileSync(tiny);
  return encodeGgufLayout(edit(layoutOfGguf(parseGgufHeader(bytes, tiny), bytes)));
};
/** The tiny model cut to `n` bytes (negative: that many bytes short). */
const cut = (n: number) => (tiny: string): Buffer => {
  const bytes = readFileSync(tiny);
  return bytes.subarray(0, n < 0 ? bytes.length + n : n);
};
/** The tiny model with every value of the float tensors `which` accepts set to `value`. */
const nonFinite = (value: number, which?: (name: string) => boolean) => async (tiny: string): Promise<Buffer> => {
  const dir = mkdtempSync(path.join(tmpdir(), 'flowlab-corpus-gguf-'));
  try {
    const out = path.join(dir, 'm.gguf');
    await writeNonFiniteGguf(tiny, out, value, which);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

type Case = { id: string; make: (tiny: string) => Bytes | Promise<Bytes>; header: string; checked: string; place?: string; needsModel?: boolean };

const CASES: Case[] = [
  { id: 'empty', make: () => Buffer.alloc(0), header: 'GGUF_NOT_GGUF', checked: 'MODEL_INVALID' },
  { id: 'wrong-magic-ggml', make: () => Buffer.concat([Buffer.from('ggml'), Buffer.alloc(60)]), header: 'GGUF_NOT_GGUF', checked: 'MODEL_INVALID' },
  { id: 'wrong-magic-text', make: () => 'Once upon a time there was a model file that was really a story.\n', header: 'GGUF_NOT_GGUF', checked: 'MODEL_INVALID' },
  { id: 'wrong-magic-zip', make: () => Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(100)]), header: 'GGUF_NOT_GGUF', checked: 'MODEL_INVALID' },
  { id: 'magic-only', make: () => MAGIC, header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID' },
  { id: 'version-1', make: () => header(1, 0n, 0n), header: 'GGUF_UNSUPPORTED_VERSION', checked: 'MODEL_INVALID' },
  { id: 'version-99', make: () => header(99, 0n, 0n), header: 'GGUF_UNSUPPORTED_VERSION', checked: 'MODEL_INVALID' },
  { id: 'version-max', make: () => header(0xffffffff, 0n, 0n), header: 'GGUF_UNSUPPORTED_VERSION', checked: 'MODEL_INVALID' },
  { id: 'tensor-count-huge', make: () => header(3, 1n << 62n, 0n), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID' },
  { id: 'kv-count-huge', make: () => header(3, 0n, 1n << 62n), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID' },
  { id: 'key-length-huge', make: () => header(3, 0n, 1n, u64(1n << 60n), Buffer.from('x')), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID' },
  { id: 'value-type-unknown', make: () => header(3, 0n, 1n, str('general.name'), u32(99), Buffer.alloc(16)), header: 'GGUF_CORRUPT', checked: 'MODEL_INVALID' },
  { id: 'string-value-cut', make: () => header(3, 0n, 1n, str('general.name'), u32(8), u64(1000n), Buffer.from('short')), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID' },
  { id: 'array-length-huge', make: () => header(3, 0n, 1n, str('tokenizer.ggml.tokens'), u32(9), u32(8), u64(1n << 61n)), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID' },
  { id: 'no-tensors', make: () => header(3, 0n, 1n, str('general.architecture'), u32(8), str('llama')), header: '', checked: 'MODEL_INVALID' },
  // From the tiny model, through the writer.
  { id: 'tiny-cut-100', make: cut(100), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-cut-header-end', make: cut(8 * 1024), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-cut-half', make: async (t) => cut(Math.floor(readFileSync(t).length / 2))(t), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-one-byte-short', make: cut(-1), header: 'GGUF_TRUNCATED', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-version-1', make: derived((l) => ({ ...l, version: 1 })), header: 'GGUF_UNSUPPORTED_VERSION', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-version-4', make: derived((l) => ({ ...l, version: 4 })), header: 'GGUF_UNSUPPORTED_VERSION', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-no-architecture', make: derived((l) => ({ ...l, metadata: l.metadata.filter(([k]) => k !== 'general.architecture') })), header: '', checked: 'MODEL_INVALID', needsModel: true },
  { id: 'tiny-nan-weights', make: nonFinite(Number.NaN), header: '', checked: 'MODEL_INVALID', place: 'non-finite weight (NaN)', needsModel: true },
  { id: 'tiny-inf-weights', make: nonFinite(Number.POSITIVE_INFINITY), header: '', checked: 'MODEL_INVALID', place: 'non-finite weight', needsModel: true },
  { id: 'tiny-nan-output-only', make: nonFinite(Number.NaN, (n) => n === 'output.weight'), header: '', checked: 'MODEL_INVALID', place: '"output.weight"', needsModel: true },
  { id: 'tiny-nan-norm-only', make: nonFinite(Number.NaN, (n) => n.endsWith('attn_norm.weight')), header: '', checked: 'MODEL_INVALID', place: 'attn_norm.weight', needsModel: true },
];

export const GGUFS: GgufEntry[] = CASES.flatMap((c) => [
  ...(c.header ? [{ id: `gguf/${c.id}/readGguf`, via: 'gguf' as const, make: c.make, reader: 'header' as const, code: c.header, place: c.place, needsModel: c.needsModel }] : []),
  { id: `gguf/${c.id}/checked`, via: 'gguf' as const, make: c.make, reader: 'checked' as const, code: c.checked, place: c.place, needsModel: c.needsModel },
]);
