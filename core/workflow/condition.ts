/**
 * Edge conditions: a tiny, safe expression language evaluated on the source node's output.
 *   verdict == "revise"      score < 0.5      ok      !done      a == 1 && b != "x"
 * Paths are dotted field names of the output object (`output.` prefix optional; `output` alone is
 * the whole value). Literals: "strings", 'strings', numbers, true, false, null.
 * No function calls, no property access beyond plain fields: never `eval`.
 */
import { FlowlabError } from '../errors.ts';
export type Condition =
  | { op: 'const'; value: boolean }
  | { op: 'truthy'; path: string[] }
  | { op: 'not'; arg: Condition }
  | { op: '&&' | '||'; left: Condition; right: Condition }
  | { op: '==' | '!=' | '<' | '<=' | '>' | '>='; path: string[]; value: string | number | boolean | null };

/** A condition that does not parse; `column` (1-based) points at the fault. */
export class ConditionError extends FlowlabError<'BAD_CONDITION'> {
  override readonly name = 'ConditionError';
  constructor(message: string, readonly column: number) {
    super('BAD_CONDITION', message, { col: column });
  }
}

type Tok = { t: 'id' | 'str' | 'num' | 'op' | 'end'; v: string; col: number };

function lex(src: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) { i++; continue; }
    const col = i + 1;
    if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[\w.]/.test(src[j]!)) j++;
      out.push({ t: 'id', v: src.slice(i, j), col });
      i = j;
    } else if (/[0-9-]/.test(c) && /[0-9]/.test(src[c === '-' ? i + 1 : i] ?? '')) {
      let j = i + 1;
      while (j < src.length && /[0-9.eE]/.test(src[j]!)) j++;
      out.push({ t: 'num', v: src.slice(i, j), col });
      i = j;
    } else if (c === '"' || c === "'") {
      const end = src.indexOf(c, i + 1);
      if (end < 0) throw new ConditionError(`unterminated string starting at column ${col}`, col);
      out.push({ t: 'str', v: src.slice(i + 1, end), col });
      i = end + 1;
    } else {
      const two = src.slice(i, i + 2);
      if (['==', '!=', '<=', '>=', '&&', '||'].includes(two)) { out.push({ t: 'op', v: two, col }); i += 2; }
      else if (['<', '>', '!', '(', ')'].includes(c)) { out.push({ t: 'op', v: c, col }); i++; }
      else throw new ConditionError(`unexpected character '${c}' at column ${col}`, col);
    }
  }
  out.push({ t: 'end', v: '', col: src.length + 1 });
  return out;
}

/** Parses a condition. Throws ConditionError (with a 1-based column) on bad syntax. */
export function parseCondition(src: string): Condition {
  const toks = lex(src);
  let k = 0;
  const peek = () => toks[k]!;
  const next = () => toks[k++]!;
  const expect = (v: string) => {
    const t = next();
    if (t.v !== v || t.t === 'str') throw new ConditionError(`expected '${v}' at column ${t.col}`, t.col);
  };
  const toPath = (id: string) => {
    const parts = id.split('.');
    if (parts[0] === 'output') parts.shift();
    if (parts.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) {
      throw new ConditionError(`bad field path '${id}'`, 1);
    }
    return parts;
  };
  const literal = (): string | number | boolean | null => {
    const t = next();
    if (t.t === 'str') return t.v;
    if (t.t === 'num') {
      const n = Number(t.v);
      if (!Number.isFinite(n)) throw new ConditionError(`bad number '${t.v}' at column ${t.col}`, t.col);
      return n;
    }
    if (t.t === 'id' && (t.v === 'true' || t.v === 'false')) return t.v === 'true';
    if (t.t === 'id' && t.v === 'null') return null;
    throw new ConditionError(`expected a literal at column ${t.col}`, t.col);
  };
  const atom = (): Condition => {
    const t = peek();
    if (t.t === 'op' && t.v === '!') { next(); return { op: 'not', arg: atom() }; }
    if (t.t === 'op' && t.v === '(') { next(); const c = or(); expect(')'); return c; }
    if (t.t !== 'id') throw new ConditionError(`expected a field name at column ${t.col}`, t.col);
    next();
    if ((t.v === 'true' || t.v === 'false') && !(peek().t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(peek().v))) {
      return { op: 'const', value: t.v === 'true' };
    }
    const path = toPath(t.v);
    const op = peek();
    if (op.t === 'op' && ['==', '!=', '<', '<=', '>', '>='].includes(op.v)) {
      next();
      return { op: op.v as '==', path, value: literal() };
    }
    return { op: 'truthy', path };
  };
  const and = (): Condition => {
    let left = atom();
    while (peek().v === '&&' && peek().t === 'op') { next(); left = { op: '&&', left, right: atom() }; }
    return left;
  };
  const or = (): Condition => {
    let left = and();
    while (peek().v === '||' && peek().t === 'op') { next(); left = { op: '||', left, right: and() }; }
    return left;
  };
  if (peek().t === 'end') throw new ConditionError('empty condition', 1);
  const c = or();
  if (peek().t !== 'end') throw new ConditionError(`unexpected '${peek().v}' at column ${peek().col}`, peek().col);
  return c;
}

function get(value: unknown, path: string[]): unknown {
  let v = value;
  for (const p of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, p)) return undefined;
    v = (v as Record<string, unknown>)[p];
  }
  return v;
}

/** Evaluates a parsed condition against a node output. Strings compare case-sensitively after trim. */
export function evalCondition(c: Condition, output: unknown): boolean {
  switch (c.op) {
    case 'const': return c.value;
    case 'truthy': return Boolean(get(output, c.path));
    case 'not': return !evalCondition(c.arg, output);
    case '&&': return evalCondition(c.left, output) && evalCondition(c.right, output);
    case '||': return evalCondition(c.left, output) || evalCondition(c.right, output);
    default: {
      let v = get(output, c.path);
      if (typeof v === 'string') v = v.trim();
      const w = c.value;
      switch (c.op) {
        case '==': return v === w || (typeof w === 'number' && typeof v === 'string' && Number(v) === w);
        case '!=': return !(v === w || (typeof w === 'number' && typeof v === 'string' && Number(v) === w));
        case '<': return typeof v === 'number' && typeof w === 'number' && v < w;
        case '<=': return typeof v === 'number' && typeof w === 'number' && v <= w;
        case '>': return typeof v === 'number' && typeof w === 'number' && v > w;
        case '>=': return typeof v === 'number' && typeof w === 'number' && v >= w;
        default: return c satisfies never;
      }
    }
  }
}

/** Every field comparison and read in a condition: `[path, literal?]` (literal for == and !=). */
export function conditionFields(c: Condition): Array<{ path: string[]; equals?: unknown }> {
  switch (c.op) {
    case 'const': return [];
    case 'truthy': return [{ path: c.path }];
    case 'not': return conditionFields(c.arg);
    case '&&':
    case '||': return [...conditionFields(c.left), ...conditionFields(c.right)];
    case '==':
    case '!=': return [{ path: c.path, equals: c.value }];
    default: return [{ path: c.path }];
  }
}
