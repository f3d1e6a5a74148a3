import { ToolError } from './tool.ts';

/** Longest expression the calculator accepts, in characters. */
export const MAX_EXPRESSION_LENGTH = 500;

/**
 * Arithmetic grammar (recursive descent; nothing is ever passed to `eval` or `Function`):
 *
 *   expression := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '%') unary)*
 *   unary      := ('-' | '+') unary | power
 *   power      := primary (('^' | '**') unary)?          right-associative
 *   primary    := number | '(' expression ')'
 *
 * So `2+3*4` = 14, `2^3^2` = 2^(3^2) = 512, and unary minus binds looser than power:
 * `-2^2` = -(2^2) = -4 (conventional math, as in Python; Excel would say 4), while
 * `2^-1` = 0.5 (an exponent may carry its own sign).
 * - `%` is the remainder, with the sign of the left operand (`-7 % 3` = -1), not a percent sign.
 * - Aliases: `×` for `*`, `÷` for `/`, `**` for `^`, `−` (U+2212) for `-`.
 * - Numbers: `12`, `3.5`, `.5`, `2e3`; thousands separators `1,000` / `1,234,567.5` only as a
 *   1–3 digit head followed by groups of exactly 3 digits (`1,0000` is a parse error at the
 *   comma); one leading `$` is ignored (`$5`).
 * - No names, no implicit multiplication (`2(3)` is an error), no `;` or `,` lists.
 */
export function evaluateExpression(expression: string): number {
  if (expression.trim() === '') throw new ToolError('BAD_INPUT', 'expression is empty');
  if (expression.length > MAX_EXPRESSION_LENGTH) {
    throw new ToolError('BAD_INPUT', `expression is ${expression.length} characters long; the limit is ${MAX_EXPRESSION_LENGTH}`);
  }
  return new Parser(expression).parse();
}

type Op = '+' | '-' | '*' | '/' | '%' | '^';
type Token =
  | { kind: 'num'; value: number; text: string; col: number }
  | { kind: 'op'; op: Op; text: string; col: number }
  | { kind: '(' | ')'; text: string; col: number }
  | { kind: 'end'; text: ''; col: number };

const NUMBER = /\$?(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+|(?=\.\d))(?:\.\d*)?(?:[eE][-+]?\d+)?/y;
const WORD = /[\p{L}_$][\p{L}\p{N}_$]*/uy;
const OPS: Record<string, Op> = { '+': '+', '-': '-', '\u2212': '-', '*': '*', '×': '*', '/': '/', '÷': '/', '%': '%', '^': '^' };

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    const col = i + 1;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')') {
      tokens.push({ kind: c, text: c, col });
      i++;
      continue;
    }
    if (c === '*' && src[i + 1] === '*') {
      tokens.push({ kind: 'op', op: '^', text: '**', col });
      i += 2;
      continue;
    }
    const op = OPS[c];
    if (op) {
      tokens.push({ kind: 'op', op, text: c, col });
      i++;
      continue;
    }
    NUMBER.lastIndex = i;
    const num = NUMBER.exec(src);
    if (num && /\d/.test(num[0])) {
      const text = num[0];
      const value = Number(text.replace(/^\$/, '').replace(/,/g, ''));
      if (!Number.isFinite(value)) throw fail('NOT_FINITE', `number ${text} at column ${col} is too large`, src, col);
      tokens.push({ kind: 'num', value, text, col });
      i += text.length;
      continue;
    }
    WORD.lastIndex = i;
    const word = WORD.exec(src);
    const shown = word ? word[0] : String.fromCodePoint(src.codePointAt(i)!);
    throw fail('PARSE_ERROR', `unexpected '${shown}' at column ${col}`, src, col);
  }
  tokens.push({ kind: 'end', text: '', col: src.length + 1 });
  return tokens;
}

function fail(code: 'PARSE_ERROR' | 'DIVISION_BY_ZERO' | 'NOT_FINITE', what: string, src: string, col: number): ToolError {
  return new ToolError(code, `${what} in ${JSON.stringify(src)}`, { column: col, tool: 'calculator' });
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;

  constructor(private readonly src: string) {
    this.tokens = tokenize(src);
  }

  parse(): number {
    const value = this.expression();
    const next = this.peek();
    if (next.kind !== 'end') throw this.unexpected(next);
    return value;
  }

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private isOp(...ops: Op[]): Extract<Token, { kind: 'op' }> | null {
    const t = this.peek();
    return t.kind === 'op' && ops.includes(t.op) ? t : null;
  }

  private expression(): number {
    let left = this.term();
    for (let t = this.isOp('+', '-'); t; t = this.isOp('+', '-')) {
      this.pos++;
      const right = this.term();
      left = this.finite(t.op === '+' ? left + right : left - right, t);
    }
    return left;
  }

  private term(): number {
    let left = this.unary();
    for (let t = this.isOp('*', '/', '%'); t; t = this.isOp('*', '/', '%')) {
      this.pos++;
      const right = this.unary();
      if (t.op !== '*' && right === 0) {
        throw fail('DIVISION_BY_ZERO', `${t.op === '%' ? 'remainder of division' : 'division'} by zero at column ${t.col}`, this.src, t.col);
      }
      left = this.finite(t.op === '*' ? left * right : t.op === '/' ? left / right : left % right, t);
    }
    return left;
  }

  private unary(): number {
    const t = this.isOp('+', '-');
    if (t) {
      this.pos++;
      const v = this.unary();
      return t.op === '-' ? -v : v;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    const t = this.isOp('^');
    if (!t) return base;
    this.pos++;
    const exponent = this.unary(); // right-assoc: 2^3^2 = 2^(3^2); 2^-1 allowed
    return this.finite(Math.pow(base, exponent), t);
  }

  private primary(): number {
    const t = this.peek();
    if (t.kind === 'num') {
      this.pos++;
      return t.value;
    }
    if (t.kind === '(') {
      this.pos++;
      const v = this.expression();
      const close = this.peek();
      if (close.kind !== ')') throw this.unexpected(close, `expected ')' to close '(' at column ${t.col}`);
      this.pos++;
      return v;
    }
    throw this.unexpected(t);
  }

  private finite(value: number, at: Token): number {
    if (!Number.isFinite(value)) {
      throw fail('NOT_FINITE', `the result of '${at.text}' at column ${at.col} is ${String(value)}`, this.src, at.col);
    }
    return value;
  }

  private unexpected(t: Token, hint?: string): ToolError {
    const what = t.kind === 'end' ? `unexpected end of expression at column ${t.col}` : `unexpected '${t.text}' at column ${t.col}`;
    const err = fail('PARSE_ERROR', what, this.src, t.col);
    return hint ? new ToolError('PARSE_ERROR', `${err.detail} (${hint})`, { column: t.col, tool: 'calculator' }) : err;
  }
}
