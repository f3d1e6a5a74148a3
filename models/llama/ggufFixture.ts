/**
 * Test fixture helper: copies a GGUF file while adding (or replacing) string metadata keys, e.g.
 * `tokenizer.chat_template`, so the chat-template path can be exercised with the tiny models
 * (neither shared model carries a template). Not used at run time.
 */
import { readFile, writeFile } from 'node:fs/promises';

const TYPE_STRING = 8;
const TYPE_ARRAY = 9;
const SCALAR_SIZES: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/**
 * Writes `dst`: `src` with the given string metadata set. Tensor data is copied unchanged; the
 * header is rewritten and re-padded to the file's alignment (`general.alignment`, default 32).
 *
 * @throws Error when `src` is not a GGUF v2/v3 file this helper can parse.
 */
export async function writeGgufWithMetadata(src: string, dst: string, strings: Record<string, string>): Promise<void> {
  const buf = await readFile(src);
  if (buf.toString('latin1', 0, 4) !== 'GGUF') throw new Error(`not a GGUF file: ${src}`);
  const version = buf.readUInt32LE(4);
  if (version < 2) throw new Error(`unsupported GGUF version ${version}: ${src}`);
  const tensorCount = buf.readBigUInt64LE(8);
  const kvCount = Number(buf.readBigUInt64LE(16));
  let pos = 24;

  const readString = (): string => {
    const len = Number(buf.readBigUInt64LE(pos));
    const s = buf.toString('utf8', pos + 8, pos + 8 + len);
    pos += 8 + len;
    return s;
  };
  const skipValue = (type: number): void => {
    if (type === TYPE_STRING) {
      readString();
    } else if (type === TYPE_ARRAY) {
      const elemType = buf.readUInt32LE(pos);
      const count = Number(buf.readBigUInt64LE(pos + 4));
      pos += 12;
      for (let i = 0; i < count; i++) skipValue(elemType);
    } else {
      const size = SCALAR_SIZES[type];
      if (size === undefined) throw new Error(`unknown GGUF value type ${type}`);
      pos += size;
    }
  };

  let alignment = 32;
  const kept: Buffer[] = [];
  let keptCount = 0;
  for (let i = 0; i < kvCount; i++) {
    const start = pos;
    const key = readString();
    const type = buf.readUInt32LE(pos);
    pos += 4;
    if (key === 'general.alignment' && type === 4) alignment = buf.readUInt32LE(pos);
    skipValue(type);
    if (!Object.hasOwn(strings, key)) {
      kept.push(buf.subarray(start, pos));
      keptCount++;
    }
  }
  const tensorInfoStart = pos;
  for (let i = 0n; i < tensorCount; i++) {
    readString();
    const nDims = buf.readUInt32LE(pos);
    pos += 4 + nDims * 8 + 4 + 8;
  }
  const tensorInfo = buf.subarray(tensorInfoStart, pos);
  const dataStart = Math.ceil(pos / alignment) * alignment;

  const added = Object.entries(strings).map(([key, value]) => {
    const k = Buffer.from(key, 'utf8');
    const v = Buffer.from(value, 'utf8');
    const out = Buffer.alloc(8 + k.length + 4 + 8 + v.length);
    let o = 0;
    out.writeBigUInt64LE(BigInt(k.length), o);
    o += 8;
    k.copy(out, o);
    o += k.length;
    out.writeUInt32LE(TYPE_STRING, o);
    o += 4;
    out.writeBigUInt64LE(BigInt(v.length), o);
    o += 8;
    v.copy(out, o);
    return out;
  });

  const head = Buffer.alloc(24);
  buf.copy(head, 0, 0, 16);
  head.writeBigUInt64LE(BigInt(keptCount + added.length), 16);
  const header = Buffer.concat([head, ...kept, ...added, tensorInfo]);
  const padding = Buffer.alloc((alignment - (header.length % alignment)) % alignment);
  await writeFile(dst, Buffer.concat([header, padding, buf.subarray(dataStart)]));
}
