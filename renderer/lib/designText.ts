/**
 * The design text the Trace view shows beside a designed run's graph, and where each validation
 * message lies in it (pure, no DOM). JSON notations are shown as the compiled document,
 * pretty-printed; a document path is located in that text with the `yaml` parser (JSON is YAML,
 * and its nodes keep their source ranges). The `code` notation and a completion that did not
 * parse are shown as written; their messages carry their own location.
 */
import { isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import type { RunDesign } from '../../core/api/client.ts';

export interface DesignText {
  text: string;
  /** `document`: the compiled design, pretty-printed JSON; `written`: the completion as written. */
  source: 'document' | 'written';
  /** Why the text is shown as written, when it is. */
  note?: string;
}

/** The text to show for a design (see the module comment). */
export function designText(design: Pick<RunDesign, 'notation' | 'text' | 'document'>): DesignText {
  if (design.notation === 'code') return { text: typeof design.document === 'string' ? design.document : design.text, source: 'written' };
  if (design.document === undefined) return { text: design.text, source: 'written', note: 'The completion did not parse as a design; it is shown as written.' };
  return { text: JSON.stringify(design.document, null, 2), source: 'document' };
}

/** A character range [start, end) in a text. */
export interface TextRange {
  start: number;
  end: number;
  /** How much of the path was found: `path.length` when all of it (a shorter prefix otherwise). */
  depth: number;
}

/**
 * Where `path` (document keys and indices, e.g. `['steps', 1, 'inputs', 'expression']`) is
 * written in `text` (JSON or YAML): the `key: value` pair of a map entry, the item of a list. A
 * path only partly present (a missing port names a key that is not there) gives its longest
 * present prefix (`depth` shorter than the path); undefined when the text does not parse or not
 * even its first segment is present.
 */
export function locatePath(text: string, path: ReadonlyArray<string | number>): TextRange | undefined {
  const doc = parseDocument(text, { uniqueKeys: false });
  if (doc.errors.length) return undefined;
  let node: unknown = doc.contents;
  let found: TextRange | undefined;
  for (let depth = 0; depth < path.length; depth++) {
    const seg = path[depth]!;
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) break;
      const start = rangeOf(pair.key)?.[0];
      const end = rangeOf(pair.value)?.[1] ?? rangeOf(pair.key)?.[1];
      if (start === undefined || end === undefined) break;
      found = { start, end, depth: depth + 1 };
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg];
      const r = rangeOf(item);
      if (!r) break;
      found = { start: r[0], end: r[1], depth: depth + 1 };
      node = item;
    } else break;
  }
  return found;
}

function rangeOf(node: unknown): [number, number, number] | undefined {
  const r = (node as YamlNode | null | undefined)?.range;
  return r ? [r[0], r[1], r[2]] : undefined;
}

/** A document path as the design's messages write it: `steps[1].inputs.expression`. */
export function formatDocPath(path: ReadonlyArray<string | number>): string {
  return path.map((seg, i) => (typeof seg === 'number' ? `[${seg}]` : i === 0 ? seg : `.${seg}`)).join('') || '(the whole design)';
}
