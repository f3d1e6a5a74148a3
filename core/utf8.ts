/**
 * Strict UTF-8 decoding for files people hand to Flowlab (workflows, datasets, logs). Node's
 * `readFileSync(file, 'utf8')` replaces every invalid byte with U+FFFD without a word, so a
 * Latin-1 file would be read as text with holes in it; these functions find the first invalid
 * byte instead, so the loader can name the file and the place. The validator follows the
 * well-formed byte sequences of the Unicode Standard, chapter 3, table 3-7 (no overlong forms,
 * no surrogates, nothing above U+10FFFF).
 */

/** Where a file stops being UTF-8: the byte offset (0-based) and the line and column (1-based, in characters of the valid text before it). */
export interface Utf8Fault {
  offset: number;
  line: number;
  column: number;
  /** The offending byte, as two hex digits. */
  byte: string;
}

/** The offset of the first byte that is not part of a well-formed UTF-8 sequence, or -1. */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      const min = k === 1 ? lo : 0x80;
      const max = k === 1 ? hi : 0xbf;
      if (c === undefined || c < min || c > max) return i;
    }
    i += need + 1;
  }
  return -1;
}

/** `bytes` as text (a byte-order mark is kept, as `readFileSync(file, 'utf8')` keeps it), or the first fault. */
export function decodeUtf8(bytes: Uint8Array): { text: string } | { fault: Utf8Fault } {
  const offset = firstInvalidUtf8(bytes);
  if (offset < 0) return { text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes) };
  const before = new TextDecoder('utf-8').decode(bytes.subarray(0, offset));
  const lines = before.split('\n');
  return { fault: { offset, line: lines.length, column: lines[lines.length - 1]!.length + 1, byte: bytes[offset]!.toString(16).padStart(2, '0') } };
}

/** The sentence that describes a fault in `file`: `<file>:<line>:<col>: not UTF-8 text (byte 0xe9 at offset 9); ...`. */
export function utf8FaultMessage(file: string, fault: Utf8Fault): string {
  return `${file}:${fault.line}:${fault.column}: not UTF-8 text (byte 0x${fault.byte} at byte offset ${fault.offset}); save the file as UTF-8`;
}
