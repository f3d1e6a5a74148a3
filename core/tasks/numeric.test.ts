import { describe, expect, it } from 'vitest';
import { extractFinalNumber, formatNumber, locateFinalNumber, numbersEqual, parseNumber, scanNumbers } from './index.ts';

describe('parseNumber', () => {
  it.each([
    ['1,000', 1000],
    ['$1000', 1000],
    ['1000.0', 1000],
    ['-5', -5],
    ['+3', 3],
    ['1,234.50', 1234.5],
    ['1,234,567', 1234567],
    ['50%', 50], // percent sign ignored
    ['3/4', 0.75], // simple fraction
    ['2 1/2', 2.5], // mixed number
    ['18.', 18], // trailing period
    ['about $80,000 in total.', 80000], // surrounding words: the first number
    ['-$5', -5],
    ['\u22127', -7], // U+2212 minus sign
    ['.5', 0.5],
    ['1e6', 1e6],
    ['#### 1,234', 1234],
    ['no number here', null],
    ['', null],
  ] as const)('%j -> %j', (text, want) => {
    expect(parseNumber(text)).toBe(want);
  });

  it('passes finite numbers through and rejects NaN/Infinity', () => {
    expect(parseNumber(42)).toBe(42);
    expect(parseNumber(Number.NaN)).toBeNull();
    expect(parseNumber(Infinity)).toBeNull();
  });
});

describe('scanNumbers', () => {
  it('tells signs from operators, lists from thousands, dates from fractions', () => {
    expect(scanNumbers('16-3-4=9').map((t) => t.value)).toEqual([16, 3, 4, 9]);
    expect(scanNumbers('then -3 more').map((t) => t.value)).toEqual([-3]);
    expect(scanNumbers('1,2,3').map((t) => t.value)).toEqual([1, 2, 3]);
    expect(scanNumbers('1,0000').map((t) => t.value)).toEqual([1, 0]);
    expect(scanNumbers('on 1/2/2020').map((t) => t.value)).toEqual([1, 2, 2020]);
    expect(scanNumbers('divide by 3/0').map((t) => t.value)).toEqual([3, 0]);
  });

  it('reports the text and offsets of each number', () => {
    expect(scanNumbers('pay $1,000.')).toEqual([{ value: 1000, text: '$1,000', start: 4, end: 10 }]);
  });
});

describe('extractFinalNumber', () => {
  it.each([
    ['The answer is 42.', 42],
    ['#### 1,234', 1234],
    ['She makes 9 * 2 = $18 every day.\n#### 18', 18],
    ['first #### 3 then #### 7 apples', 7], // the last ####
    ['#### no number', null], // a declared non-numeric answer is not rescued
    ['He had 5 apples and ate 2, so 3 are left.', 3], // last number
    ['So the total is \\boxed{1,000} dollars, not 5.', 1000],
    ['\\boxed{\\frac{3}{4}}', 0.75],
    ['{"answer": "1,000", "steps": [1, 2]}', 1000], // JSON text with an answer field
    ['```json\n{"answer": 12}\n```', 12],
    ['nothing', null],
  ] as const)('%j -> %j', (text, want) => {
    expect(extractFinalNumber(text)).toBe(want);
  });

  it('reads numbers, answer objects and other objects', () => {
    expect(extractFinalNumber(18)).toBe(18);
    expect(extractFinalNumber({ answer: 18 })).toBe(18);
    expect(extractFinalNumber({ answer: 'It is 18.' })).toBe(18);
    expect(extractFinalNumber({ answer: { answer: '$5' } })).toBe(5);
    expect(extractFinalNumber({ reasoning: 'x', result: 7 })).toBe(7); // stringified, last number
    expect(extractFinalNumber(null)).toBeNull();
    expect(extractFinalNumber(undefined)).toBeNull();
    expect(extractFinalNumber(true)).toBeNull();
  });

  it('says which rule found the number', () => {
    expect(locateFinalNumber('x #### 5')?.source).toBe('hashes');
    expect(locateFinalNumber({ answer: '5' })?.source).toBe('answer-field');
    expect(locateFinalNumber('a 1 b 2')).toEqual({ value: 2, text: '2', source: 'last-number' });
  });
});

describe('numbersEqual / formatNumber', () => {
  it('uses an absolute tolerance near zero and a relative one for large values', () => {
    expect(numbersEqual(0.1 + 0.2, 0.3)).toBe(true);
    expect(numbersEqual(1, 1.000002)).toBe(false);
    expect(numbersEqual(1e9, 1e9 + 0.5)).toBe(true);
    expect(numbersEqual(1e9, 1e9 + 10_000)).toBe(false);
    expect(numbersEqual(Number.NaN, Number.NaN)).toBe(false);
  });

  it('formats without float noise', () => {
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(-0)).toBe('0');
    expect(formatNumber(1000)).toBe('1000');
  });
});
