/**
 * Edits of the workflow document as diffs of its lines, for undo and redo: one edit is
 * `{at, added, updated, removed}`, the records-diff shape of tldraw's `RecordsDiff` (added
 * records, updated ones as `[from, to]`, removed ones) with the document's lines as the records,
 * keyed by line index. Only the changed lines are kept, never a whole text.
 *
 * The changed region is what lies between the common prefix and the common suffix of the two
 * texts' lines (as `diffLines` in preserveFormat.ts trims them). Inside it, the k-th line of
 * each side is paired: a pair whose lines differ is `updated` (same index on both sides), the
 * lines past the shorter side are `added` (indexes in the new text) or `removed` (indexes in the
 * old text). One contiguous change (typing, a node appended, a role set) is recorded exactly;
 * changes far apart are recorded with the lines between them as `updated` pairs. Pure, no DOM.
 */

/** One edit of the document's lines. Keys are 0-based line indexes. */
export interface EditDiff {
  /** First line of the changed region (the common prefix's length), same on both sides. */
  at: number;
  /** Lines only in the new text, by their index in it (consecutive from `at` + pairs). */
  added: Record<number, string>;
  /** Lines at the same index on both sides that differ: `[from, to]`. */
  updated: Record<number, [from: string, to: string]>;
  /** Lines only in the old text, by their index in it. */
  removed: Record<number, string>;
}

/** Why a diff does not apply to a text (the text is not the one the diff was made from). */
export class EditDiffConflict extends Error {
  override readonly name = 'EditDiffConflict';
  readonly code = 'EDIT_CONFLICT';
  constructor(readonly line: number, message: string) {
    super(message);
  }
}

/** The diff that turns `before` into `after` (empty: `isEmptyDiff`). Lines split on `\n`. */
export function diffText(before: string, after: string): EditDiff {
  const a = before.split('\n');
  const b = after.split('\n');
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const oldLen = a.length - pre - suf;
  const newLen = b.length - pre - suf;
  const paired = Math.min(oldLen, newLen);
  const diff: EditDiff = { at: pre, added: {}, updated: {}, removed: {} };
  for (let k = 0; k < paired; k++) {
    const from = a[pre + k]!;
    const to = b[pre + k]!;
    if (from !== to) diff.updated[pre + k] = [from, to];
  }
  for (let k = paired; k < newLen; k++) diff.added[pre + k] = b[pre + k]!;
  for (let k = paired; k < oldLen; k++) diff.removed[pre + k] = a[pre + k]!;
  return diff;
}

/** Whether the diff changes nothing. */
export function isEmptyDiff(d: EditDiff): boolean {
  return !Object.keys(d.added).length && !Object.keys(d.updated).length && !Object.keys(d.removed).length;
}

/** The diff that undoes `d`: added and removed swap, every update turns round. */
export function invertDiff(d: EditDiff): EditDiff {
  const updated: EditDiff['updated'] = {};
  for (const [k, [from, to]] of Object.entries(d.updated)) updated[Number(k)] = [to, from];
  return { at: d.at, added: { ...d.removed }, updated, removed: { ...d.added } };
}

/**
 * Applies `d` to `text`. Every line the diff updates or removes must read as the diff says.
 * @throws EditDiffConflict naming the first line (1-based in the message) that does not.
 */
export function applyDiff(text: string, d: EditDiff): string {
  const lines = text.split('\n');
  const updates = entries(d.updated);
  const removed = entries(d.removed);
  const added = entries(d.added);
  for (const [i, [from, to]] of updates) {
    if (lines[i] !== from) throw conflict(i, lines[i], from);
    lines[i] = to;
  }
  // Removed lines are consecutive after the paired region: check, then cut them out in one go.
  if (removed.length) {
    const first = removed[0]![0];
    removed.forEach(([i, line], k) => {
      if (i !== first + k) throw new EditDiffConflict(i, `the edit's removed lines are not consecutive (line ${i + 1})`);
      if (lines[i] !== line) throw conflict(i, lines[i], line);
    });
    lines.splice(first, removed.length);
  }
  if (added.length) {
    const first = added[0]![0];
    if (first > lines.length) throw new EditDiffConflict(first, `the edit adds lines at ${first + 1}, past the end of the text (${lines.length} lines)`);
    lines.splice(first, 0, ...added.map(([, line]) => line));
  }
  return lines.join('\n');
}

/** A diff's size in characters (what an undo entry costs to keep). */
export function diffSize(d: EditDiff): number {
  let n = 0;
  for (const line of Object.values(d.added)) n += line.length;
  for (const line of Object.values(d.removed)) n += line.length;
  for (const [from, to] of Object.values(d.updated)) n += from.length + to.length;
  return n;
}

/** Whether `value` has the shape of an EditDiff (a draft read back from storage). */
export function isEditDiff(value: unknown): value is EditDiff {
  if (!value || typeof value !== 'object') return false;
  const d = value as Record<string, unknown>;
  const lines = (r: unknown, pair: boolean) =>
    !!r && typeof r === 'object' && !Array.isArray(r) &&
    Object.entries(r).every(([k, v]) => /^\d+$/.test(k) && (pair ? Array.isArray(v) && v.length === 2 && v.every((s) => typeof s === 'string') : typeof v === 'string'));
  return Number.isInteger(d.at) && (d.at as number) >= 0 && lines(d.added, false) && lines(d.updated, true) && lines(d.removed, false);
}

function entries<T>(r: Record<number, T>): Array<[number, T]> {
  return Object.entries(r).map(([k, v]) => [Number(k), v] as [number, T]).sort((x, y) => x[0] - y[0]);
}

function conflict(i: number, found: string | undefined, expected: string): EditDiffConflict {
  const show = (s: string | undefined) => (s === undefined ? 'nothing (the text is shorter)' : JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s));
  return new EditDiffConflict(i, `line ${i + 1} reads ${show(found)}, the edit expected ${show(expected)}`);
}
