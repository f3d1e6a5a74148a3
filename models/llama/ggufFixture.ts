/**
 * Test fixture helper on top of the one GGUF writer (`models/gguf/writeGguf.ts`): copies a GGUF
 * file while adding (or replacing) string metadata keys, e.g. `tokenizer.chat_template`, so the
 * chat-template path can be exercised with the tiny models (neither shared model carries a
 * template). Not used at run time.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { isFloatTensorType, parseGgufHeader, readGguf } from '../gguf/readGguf.ts';
import { rewriteGguf } from '../gguf/rewriteGguf.ts';
import { encodeGgufLayout, layoutOfGguf } from '../gguf/writeGguf.ts';

/**
 * Writes `dst`: `src` with the given string metadata set (replaced keys are dropped from their
 * place; every key of `strings` is appended after the file's own). Version, alignment, tensor
 * infos and tensor payloads are copied unchanged.
 *
 * @throws GgufError when `src` is not a GGUF v2/v3 file (`GGUF_NOT_GGUF`, `GGUF_TRUNCATED`, ...).
 */
export async function writeGgufWithMetadata(src: string, dst: string, strings: Record<string, string>): Promise<void> {
  const bytes = await readFile(src);
  const layout = layoutOfGguf(parseGgufHeader(bytes, src), bytes);
  const added = Object.entries(strings).map(([key, value]) => [key, { type: 'string', value }] as const);
  const metadata = [...layout.metadata.filter(([key]) => !Object.hasOwn(strings, key)), ...added];
  await writeFile(dst, encodeGgufLayout({ ...layout, metadata }));
}

/**
 * Writes `dst`: `src` (a GGUF of F32/F16/BF16 tensors) with every value of the float tensors
 * accepted by `which` (all of them by default) set to `value` (NaN by default), through the one
 * GGUF writer (`rewriteGguf`). Header, tokenizer and shapes stay valid: llama.cpp loads the result.
 *
 * @returns the names of the tensors rewritten.
 */
export async function writeNonFiniteGguf(src: string, dst: string, value = Number.NaN, which: (name: string) => boolean = () => true): Promise<string[]> {
  const file = await readGguf(src);
  const replacements = new Map<string, Float32Array>();
  for (const t of file.tensors) {
    if (isFloatTensorType(t.type) && which(t.name)) replacements.set(t.name, new Float32Array(t.elements).fill(value));
  }
  await rewriteGguf(src, dst, replacements);
  return [...replacements.keys()];
}
