/**
 * Structured output from servers that do not enforce a schema: the JSON value a model wrote
 * inside prose or a fenced block ("Here is the plan:\n```json\n{...}\n```"), found and checked
 * against the contract, so a role's output survives a server without grammar-constrained
 * decoding. The engine (core/engine/runNode.ts) uses it only when the whole answer is not valid
 * JSON under the schema, records that it did (`ModelCallRecord.repair`), and refuses it in
 * strict mode. Pure.
 */

/** How an output was repaired: the JSON came from a fenced code block, or from inside prose. */
export type RepairKind = 'fenced' | 'embedded';
export const REPAIR_KINDS: readonly RepairKind[] = ['fenced', 'embedded'];

/** What `repairJson` found. */
export type RepairResult =
  /** A candidate that parses and is valid under the contract: the value and where it came from. */
  | { ok: true; value: unknown; kind: RepairKind }
  /** Candidates parsed but none was valid: the first of them (its contract errors are the failure). */
  | { ok: false; invalid: unknown; kind: RepairKind }
  /** No JSON value in the text. */
  | { ok: false; invalid?: undefined };

const FENCE = /```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n([\s\S]*?)```/g;

/**
 * The JSON value a text holds for a contract: first the fenced code blocks in order (```json,
 * ``` or any language whose body parses as JSON), then the balanced `{…}` and `[…]` spans of the
 * text in order of their start (strings and escapes honoured), each parsed with JSON.parse and
 * checked with `valid`. The first valid candidate wins. A candidate inside an earlier candidate
 * is tried after it (the outer object first). At most 64 spans are tried.
 * @param valid the contract's validator (the engine's Ajv validator of the node's schema).
 */
export function repairJson(text: string, valid: (value: unknown) => boolean): RepairResult {
  let firstInvalid: { invalid: unknown; kind: RepairKind } | undefined;
  const consider = (raw: string, kind: RepairKind): RepairResult | undefined => {
    let value: unknown;
    try {
      value = JSON.parse(raw.trim());
    } catch {
      return undefined;
    }
    if (valid(value)) return { ok: true, value, kind };
    firstInvalid ??= { invalid: value, kind };
    return undefined;
  };
  for (const m of text.matchAll(FENCE)) {
    const hit = consider(m[2]!, 'fenced');
    if (hit) return hit;
  }
  let tried = 0;
  for (let i = 0; i < text.length && tried < 64; i++) {
    const c = text[i];
    if (c !== '{' && c !== '[') continue;
    const end = balancedEnd(text, i);
    if (end < 0) continue;
    tried++;
    const hit = consider(text.slice(i, end + 1), 'embedded');
    if (hit) return hit;
  }
  return firstInvalid ? { ok: false, ...firstInvalid } : { ok: false };
}

/** The index of the bracket closing the one at `start` (`{` or `[`), or -1; JSON strings are skipped. */
function balancedEnd(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') stack.push(c === '{' ? '}' : ']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (!stack.length) return i;
    }
  }
  return -1;
}
