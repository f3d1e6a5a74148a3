import { describe, expect, it } from 'vitest';
import { annotationPayload, annotationText } from './annotations.ts';

describe('the annotation form', () => {
  it('splits tags on commas and spaces, reads the score, leaves empty fields out', () => {
    expect(annotationPayload('r1', { target: '', score: ' 0.5 ', tags: 'arith, silent  plan,', note: '  right plan ', author: ' ada ' })).toEqual({
      runId: 'r1', score: 0.5, tags: ['arith', 'silent', 'plan'], note: 'right plan', author: 'ada',
    });
    expect(annotationPayload('r1', { target: 'solve', score: '', tags: '', note: '', author: 'bob' })).toEqual({ runId: 'r1', nodeId: 'solve', author: 'bob' });
    // Not a number: passed on as NaN, which the API refuses naming `score`.
    expect(annotationPayload('r1', { target: '', score: 'high', tags: '', note: '', author: 'a' }).score).toBeNaN();
  });

  it('says score, tags and note in that order', () => {
    expect(annotationText({ score: -1, tags: ['a', 'b'], note: 'n' })).toBe('score -1 · a, b · “n”');
    expect(annotationText({ tags: [], note: '' })).toBe('');
  });
});
