import { describe, expect, it } from 'vitest';
import { revealScrollTop } from './windowedList.ts';

// Rows of 28 px under a 30 px header in a 300 px box: 270 px show rows, 9 whole rows (252 px) and a part.
describe('revealScrollTop', () => {
  it('leaves a row that is already in view where it is', () => {
    // At scrollTop 280 rows 10..19 are under the header: row 10 starts at 30 + 280 = 310 (the header's bottom edge + 280).
    expect(revealScrollTop(280, 300, 30, 28, 10)).toBe(280);
    // Row 18 ends at 30 + 19·28 = 562 ≤ 280 + 300 = 580: in view.
    expect(revealScrollTop(280, 300, 30, 28, 18)).toBe(280);
  });

  it('puts a row above the view just under the header', () => {
    expect(revealScrollTop(280, 300, 30, 28, 9)).toBe(252); // 9 · 28
    expect(revealScrollTop(5000, 300, 30, 28, 0)).toBe(0);
  });

  it('puts a row below the view at the bottom of the box', () => {
    // Row 19 ends at 30 + 20·28 = 590; the box must end there: 590 − 300 = 290.
    expect(revealScrollTop(280, 300, 30, 28, 19)).toBe(290);
    // Row 1219 (the 2,000-node trace's failing node in execution order, say) from the top: 30 + 1220·28 − 300.
    expect(revealScrollTop(0, 300, 30, 28, 1219)).toBe(33_890);
  });

  it('puts the row under the header when the box is too short to show it whole', () => {
    expect(revealScrollTop(0, 40, 30, 28, 5)).toBe(140);
    expect(revealScrollTop(1000, 40, 30, 28, 5)).toBe(140);
  });
});
