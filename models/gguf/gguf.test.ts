import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeGguf, makeLoraAdapter, readLoraBase, writeGguf, type GgufDocument } from './index.ts';

const SHARED = process.env.FLOWLAB_SHARED ?? path.resolve(process.cwd(), '../shared');
const STORIES = path.join(SHARED, 'models', 'stories260K.gguf');

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-gguf-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const doc = (): GgufDocument => ({
  metadata: {
    'general.architecture': 'llama',
    'general.name': 'tiny ✓',
    'test.flag': true,
    'test.u32': { type: 'u32', value: 7 },
    'test.i64': { type: 'i64', value: -5n },
    'test.f32': { type: 'f32', value: 0.5 },
    'test.list': { type: 'array', itemType: 'string', items: ['a', 'bc'] },
    'test.ints': { type: 'array', itemType: 'i32', items: [1, -2, 3] },
  },
  tensors: [
    { name: 'a', dims: [3], data: new Float32Array([1, 2, 3]) },
    { name: 'b.weight', dims: [2, 3], data: new Float32Array([0.5, -1, 2, 4, 8, 16]) },
  ],
});

describe('GGUF writer', () => {
  it("writes GGUF v3 that node-llama-cpp's reader parses: metadata, tensor infos, 32-byte aligned data", async () => {
    const file = path.join(tmp, 'doc.gguf');
    await writeGguf(file, doc());
    const info = await readGgufFileInfo(file, { sourceType: 'filesystem', logWarnings: false });
    expect(Number(info.version)).toBe(3);
    expect(info.metadata.general.architecture).toBe('llama');
    expect(info.metadata.general.name).toBe('tiny ✓');
    const test = (info.metadata as unknown as { test: Record<string, unknown> }).test;
    expect(test.flag).toBe(true);
    expect(Number(test.u32)).toBe(7);
    expect(Number(test.i64)).toBe(-5);
    expect(test.f32).toBe(0.5);
    expect(test.list).toEqual(['a', 'bc']);
    expect(test.ints).toEqual([1, -2, 3]);
    const tensors = info.tensorInfo!;
    expect(tensors.map((t) => [t.name, t.dimensions.map(Number), t.ggmlType])).toEqual([
      ['a', [3], 0],
      ['b.weight', [2, 3], 0],
    ]);
    const bytes = await readFile(file);
    for (const [i, t] of tensors.entries()) {
      const at = Number(t.fileOffset);
      expect(at % 32).toBe(0);
      const values = doc().tensors[i]!.data;
      expect(Array.from(values, (_, j) => bytes.readFloatLE(at + j * 4))).toEqual(Array.from(values));
    }
    expect(bytes.length % 32).toBe(0);
  });

  it('rejects invalid documents with a message naming what is wrong', () => {
    const bad = (patch: Partial<GgufDocument>) => () => encodeGguf({ ...doc(), ...patch });
    expect(bad({ tensors: [{ name: 'x', dims: [2, 2], data: new Float32Array(3) }] })).toThrow(/"x" has 3 values, its dimensions \[2, 2\] need 4/);
    expect(bad({ tensors: [{ name: 'x', dims: [1], data: new Float32Array(1) }, { name: 'x', dims: [1], data: new Float32Array(1) }] })).toThrow(/duplicate tensor name "x"/);
    expect(bad({ tensors: [{ name: 'x'.repeat(64), dims: [1], data: new Float32Array(1) }] })).toThrow(/1-63 bytes/);
    expect(bad({ tensors: [{ name: 'x', dims: [0], data: new Float32Array(0) }] })).toThrow(/invalid dimension 0/);
    expect(bad({ metadata: { n: { type: 'u8', value: 300 } } })).toThrow(/"n": 300 is not a valid u8/);
    expect(bad({ alignment: 24 })).toThrow(/power of two/);
  });

  it('a non-default alignment is written as general.alignment and honoured', async () => {
    const file = path.join(tmp, 'aligned.gguf');
    await writeGguf(file, { ...doc(), alignment: 64 });
    const info = await readGgufFileInfo(file, { sourceType: 'filesystem', logWarnings: false });
    expect(Number(info.metadata.general.alignment)).toBe(64);
    for (const t of info.tensorInfo!) expect(Number(t.fileOffset) % 64).toBe(0);
  });

  it('atomic write: replaces an existing file and leaves no temp file, also when the write fails', async () => {
    const dir = await mkdtemp(path.join(tmp, 'atomic-'));
    const file = path.join(dir, 'x.gguf');
    await writeFile(file, 'old');
    await writeGguf(file, doc());
    expect((await readFile(file)).toString('latin1', 0, 4)).toBe('GGUF');
    expect(await readdir(dir)).toEqual(['x.gguf']);
    await expect(writeGguf(path.join(dir, 'missing-dir', 'y.gguf'), doc())).rejects.toThrow(/ENOENT/);
    expect(() => encodeGguf({ ...doc(), tensors: [{ name: 'x', dims: [2], data: new Float32Array(1) }] })).toThrow();
    await expect(writeGguf(file, { ...doc(), tensors: [{ name: 'x', dims: [2], data: new Float32Array(1) }] })).rejects.toThrow(RangeError);
    expect(await readdir(dir)).toEqual(['x.gguf']);
  });
});

describe.skipIf(!existsSync(STORIES))('LoRA adapter layout (llama.cpp)', () => {
  it('stories260K: lora_a [in, r] and lora_b [r, out] per targeted weight, adapter metadata', async () => {
    const base = await readLoraBase(STORIES);
    const adapter = makeLoraAdapter(base, { rank: 4, alpha: 8, seed: 3, name: 'test' });
    expect(adapter.metadata).toEqual({
      'general.architecture': 'llama',
      'general.type': 'adapter',
      'general.name': 'test',
      'adapter.type': 'lora',
      'adapter.lora.alpha': { type: 'f32', value: 8 },
    });
    // 5 blocks x (attn_q, attn_v) x (a, b); attn_q is [64, 64], attn_v [64, 32] (4 KV heads x 8).
    expect(adapter.tensors).toHaveLength(20);
    expect(adapter.tensors.slice(0, 4).map((t) => [t.name, t.dims])).toEqual([
      ['blk.0.attn_q.weight.lora_a', [64, 4]],
      ['blk.0.attn_q.weight.lora_b', [4, 64]],
      ['blk.0.attn_v.weight.lora_a', [64, 4]],
      ['blk.0.attn_v.weight.lora_b', [4, 32]],
    ]);
    // zero init: B is zero, A is not; the same seed gives the same bytes.
    expect(adapter.tensors.filter((t) => t.name.endsWith('lora_b')).every((t) => t.data.every((v) => v === 0))).toBe(true);
    expect(adapter.tensors[0]!.data.some((v) => v !== 0)).toBe(true);
    expect(encodeGguf(makeLoraAdapter(base, { rank: 4, alpha: 8, seed: 3, name: 'test' }))).toEqual(encodeGguf(adapter));
    const random = makeLoraAdapter(base, { rank: 2, init: 'random', targets: ['ffn_down'] });
    expect(random.tensors.map((t) => t.dims).slice(0, 2)).toEqual([[172, 2], [2, 64]]);
    expect(random.tensors[1]!.data.some((v) => v !== 0)).toBe(true);
    expect(() => makeLoraAdapter(base, { rank: 0 })).toThrow(/rank must be a positive integer/);
    expect(() => makeLoraAdapter(base, { rank: 2, targets: ['attn_qkv'] })).toThrow(/no base tensor matches/);
  });
});
