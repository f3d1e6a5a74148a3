/**
 * Test fixture helper on top of the one GGUF writer (`models/gguf/writeGguf.ts`): copies a GGUF
 * file while adding (or replacing) string metadata keys, e.g. `tokenizer.chat_template`, so the
 * chat-template path can be exercised with the tiny models (neither shared model carries a
 * template). Not used at run time.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { parseGgufHeader } from '../gguf/readGguf.ts';
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
