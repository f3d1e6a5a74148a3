import { describe, expect, it } from 'vitest';
import { extractFinalNumber, scanNumbers } from './index.ts';

const NBSP = '\u00a0';
const NNBSP = '\u202f';

/** Issue 30: thousands separated by spaces were read as their last group (`#### 1 234` -> 234). */
describe('thousands separated by spaces (core/tasks/numeric.ts)', () => {
  it.each([
    ['#### 1 234', 1234],
    ['#### 1 234 567', 1234567],
    [`The answer is 18${NBSP}000.`, 18000],
    [`#### 2${NNBSP}500${NNBSP}000`, 2500000],
    [`She saved $12${NNBSP}345.50 in all`, 12345.5],
    ['-1 000', -1000],
  ])('%j is one number, %d', (text, value) => {
    expect(extractFinalNumber(text)).toBe(value);
    expect(scanNumbers(text).filter((t) => /\d/.test(t.text))).toHaveLength(1);
  });

  it.each([
    ['5 10', [5, 10]], // a group of two digits: two numbers
    ['10 100 1000', [10, 100, 1000]], // a list: the last group is followed by another number
    ['2 1/2', [2.5]], // a mixed number, as before
    ['1234 567', [1234, 567]], // a head of four digits is no thousands head
    [`1 000${NBSP}000`, [1, 0]], // mixed separators: ambiguous, not joined
    ['1, 000', [1, 0]], // a comma and a space is no separator
  ])('%j is ambiguous or no grouping: %j', (text, values) => {
    expect(scanNumbers(text).map((t) => t.value)).toEqual(values);
  });
});
