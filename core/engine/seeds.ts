/**
 * Deterministic seeds. A run's seed is derived from the experiment seed and the task index; each
 * model call's seed from the run seed, node id, attempt and call index, so a resumed or replayed
 * run asks for exactly the same seeds as the original. FNV-1a (32-bit) over the parts' text.
 * Output range: 0 .. 2^31 - 1.
 */
export function deriveSeed(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  const s = parts.join('\u0000');
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) & 0x7fffffff;
}
