/**
 * Reasoning models' thinking kept apart from their answer. Models trained in the DeepSeek-R1
 * style (DeepSeek-AI 2025, "DeepSeek-R1", section 2.2.1, its training template) and Qwen3 write
 * their reasoning between `<think>` and `</think>` before the answer; some chat templates open
 * the block themselves (the generation prompt ends with `<think>\n`, a prefill), so the model's
 * text then starts inside it.
 */

/** The tags of a thinking block. */
export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/** A completion split into its thinking and its answer. */
export interface SplitThinking {
  /** The answer: the text after `</think>` (leading whitespace dropped), or the whole text when there is no block. */
  answer: string;
  /** The text inside the block (trimmed); absent when the completion has no thinking block. */
  thinking?: string;
}

/**
 * Whether a rendered prompt leaves a thinking block open (its last `<think>` has no `</think>`
 * after it): the model's text then starts inside the block.
 */
export function opensThinking(renderedPrompt: string): boolean {
  const open = renderedPrompt.lastIndexOf(THINK_OPEN);
  return open >= 0 && renderedPrompt.indexOf(THINK_CLOSE, open) < 0;
}

/**
 * Splits `text` into thinking and answer. `opened`: the prompt opened the block (a prefill), so
 * the text starts inside it; otherwise a block counts only at the start of the text (after
 * whitespace). A block that never closes (generation cut off) is all thinking and an empty answer.
 */
export function splitThinking(text: string, opened: boolean): SplitThinking {
  let inner = text;
  if (!opened) {
    const lead = text.length - text.trimStart().length;
    if (!text.startsWith(THINK_OPEN, lead)) return { answer: text };
    inner = text.slice(lead + THINK_OPEN.length);
  }
  const close = inner.indexOf(THINK_CLOSE);
  if (close < 0) return { answer: '', thinking: inner.trim() };
  return { answer: inner.slice(close + THINK_CLOSE.length).trimStart(), thinking: inner.slice(0, close).trim() };
}
