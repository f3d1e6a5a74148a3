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

/** Where a reply's thinking may be, besides its text (what a server sent beside `content`). */
export interface ReplyThinking {
  /** The prompt is known to open a block (a local model's prefill): the text starts inside it. */
  opened?: boolean;
  /**
   * Thinking the server sent apart from the answer: OpenAI-compatible servers' `reasoning_content`
   * (DeepSeek's API, vLLM and llama-server with a reasoning parser) or `reasoning` (Ollama, OpenRouter).
   */
  reasoning?: string;
}

/**
 * Splits any provider's reply into thinking and answer, the same way for every provider (the
 * engine applies it to every reply; core/engine/runNode.ts):
 * - a block that opens the text (`<think>…</think>`, after whitespace), or with `opened` the
 *   text up to the first `</think>` (splitThinking);
 * - without `opened`, a text holding `</think>` with no `<think>` before it: a prefill the client
 *   cannot see (a server's chat template opened the block), so what precedes it is thinking;
 * - `reasoning`, sent apart by the server, is thinking too (before any thinking found in the text).
 * A block cut off before `</think>` (the text starts with `<think>` and never closes it) is all
 * thinking and an empty answer. Text without any of these is all answer.
 */
export function splitReply(text: string, where: ReplyThinking = {}): SplitThinking {
  let split = splitThinking(text, where.opened === true);
  if (split.thinking === undefined && !where.opened) {
    const close = text.indexOf(THINK_CLOSE);
    if (close >= 0 && text.lastIndexOf(THINK_OPEN, close) < 0) split = { answer: text.slice(close + THINK_CLOSE.length).trimStart(), thinking: text.slice(0, close).trim() };
  }
  const reasoning = where.reasoning?.trim();
  if (!reasoning) return split;
  return { answer: split.answer, thinking: split.thinking ? `${reasoning}\n\n${split.thinking}` : reasoning };
}
