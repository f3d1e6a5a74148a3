/**
 * File names built from workflow or task text (role names, node ids): such text may hold `/`,
 * `\`, `..`, NUL, control characters or be a reserved Windows name, and a file name made from
 * it must stay one plain name inside the folder it is written to.
 */

/** Longest name part kept (bytes are ASCII after mapping), before the suffix and extension. */
export const MAX_NAME_PART = 100;

/** Windows device names, which open a device instead of a file whatever the extension. */
const RESERVED = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i;

/** FNV-1a 32-bit hash of `text` as 8 hex digits (a short, stable tag; not cryptographic). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * One safe file-name part for `text`: `text` itself when it is already plain (letters, digits,
 * `_`, `-`, `.`, not starting with `.`, at most {@link MAX_NAME_PART} characters, not a reserved
 * device name); otherwise every other character becomes `_`, leading dots become `_`, it is cut
 * to length, and `-<8 hex>` (a hash of the original text) is appended so two different texts
 * never map to one name (`a/b` and `a_b`). Never empty, never contains a path separator.
 * `unique: false` leaves the hash off (the mapped text alone, as train-loop version folders have
 * always been named; `a/b` and `a_b` then share a name).
 *
 * @example safeFileName('solver') === 'solver'; safeFileName('../../escaped-role') === '___.._escaped-role-<hash>'
 */
export function safeFileName(text: string, options: { unique?: boolean } = {}): string {
  if (/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(text) && text.length <= MAX_NAME_PART && !RESERVED.test(text.split('.')[0]!)) return text;
  const mapped = text.replace(/[^A-Za-z0-9_.-]/g, '_').replace(/^\.+/, (dots) => '_'.repeat(dots.length)).slice(0, MAX_NAME_PART) || '_';
  if (options.unique === false) return RESERVED.test(mapped.split('.')[0]!) ? `_${mapped}` : mapped;
  return `${mapped}-${fnv1a(text)}`;
}
