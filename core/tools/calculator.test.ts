import { describe, expect, it } from 'vitest';
import { ToolError, calculatorTool, evaluateExpression, type ToolErrorCode } from './index.ts';

const calc = (expression: unknown) => calculatorTool.run({ expression }, {}) as { value: number; expression: string };

function errorOf(expression: unknown): ToolError {
  try {
    calc(expression);
  } catch (e) {
    if (e instanceof ToolError) return e;
    throw e;
  }
  throw new Error(`expected ${JSON.stringify(expression)} to fail`);
}

describe('calculator values (computed by hand)', () => {
  it.each([
    ['2+3*4', 14],
    ['(2+3)*4', 20],
    ['2^3^2', 512], // right-assoc: 2^(3^2) = 2^9
    ['2**3**2', 512],
    ['(2^3)^2', 64],
    ['-2^2', -4], // unary minus binds looser than power
    ['(-2)^2', 4],
    ['2^-1', 0.5],
    ['-2^-2', -0.25],
    ['10 % 3', 1],
    ['-7 % 3', -1], // remainder takes the left operand's sign
    ['7/2', 3.5],
    ['1,000*2', 2000],
    ['1,234,567 - 1', 1234566],
    ['$5 * 3', 15],
    ['$1,000.50 + 0.5', 1001],
    ['((1 + 2) * (3 + (4 - 1))) / 2', 9],
    ['  16 -  3 - 4\t*\n2 ', 5], // whitespace anywhere; 16-3-8
    ['8 - 3 - 2', 3], // left-assoc
    ['100 / 10 / 5', 2],
    ['6 × 7 ÷ 2', 21],
    ['5 \u2212 2', 3],
    ['--5', 5],
    ['+3', 3],
    ['.5 + 1.', 1.5],
    ['2e3 / 4', 500],
    ['0.1 + 0.2', 0.3], // rounded to 15 significant digits
    ['-0', 0],
    ['48/2', 24],
  ] as const)('%s = %s', (expression, want) => {
    const out = calc(expression);
    expect(out.value).toBe(want);
    expect(out.expression).toBe(expression);
  });

  it('accepts a finite number as its text', () => {
    expect(calc(42)).toEqual({ value: 42, expression: '42' });
  });

  it('evaluateExpression returns the unrounded value', () => {
    expect(evaluateExpression('0.1 + 0.2')).toBe(0.1 + 0.2);
  });
});

describe('calculator errors say what and where', () => {
  it.each([
    ['3 + 4))', 'PARSE_ERROR', 6, `unexpected ')' at column 6 in "3 + 4))"`], // the first ')' closes nothing
    ['(3 + 4))', 'PARSE_ERROR', 8, `unexpected ')' at column 8 in "(3 + 4))"`],
    ['3 + (4', 'PARSE_ERROR', 7, 'unexpected end of expression at column 7'],
    ['2 3', 'PARSE_ERROR', 3, `unexpected '3' at column 3`],
    ['2(3)', 'PARSE_ERROR', 2, `unexpected '(' at column 2`],
    ['()', 'PARSE_ERROR', 2, `unexpected ')' at column 2`],
    ['1 +', 'PARSE_ERROR', 4, 'unexpected end of expression at column 4'],
    ['1,0000', 'PARSE_ERROR', 2, `unexpected ',' at column 2`],
    ['1 $', 'PARSE_ERROR', 3, `unexpected '$' at column 3`],
    ['50%', 'PARSE_ERROR', 4, 'unexpected end of expression at column 4'], // % is remainder, not percent
    ['1/0', 'DIVISION_BY_ZERO', 2, 'division by zero at column 2 in "1/0"'],
    ['5 % (2 - 2)', 'DIVISION_BY_ZERO', 3, 'remainder of division by zero at column 3'],
    ['10^400', 'NOT_FINITE', 3, `the result of '^' at column 3 is Infinity`],
    ['(-8)^(1/3)', 'NOT_FINITE', 5, 'is NaN'],
    ['1e999', 'NOT_FINITE', 1, 'too large'],
    ['0^-1', 'NOT_FINITE', 2, 'Infinity'],
  ] as const)('%j -> %s at column %i', (expression, code: ToolErrorCode, column, text) => {
    const err = errorOf(expression);
    expect(err.code).toBe(code);
    expect(err.column).toBe(column);
    expect(err.message).toContain(text);
    expect(err.message.startsWith(`${code}: `)).toBe(true);
  });

  it('gives the message in the brief format (column of the first stray character)', () => {
    expect(errorOf('3 + 4))').message).toBe(`PARSE_ERROR: unexpected ')' at column 6 in "3 + 4))"`);
  });

  it('rejects empty, missing, non-string and over-long input as BAD_INPUT', () => {
    expect(errorOf('').code).toBe('BAD_INPUT');
    expect(errorOf('   ').code).toBe('BAD_INPUT');
    expect(errorOf(undefined).code).toBe('BAD_INPUT');
    expect(errorOf({ a: 1 }).message).toMatch(/must be a string, got object/);
    const long = errorOf('1+'.repeat(250) + '1');
    expect(long.code).toBe('BAD_INPUT');
    expect(long.message).toMatch(/501 characters long; the limit is 500/);
    expect(calc('1+'.repeat(249) + '1').value).toBe(250); // 499 characters is fine
  });

  it('never runs code: names, calls and statements are parse errors', () => {
    let ran = false;
    (globalThis as Record<string, unknown>).__flowlabProbe = () => { ran = true; };
    try {
      for (const [src, col] of [['constructor', 1], ['process.exit(1)', 1], ['1;2', 2], ['__flowlabProbe()', 1], ['Math.PI', 1],
        ['1 + x', 5], ['(1)[0]', 4], ['"1"+1', 1], ['1,2', 2], ['2 ** 3 // 2', 9]] as const) {
        const err = errorOf(src);
        expect(err.code, src).toBe('PARSE_ERROR');
        expect(err.column, src).toBe(col);
      }
      expect(errorOf('constructor').message).toBe(`PARSE_ERROR: unexpected 'constructor' at column 1 in "constructor"`);
      expect(errorOf('process.exit(1)').message).toContain(`unexpected 'process' at column 1`);
      expect(ran).toBe(false);
    } finally {
      delete (globalThis as Record<string, unknown>).__flowlabProbe;
    }
  });

  it('survives deep nesting within the length cap', () => {
    expect(calc('('.repeat(200) + '7' + ')'.repeat(200)).value).toBe(7);
    expect(calc('-'.repeat(199) + '7').value).toBe(-7);
  });

  it('stops when the signal is already aborted', () => {
    const ac = new AbortController();
    ac.abort();
    expect(() => calculatorTool.run({ expression: '1+1' }, { signal: ac.signal })).toThrow(expect.objectContaining({ code: 'ABORTED' }));
  });
});
