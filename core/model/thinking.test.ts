import { describe, expect, it } from 'vitest';
import { opensThinking, splitThinking } from './thinking.ts';

describe('thinking apart from the answer', () => {
  it('a prefilled block: the text starts inside it', () => {
    expect(splitThinking('add 2 and 2\n</think>\n\n4', true)).toEqual({ thinking: 'add 2 and 2', answer: '4' });
    expect(splitThinking('still thinking', true)).toEqual({ thinking: 'still thinking', answer: '' });
  });
  it('a block the model opens itself counts only at the start', () => {
    expect(splitThinking('  <think>hm</think> yes', false)).toEqual({ thinking: 'hm', answer: 'yes' });
    expect(splitThinking('yes <think>hm</think>', false)).toEqual({ answer: 'yes <think>hm</think>' });
  });
  it('a prompt opens a block when its last <think> is not closed', () => {
    expect(opensThinking('<|im_start|>assistant\n<think>\n')).toBe(true);
    expect(opensThinking('<think></think>\n')).toBe(false);
    expect(opensThinking('<|im_start|>assistant\n')).toBe(false);
  });
});
