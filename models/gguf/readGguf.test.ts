import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufError, readGguf } from './readGguf.ts';
import { assertTrainableGguf, f16ToF32, readGgufTensor, readGgufTensors } from './readTensors.ts';
import { f32ToBf16, f32ToF16, rewriteGguf } from './rewriteGguf.ts';
import { buildGguf, str, tinyLlama, u32 } from '../trainer/testing/ggufBuilder.ts';

const SHARED = process.env.FLOWLAB_SHARED ?? path.resolve(process.cwd(), '../shared');
const STORIES = path.join(SHARED, 'models', 'stories260K.gguf');
const TINY = path.join(SHARED, 'models', 'llama-2-tiny-random.gguf');
const haveStories = existsSync(STORIES);
const haveTiny = existsSync(TINY);
if (!haveStories) console.log(`readGguf: stories260K tests skipped (${STORIES} not found; set FLOWLAB_SHARED)`);
if (!haveTiny) console.log(`readGguf: llama-2-tiny-random tests skipped (${TINY} not found; set FLOWLAB_SHARED)`);

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-readgguf-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function put(name: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(tmp, name);
  await writeFile(file, bytes);
  return file;
}

const errorOf = async (p: Promise<unknown>): Promise<GgufError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(GgufError);
  return e as GgufError;
};

describe('readGguf on the shared models', () => {
  it.skipIf(!haveStories)('stories260K: GGUF v3, llama, 48 F32 tensors, 292,800 parameters, data aligned to 32', async () => {
    const g = await readGguf(STORIES);
    expect(g.version).toBe(3);
    expect(g.architecture).toBe('llama');
    expect(g.tensors).toHaveLength(48);
    expect(g.tensors.every((t) => t.typeName === 'F32')).toBe(true);
    expect(g.tensors.reduce((a, t) => a + t.elements, 0)).toBe(292_800);
    expect(g.alignment).toBe(32);
    expect(g.dataStart % 32).toBe(0);
    expect(g.metadata['llama.block_count']).toBe(5);
    expect(g.metadata['llama.attention.head_count_kv']).toBe(4);
    expect(g.metadata['llama.attention.layer_norm_rms_epsilon']).toBeCloseTo(1e-5, 10);
    expect(g.valueTypes['llama.attention.layer_norm_rms_epsilon']).toBe('f32');
    expect(g.metadata['tokenizer.ggml.eos_token_id']).toBe(2);
    expect(g.metadata['tokenizer.ggml.seperator_token_id']).toBe(4294967295);
    const tokens = g.metadata['tokenizer.ggml.tokens'] as string[];
    expect(tokens).toHaveLength(512);
    expect(g.arrayItemTypes['tokenizer.ggml.tokens']).toBe('string');
    expect(g.arrayItemTypes['tokenizer.ggml.scores']).toBe('f32');
    const q = g.tensors.find((t) => t.name === 'blk.0.attn_k.weight')!;
    expect(q.dims).toEqual([64, 32]); // ne = [in, out]
    const all = await readGgufTensors(g);
    expect(all.size).toBe(48);
    const emb = all.get('token_embd.weight')!;
    expect(emb).toHaveLength(64 * 512);
    expect(emb.every(Number.isFinite)).toBe(true);
    // The payload is the raw little-endian F32 bytes at dataStart + offset.
    const bytes = await readFile(STORIES);
    const t = g.tensors.find((x) => x.name === 'output_norm.weight')!;
    expect((await readGgufTensor(g, 'output_norm.weight'))[3]).toBe(bytes.readFloatLE(t.fileOffset + 12));
    assertTrainableGguf(g);
  });

  it.skipIf(!haveTiny)('llama-2-tiny-random: 9 F16 tensors read as floats, 3 F32, 32,000-token vocabulary', async () => {
    const g = await readGguf(TINY);
    expect(g.tensors).toHaveLength(12);
    const f16 = g.tensors.filter((t) => t.typeName === 'F16');
    expect(f16).toHaveLength(9);
    expect(g.tensors.filter((t) => t.typeName === 'F32')).toHaveLength(3);
    expect((g.metadata['tokenizer.ggml.tokens'] as string[]).length).toBe(32000);
    expect(g.metadata['general.file_type']).toBe(1);
    const all = await readGgufTensors(g, f16.map((t) => t.name));
    const bytes = await readFile(TINY);
    for (const t of f16) {
      const v = all.get(t.name)!;
      expect(v).toHaveLength(t.elements);
      expect(v.every(Number.isFinite)).toBe(true);
      expect(v.some((x) => x !== 0)).toBe(true);
      const i = v.findIndex((x) => x !== 0);
      expect(v[i]).toBe(f16ToF32(bytes.readUInt16LE(t.fileOffset + 2 * i)));
    }
    assertTrainableGguf(g);
  });
});

describe('readGguf on built files', () => {
  it('reads every metadata value type, GGUF v2, and a 64-byte alignment', async () => {
    const file = await put(
      'types.gguf',
      buildGguf({
        version: 2,
        alignment: 64,
        metadata: [
          ['general.architecture', str('llama')],
          ['general.alignment', u32(64)],
          ['t.u8', { type: 'u8', value: 200 }],
          ['t.i8', { type: 'i8', value: -100 }],
          ['t.u16', { type: 'u16', value: 60000 }],
          ['t.i16', { type: 'i16', value: -30000 }],
          ['t.u32', { type: 'u32', value: 4000000000 }],
          ['t.i32', { type: 'i32', value: -2000000000 }],
          ['t.f32', { type: 'f32', value: 0.5 }],
          ['t.bool', { type: 'bool', value: true }],
          ['t.string', str('héllo ✓')],
          ['t.u64', { type: 'u64', value: 2n ** 60n }],
          ['t.i64', { type: 'i64', value: -5 }],
          ['t.f64', { type: 'f64', value: Math.PI }],
          ['t.arr', { type: 'array', itemType: 'i16', value: [1, -2, 3] }],
          ['t.strs', { type: 'array', itemType: 'string', value: ['a', '', 'bc'] }],
          ['t.empty', { type: 'array', itemType: 'f32', value: [] }],
        ],
        tensors: [
          { name: 'a', dims: [3], values: new Float32Array([1, 2, 3]) },
          { name: 'b', dims: [2, 2], values: new Float32Array([4, 5, 6, 7]) },
        ],
      }),
    );
    const g = await readGguf(file);
    expect(g.version).toBe(2);
    expect(g.alignment).toBe(64);
    expect(g.dataStart % 64).toBe(0);
    expect(g.metadata).toMatchObject({
      't.u8': 200,
      't.i8': -100,
      't.u16': 60000,
      't.i16': -30000,
      't.u32': 4000000000,
      't.i32': -2000000000,
      't.f32': 0.5,
      't.bool': true,
      't.string': 'héllo ✓',
      't.u64': 2n ** 60n,
      't.i64': -5,
      't.f64': Math.PI,
      't.arr': [1, -2, 3],
      't.strs': ['a', '', 'bc'],
      't.empty': [],
    });
    expect(g.valueTypes['t.u64']).toBe('u64');
    expect(g.tensors[1]!.offset).toBe(64);
    expect(Array.from(await readGgufTensor(g, 'b'))).toEqual([4, 5, 6, 7]);
  });

  it('reads BF16 tensors', async () => {
    const bytes = Buffer.alloc(6);
    [1.5, -2, 0.099609375].forEach((x, i) => bytes.writeUInt16LE(f32ToBf16(x), i * 2));
    const file = await put('bf16.gguf', buildGguf({ metadata: [['general.architecture', str('llama')]], tensors: [{ name: 'x', dims: [3], type: 30, bytes }] }));
    expect(Array.from(await readGgufTensor(await readGguf(file), 'x'))).toEqual([1.5, -2, 0.099609375]);
  });

  it('errors name the file and the problem', async () => {
    const notGguf = await put('text.gguf', Buffer.from('hello world, not a model'));
    let e = await errorOf(readGguf(notGguf));
    expect(e.code).toBe('GGUF_NOT_GGUF');
    expect(e.message).toContain(notGguf);
    expect(e.file).toBe(notGguf);

    e = await errorOf(readGguf(await put('empty.gguf', Buffer.alloc(0))));
    expect(e.code).toBe('GGUF_NOT_GGUF');
    expect(e.message).toContain('an empty file');

    e = await errorOf(readGguf(path.join(tmp, 'missing.gguf')));
    expect(e.code).toBe('GGUF_NOT_FOUND');
    e = await errorOf(readGguf(tmp));
    expect(e.code).toBe('GGUF_NOT_FOUND');

    const whole = tinyLlama();
    for (const version of [1, 4]) {
      const b = Buffer.from(whole);
      b.writeUInt32LE(version, 4);
      e = await errorOf(readGguf(await put(`v${version}.gguf`, b)));
      expect(e.code).toBe('GGUF_UNSUPPORTED_VERSION');
      expect(e.message).toContain(`version ${version}`);
    }

    const headerCut = await put('header-cut.gguf', whole.subarray(0, 200));
    e = await errorOf(readGguf(headerCut));
    expect(e.code).toBe('GGUF_TRUNCATED');
    expect(e.message).toMatch(/ends inside (metadata|tensor info)/);

    const dataCut = await put('data-cut.gguf', whole.subarray(0, whole.length - 64));
    e = await errorOf(readGguf(dataCut));
    expect(e.code).toBe('GGUF_TRUNCATED');
    expect(e.tensor).toBe('output.weight');
    expect(e.message).toContain('"output.weight"');

    const badType = buildGguf({ metadata: [['k', { type: 'u8', value: 1 }]], tensors: [] });
    badType.writeUInt32LE(13, 24 + 8 + 1); // the value type of key "k"
    e = await errorOf(readGguf(await put('bad-type.gguf', badType)));
    expect(e.code).toBe('GGUF_CORRUPT');
    expect(e.message).toContain('unknown value type 13');
  });

  it('refuses quantised tensors and other architectures for training, naming them', async () => {
    const q4 = await readGguf(await put('q4.gguf', tinyLlama({ matrixType: 8 })));
    const e = await errorOf(Promise.resolve().then(() => assertTrainableGguf(q4)));
    expect(e.code).toBe('GGUF_UNSUPPORTED_TENSOR_TYPE');
    expect(e.message).toMatch(/Q8_0 of tensor "token_embd\.weight"/);
    const e2 = await errorOf(readGgufTensor(q4, 'blk.0.attn_q.weight'));
    expect(e2.code).toBe('GGUF_UNSUPPORTED_TENSOR_TYPE');
    expect(e2.tensor).toBe('blk.0.attn_q.weight');
    expect((await readGgufTensor(q4, 'blk.0.attn_norm.weight')).length).toBe(16);

    const gpt2 = await readGguf(await put('gpt2.gguf', tinyLlama({ architecture: 'gpt2' })));
    const e3 = await errorOf(Promise.resolve().then(() => assertTrainableGguf(gpt2)));
    expect(e3.code).toBe('GGUF_UNSUPPORTED_ARCHITECTURE');
    expect(e3.message).toContain('"gpt2"');

    const e4 = await errorOf(readGgufTensor(gpt2, 'nope'));
    expect(e4.code).toBe('GGUF_TENSOR_NOT_FOUND');
  });
});

describe('F16 / BF16 conversion', () => {
  it('round-trips every finite half and rounds to nearest even', () => {
    const wrong: number[] = [];
    for (let h = 0; h < 0x10000; h++) {
      const exp = (h >> 10) & 0x1f;
      if (exp === 0x1f && (h & 0x3ff)) continue; // NaN payloads
      if (f32ToF16(f16ToF32(h)) !== h) wrong.push(h);
    }
    expect(wrong).toEqual([]);
    expect(f16ToF32(0x3c00)).toBe(1);
    expect(f16ToF32(0xc000)).toBe(-2);
    expect(f16ToF32(0x0001)).toBe(2 ** -24);
    expect(f16ToF32(0x7bff)).toBe(65504);
    expect(f32ToF16(1 + 2 ** -11)).toBe(0x3c00); // tie -> even
    expect(f32ToF16(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie -> even (up)
    expect(f32ToF16(65520)).toBe(0x7c00); // overflow -> inf
    expect(f32ToF16(2 ** -25)).toBe(0); // tie below the smallest subnormal -> 0
    expect(f32ToF16(3 * 2 ** -26)).toBe(1);
    expect(Number.isNaN(f16ToF32(f32ToF16(NaN)))).toBe(true);
    expect(f32ToBf16(1 + 2 ** -8)).toBe(0x3f80); // tie -> even
  });
});

describe('rewriteGguf', () => {
  it.skipIf(!haveStories)('replaces F32 payloads in place and keeps every other byte', async () => {
    const g = await readGguf(STORIES);
    const out = path.join(tmp, 'stories-new.gguf');
    const norm = (await readGgufTensor(g, 'output_norm.weight')).map((x) => x * 2);
    const stats = await rewriteGguf(STORIES, out, new Map([['output_norm.weight', norm]]));
    expect(stats.tensors).toBe(1);
    const a = await readFile(STORIES);
    const b = await readFile(out);
    expect(b.length).toBe(a.length);
    const t = g.tensors.find((x) => x.name === 'output_norm.weight')!;
    let differing = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) differing++;
    expect(differing).toBeGreaterThan(0);
    expect(differing).toBeLessThanOrEqual(64 * 4);
    expect(a.subarray(0, t.fileOffset).equals(b.subarray(0, t.fileOffset))).toBe(true);
    expect(a.subarray(t.fileOffset + 256).equals(b.subarray(t.fileOffset + 256))).toBe(true);
    expect(Array.from(await readGgufTensor(await readGguf(out), 'output_norm.weight'))).toEqual(Array.from(norm));
  });

  it.skipIf(!haveTiny)('writes F16 tensors by conversion: unchanged values give identical bytes', async () => {
    const g = await readGguf(TINY);
    const all = await readGgufTensors(g);
    const out = path.join(tmp, 'tiny-new.gguf');
    await rewriteGguf(TINY, out, all);
    expect((await readFile(out)).equals(await readFile(TINY))).toBe(true);
    const q = all.get('blk.0.attn_q.weight')!.map((x) => x + 0.25);
    await rewriteGguf(TINY, out, { 'blk.0.attn_q.weight': q });
    const back = await readGgufTensor(await readGguf(out), 'blk.0.attn_q.weight');
    back.forEach((x, i) => expect(Math.abs(x - q[i]!)).toBeLessThanOrEqual(Math.abs(q[i]!) * 2 ** -11 + 1e-7));
  });

  it('is atomic: a failed rewrite leaves the destination whole and no temp file behind', async () => {
    const src = await put('atomic-src.gguf', tinyLlama({ seed: 2 }));
    const dst = path.join(tmp, 'atomic', 'model.gguf');
    await rm(path.dirname(dst), { recursive: true, force: true });
    await (await import('node:fs/promises')).mkdir(path.dirname(dst));
    await copyFile(src, dst);
    const before = await readFile(dst);
    const g = await readGguf(src);
    const n = g.tensors.find((t) => t.name === 'output_norm.weight')!.elements;

    let e = await errorOf(rewriteGguf(src, dst, { 'output_norm.weight': new Float32Array(n + 1) }));
    expect(e.code).toBe('GGUF_CORRUPT');
    expect(e.message).toContain(`${n + 1} values were given`);
    e = await errorOf(rewriteGguf(src, dst, { 'no.such.tensor': new Float32Array(1) }));
    expect(e.code).toBe('GGUF_TENSOR_NOT_FOUND');
    const q8 = await put('atomic-q8.gguf', tinyLlama({ matrixType: 8 }));
    e = await errorOf(rewriteGguf(q8, dst, { 'blk.0.attn_q.weight': new Float32Array(16 * 16) }));
    expect(e.code).toBe('GGUF_UNSUPPORTED_TENSOR_TYPE');
    // A write that fails after the temp file is written: the destination is a directory, so the
    // final rename fails; the temp file must be removed.
    const dirDst = path.join(tmp, 'atomic', 'is-a-dir.gguf');
    await (await import('node:fs/promises')).mkdir(dirDst);
    e = await errorOf(rewriteGguf(src, dirDst, {}));
    expect(e.code).toBe('GGUF_IO');

    expect((await readFile(dst)).equals(before)).toBe(true);
    expect((await readdir(path.dirname(dst))).sort()).toEqual(['is-a-dir.gguf', 'model.gguf']);

    // In place (destination = source) works: the source is read fully first.
    await rewriteGguf(dst, dst, { 'output_norm.weight': new Float32Array(n).fill(0.5) });
    expect(Array.from(await readGgufTensor(await readGguf(dst), 'output_norm.weight'))).toEqual(new Array(n).fill(0.5));
  });
});
