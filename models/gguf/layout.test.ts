/** The exact layout encoder and its round trip through the reader (`writeGguf.ts`, `readGguf.ts`). */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tinyModel } from '../../test/cli.ts';
import { writeGgufWithMetadata } from '../llama/ggufFixture.ts';
import { buildGguf, str, tinyLlama, u32 } from '../trainer/testing/ggufBuilder.ts';
import { parseGgufHeader } from './readGguf.ts';
import { encodeGgufLayout, layoutOfGguf } from './writeGguf.ts';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-layout-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const roundTrip = (bytes: Buffer, name: string) => encodeGgufLayout(layoutOfGguf(parseGgufHeader(bytes, name), bytes));

describe('GGUF layouts', () => {
  it('re-encoding a parsed file gives its bytes back: F32, Q8_0 payloads, GGUF v2 with 64-byte alignment', () => {
    for (const [name, bytes] of [
      ['f32', tinyLlama()],
      ['q8', tinyLlama({ matrixType: 8, tied: true })],
      [
        'v2',
        buildGguf({
          version: 2,
          alignment: 64,
          metadata: [['general.alignment', u32(64)], ['t.strs', { type: 'array', itemType: 'string', value: ['a', '', 'bc'] }]],
          tensors: [{ name: 'a', dims: [3], values: new Float32Array([1, 2, 3]) }, { name: 'b', dims: [5], type: 1, bytes: new Uint8Array(10).fill(9) }],
        }),
      ],
    ] as const) {
      expect(roundTrip(bytes, name).equals(bytes), name).toBe(true);
    }
  });

  it('packs offsets: each payload starts at a multiple of the alignment after the previous one', () => {
    const bytes = buildGguf({ alignment: 64, metadata: [['general.alignment', u32(64)]], tensors: [{ name: 'a', dims: [3], values: new Float32Array(3) }, { name: 'b', dims: [20], values: new Float32Array(20) }, { name: 'c', dims: [1], values: new Float32Array(1) }] });
    const g = parseGgufHeader(bytes, 'packed');
    // 12 bytes -> 64, 80 bytes -> 128, 4 bytes -> 64
    expect(g.tensors.map((t) => t.offset)).toEqual([0, 64, 192]);
    expect(g.dataStart % 64).toBe(0);
    expect(bytes.length).toBe(g.dataStart + 256);
  });

  it('refuses values that do not fit their type, naming the key', () => {
    const enc = (value: { type: 'u8' | 'array' | 'bool'; itemType?: 'array' | 'i8'; value: never }) =>
      () => encodeGgufLayout({ metadata: [['k.bad', value]], tensors: [] });
    expect(enc({ type: 'u8', value: 256 as never })).toThrow(/"k\.bad": 256 is not a valid u8/);
    expect(enc({ type: 'bool', value: 1 as never })).toThrow(/"k\.bad": 1 is not a valid bool/);
    expect(enc({ type: 'array', itemType: 'array', value: [[1]] as never })).toThrow(/"k\.bad": nested arrays/);
    expect(enc({ type: 'array', itemType: 'i8', value: [1, -129] as never })).toThrow(/"k\.bad": -129 is not a valid i8/);
  });

  it('the chat-template fixture copies every tensor byte and sets string keys (a replaced key moves to the end)', async () => {
    const src = path.join(tmp, 'src.gguf');
    await writeFile(src, buildGguf({ metadata: [['general.architecture', str('llama')], ['general.name', str('old')], ['x.n', u32(5)]], tensors: [{ name: 't', dims: [4], values: new Float32Array([1, 2, 3, 4]) }] }));
    const dst = path.join(tmp, 'dst.gguf');
    await writeGgufWithMetadata(src, dst, { 'general.name': 'new', 'tokenizer.chat_template': '{{ x }}' });
    const [a, b] = [await readFile(src), await readFile(dst)];
    const [ga, gb] = [parseGgufHeader(a, src), parseGgufHeader(b, dst)];
    expect(Object.entries(gb.metadata)).toEqual([
      ['general.architecture', 'llama'],
      ['x.n', 5],
      ['general.name', 'new'],
      ['tokenizer.chat_template', '{{ x }}'],
    ]);
    expect(b.subarray(gb.dataStart).equals(a.subarray(ga.dataStart))).toBe(true);
  });

  it.skipIf(!existsSync(tinyModel))('stories260K (written by llama.cpp) re-encodes to its own bytes', async () => {
    const bytes = await readFile(tinyModel);
    expect(roundTrip(bytes, tinyModel).equals(bytes)).toBe(true);
  });
});
