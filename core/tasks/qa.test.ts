import { describe, expect, it } from 'vitest';
import { answerText, exactMatch, normalizeAnswer, qaGrader, tokenF1, type Task } from './index.ts';

const task = (expected: string): Task => ({ id: 'qa/test/0', index: 0, input: { question: 'q' }, expected });

describe('normalizeAnswer (SQuAD normalisation)', () => {
  it('lower-cases, drops punctuation and articles, collapses whitespace', () => {
    expect(normalizeAnswer('The  Titan IIIE.')).toBe('titan iiie');
    expect(normalizeAnswer('  An apple,  a pear & THE plum!')).toBe('apple pear plum');
    expect(normalizeAnswer("Marie de' Medici")).toBe('marie de medici');
  });

  it('keeps articles inside words and next to non-ASCII letters', () => {
    expect(normalizeAnswer('Anthem of the Seas')).toBe('anthem of seas');
    expect(normalizeAnswer('the éa')).toBe('éa');
    expect(normalizeAnswer('Małgorzata Braunek')).toBe('małgorzata braunek');
  });

  it('the "A" case: an answer that is only articles keeps them instead of becoming ""', () => {
    expect(normalizeAnswer('A')).toBe('a');
    expect(normalizeAnswer('The')).toBe('the');
    expect(normalizeAnswer('a an the')).toBe('a an the');
    // the official script would give "" for all three, and "" matches any empty prediction
  });

  it('an answer that is only punctuation keeps it (HotpotQA has the band "!!!")', () => {
    expect(normalizeAnswer('!!!')).toBe('!!!');
    expect(normalizeAnswer('   ')).toBe('');
  });
});

describe('exactMatch and tokenF1', () => {
  it('gold "A" is matched by "a" and "A." but not by "", "the" or "an"', () => {
    expect(exactMatch('a', 'A')).toBe(1);
    expect(exactMatch('A.', 'A')).toBe(1);
    expect(exactMatch('', 'A')).toBe(0);
    expect(exactMatch('the', 'A')).toBe(0);
    expect(exactMatch('an', 'A')).toBe(0);
    expect(tokenF1('', 'A')).toBe(0);
    expect(tokenF1('The', 'A')).toBe(0);
    expect(tokenF1('a', 'A')).toBe(1);
    expect(exactMatch('', '!!!')).toBe(0);
  });

  it('F1 by hand: "James Madison" vs "President James Madison" is P 1, R 2/3, F1 0.8', () => {
    expect(tokenF1('James Madison', 'President James Madison')).toBeCloseTo(0.8, 12);
    expect(tokenF1('President James Madison', 'James Madison')).toBeCloseTo(0.8, 12);
  });

  it('F1 counts repeated tokens once per gold occurrence: P 2/3, R 1/2, F1 4/7', () => {
    // prediction tokens [cat, cat, sat] (article dropped), gold [cat, sat, on, mat]: 2 in common
    expect(tokenF1('the cat cat sat', 'cat sat on mat')).toBeCloseTo(4 / 7, 12);
  });

  it('F1 is 0 with nothing shared and 1 when both sides are empty', () => {
    expect(tokenF1('Tokyo', 'Paris')).toBe(0);
    expect(tokenF1('  ', '...')).toBe(0); // "..." keeps its punctuation: one token
    expect(tokenF1(' ', '\t')).toBe(1);
    expect(exactMatch('Yes', 'yes')).toBe(1);
  });
});

describe('qaGrader', () => {
  it('correct is exact match, score is token F1, extracted is the normal form', () => {
    expect(qaGrader.grade('James Madison.', task('james madison'))).toMatchObject({ score: 1, correct: true, extracted: 'james madison', expected: 'james madison' });
    const partial = qaGrader.grade({ answer: 'President James Madison' }, task('James Madison'));
    expect(partial.correct).toBe(false);
    expect(partial.score).toBeCloseTo(0.8, 12);
    expect(partial.reason).toBe('EM 0, F1 0.8 ("president james madison" vs "james madison")');
  });

  it('reads numbers, objects and nothing', () => {
    expect(qaGrader.grade(1999, task('1999'))).toMatchObject({ score: 1, correct: true });
    expect(qaGrader.grade({ text: 'yes' }, task('Yes'))).toMatchObject({ score: 1, correct: true });
    expect(qaGrader.grade(undefined, task('Yes'))).toMatchObject({ score: 0, correct: false, extracted: null, reason: 'there is no answer' });
    expect(qaGrader.grade('', task('A'))).toMatchObject({ score: 0, correct: false, extracted: '' });
    expect(answerText({ answer: { text: 'x' } })).toBe('x');
    expect(answerText([1])).toBeNull();
  });
});
