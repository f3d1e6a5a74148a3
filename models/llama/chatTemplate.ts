/**
 * A GGUF file's own chat template (`tokenizer.chat_template`, Jinja), rendered by Flowlab itself
 * rather than through node-llama-cpp's chat wrappers. Two reasons, both measured with
 * node-llama-cpp 3.21.1: its Jinja wrapper renders the open model turn as an empty assistant
 * message, so a generation prompt that ends with a prefill (`<|im_start|>assistant\n<think>\n`)
 * loses the prefill; and `resolveChatWrapper` swaps a recognised template for a built-in wrapper
 * of the same family, so the text fed is that wrapper's, not the file's.
 *
 * The rendering follows Hugging Face's chat-template convention (transformers
 * `apply_chat_template`: `messages`, `add_generation_prompt`, `bos_token`, `eos_token`). The
 * template's own text is tokenized with special tokens recognised (`<|im_start|>` becomes the
 * vocabulary's special token where it has one) and the messages' text never is (a prompt that
 * contains `<|im_end|>` cannot close a turn).
 */
import { Template } from '@huggingface/jinja';
import { LlamaText, SpecialTokensText } from 'node-llama-cpp';

/** One chat message as the template sees it. */
export interface TemplateMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A template rendered for one call. */
export interface RenderedTemplate {
  /** The template's own text as special-token text, the messages' text (as the template wrote it) as plain text. */
  text: LlamaText;
  /** The same rendering as one string: exactly what the template renders for these messages. */
  plain: string;
  /** What `add_generation_prompt` added after the last message, e.g. `<|im_start|>assistant\n<think>\n`. */
  generationPrompt: string;
}

/** A parsed chat template, rendered once per call. */
export class ChatTemplate {
  private readonly template: Template;

  /** @throws Error (the Jinja parser's) when `source` does not parse. */
  constructor(readonly source: string) {
    this.template = new Template(source);
  }

  /**
   * Renders `messages` with `add_generation_prompt: true`; `tokenText` gives `bos_token` and
   * `eos_token` (the model's token text, e.g. `<s>`). The template runs twice: on the real
   * messages (the exact text, filters such as `| trim` applied) and on placeholders, which show
   * which parts are the template's own; the message parts of the real text are found between
   * those (a template that rewrites its own text around a message so that they cannot be found
   * is tokenized as one special-token text).
   *
   * @throws Error (the Jinja runtime's, e.g. a template's `raise_exception`) when the template fails on these messages.
   */
  render(messages: readonly TemplateMessage[], tokenText: { bos: string; eos: string }): RenderedTemplate {
    const run = (items: readonly TemplateMessage[], addGenerationPrompt: boolean) =>
      this.template.render({ messages: items.map((m) => ({ ...m })), add_generation_prompt: addGenerationPrompt, bos_token: tokenText.bos, eos_token: tokenText.eos });
    const plain = run(messages, true);
    let withoutPrompt: string | undefined;
    try {
      withoutPrompt = run(messages, false);
    } catch {
      withoutPrompt = undefined; // a template that insists on the generation prompt
    }
    const marker = uniqueMarker(this.source, messages);
    const ids = messages.map((_, i) => `${marker}${i}${marker}`);
    const skeleton = run(messages.map((m, i) => ({ role: m.role, content: ids[i]! })), true);
    const parts = skeleton.split(new RegExp(`(${escapeRegExp(marker)}\\d+${escapeRegExp(marker)})`));
    const text = align(plain, parts, new Map(ids.map((id, i) => [id, messages[i]!.content]))) ?? LlamaText(new SpecialTokensText(plain));
    const generationPrompt =
      withoutPrompt !== undefined && plain.startsWith(withoutPrompt)
        ? plain.slice(withoutPrompt.length)
        : (parts.at(-1) ?? ''); // the template's text after the last message
    return { text, plain, generationPrompt };
  }
}

/**
 * `plain` as special-token text (the skeleton's literal parts) and plain text (what lies where
 * the skeleton has a message placeholder: the message as given when it is there unchanged, else
 * up to the next literal part), or undefined when a literal part is not found in order.
 */
function align(plain: string, parts: readonly string[], contents: ReadonlyMap<string, string>): LlamaText | undefined {
  const values: (string | SpecialTokensText)[] = [];
  let at = 0;
  let open: string | undefined; // the content of a message placeholder that waits for the next literal to end it
  for (const part of parts) {
    const content = contents.get(part);
    if (content !== undefined) {
      open = content;
      continue;
    }
    if (part === '') continue;
    let found = -1;
    if (open === undefined) found = plain.startsWith(part, at) ? at : -1;
    else if (plain.startsWith(open, at) && plain.startsWith(part, at + open.length)) found = at + open.length;
    else found = plain.indexOf(part, at);
    if (found < 0) return undefined;
    if (open !== undefined && found > at) values.push(plain.slice(at, found));
    values.push(new SpecialTokensText(part));
    at = found + part.length;
    open = undefined;
  }
  if (open !== undefined) {
    if (at < plain.length) values.push(plain.slice(at));
  } else if (at !== plain.length) return undefined;
  return LlamaText(values);
}

/** A marker found in neither the template nor any message, so placeholders cannot collide with real text. */
function uniqueMarker(source: string, messages: readonly TemplateMessage[]): string {
  for (let n = 0; ; n++) {
    const marker = `\u2063flowlab${n}\u2063`;
    if (!source.includes(marker) && !messages.some((m) => m.content.includes(marker))) return marker;
  }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
