/**
 * Keeps the user's formatting when the YAML is rewritten after a graph edit. The `yaml`
 * Document API keeps comments and structure but re-serialises everything in its own style
 * (spacing before `#`, padding inside `[ ]`). So: serialise the document before and after the
 * edit, diff those two by line, and emit the ORIGINAL line wherever the serialised line did not
 * change. Only the lines the edit touched come out in the serialiser's style.
 */

/** Serialiser options used on both sides of the diff (no folding; flow padding as the text writes it). */
export function toStringOptions(original: string) {
  return { lineWidth: 0, minContentWidth: 0, flowCollectionPadding: prefersFlowPadding(original) } as const;
}

/**
 * Whether the text writes flow maps padded (`{ a: 1 }`) rather than tight (`{a: 1}`). The yaml
 * serialiser has one switch for maps and lists; maps decide (workflows write edges as maps).
 */
export function prefersFlowPadding(text: string): boolean {
  const padded = text.match(/\{ \S/g)?.length ?? 0;
  const tight = text.match(/\{[^\s}]/g)?.length ?? 0;
  return padded >= tight;
}

/** Largest middle section (lines × lines) diffed exactly; bigger changes take the new text as is. */
const MAX_DIFF_CELLS = 4_000_000;

/**
 * Rebuilds `edited` (the serialised edited document) reusing `original`'s lines where the edit
 * left them alone. `base` is the serialisation of the unedited document. Falls back to `edited`
 * when `original` and `base` do not line up one to one.
 */
export function preserveFormatting(original: string, base: string, edited: string): string {
  const o = original.split('\n');
  const b = base.split('\n');
  const e = edited.split('\n');
  // A trailing newline difference only: align on content.
  if (o.length !== b.length) {
    if (o.length === b.length + 1 && o[o.length - 1] === '') o.pop();
    else return edited;
    if (o.length !== b.length) return edited;
  }
  const out: string[] = [];
  for (const op of diffLines(b, e)) {
    if (op.kind === 'same') out.push(o[op.baseIndex]!);
    else out.push(e[op.editedIndex]!);
  }
  const text = out.join('\n');
  return original.endsWith('\n') && !text.endsWith('\n') ? text + '\n' : text;
}

type LineOp = { kind: 'same'; baseIndex: number; editedIndex: number } | { kind: 'new'; editedIndex: number };

/**
 * The lines of `edited`, each either matched to a line of `base` or new. Common prefix and suffix
 * are matched directly (edits are local); the middle by longest common subsequence.
 */
export function diffLines(base: readonly string[], edited: readonly string[]): LineOp[] {
  let pre = 0;
  while (pre < base.length && pre < edited.length && base[pre] === edited[pre]) pre++;
  let suf = 0;
  while (suf < base.length - pre && suf < edited.length - pre && base[base.length - 1 - suf] === edited[edited.length - 1 - suf]) suf++;
  const ops: LineOp[] = [];
  for (let i = 0; i < pre; i++) ops.push({ kind: 'same', baseIndex: i, editedIndex: i });
  const bMid = base.slice(pre, base.length - suf);
  const eMid = edited.slice(pre, edited.length - suf);
  if (bMid.length * eMid.length > MAX_DIFF_CELLS) {
    for (let j = 0; j < eMid.length; j++) ops.push({ kind: 'new', editedIndex: pre + j });
  } else {
    for (const [bi, ej] of lcsPairs(bMid, eMid)) {
      ops.push(bi < 0 ? { kind: 'new', editedIndex: pre + ej } : { kind: 'same', baseIndex: pre + bi, editedIndex: pre + ej });
    }
  }
  for (let k = 0; k < suf; k++) ops.push({ kind: 'same', baseIndex: base.length - suf + k, editedIndex: edited.length - suf + k });
  return ops;
}

/** For each line of `b`: [index in `a` or -1, index in `b`], from an LCS table. */
function lcsPairs(a: readonly string[], b: readonly string[]): Array<[number, number]> {
  const n = a.length;
  const m = b.length;
  const w = m + 1;
  const t = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j] ? t[(i + 1) * w + j + 1]! + 1 : Math.max(t[(i + 1) * w + j]!, t[i * w + j + 1]!);
    }
  }
  const out: Array<[number, number]> = [];
  let i = 0;
  let j = 0;
  while (j < m) {
    if (i < n && a[i] === b[j]) out.push([i++, j++]);
    else if (i < n && t[(i + 1) * w + j]! >= t[i * w + j + 1]!) i++;
    else out.push([-1, j++]);
  }
  return out;
}
