/** The prompt of one request as the model sees it: through the file's chat template, or plain completion text. */
import type { ChatHistoryItem, LlamaText, Token } from 'node-llama-cpp';
import { ModelError, opensThinking, type GenerateRequest } from '../../core/model/index.ts';
import { errorText } from './errorText.ts';
import type { TemplateMessage } from './chatTemplate.ts';
import type { LoadedModel } from './loaders.ts';

/** Tokens to feed (without the BOS that LlamaCompletion prepends), their text, extra stops. */
export interface RenderedInput {
  tokens: Token[];
  rendered: string;
  extraStops: LlamaText[];
  /** The prompt leaves a `<think>` block open (the template prefills it): the completion starts inside it. */
  opensThinking: boolean;
}

/**
 * Renders `request` for `loaded`: with a chat template, the request's `turns` (a whole
 * conversation, as given), else a system message (`request.system`, when set) and one user
 * message (`request.prompt`), through the file's own template with the
 * generation prompt added (`chatTemplate.ts`: a prefill such as `<think>\n` is kept; a template
 * that refuses a system message gets the instructions ahead of the user's text), tokenized
 * by the model and without the template's own leading BOS (LlamaCompletion adds one); the chat
 * wrapper's end-of-turn triggers become `extraStops`. Without one, `system + "\n\n" + prompt`
 * (or just `prompt`), tokenized exactly as LlamaCompletion tokenizes a string input.
 * `rendered` is the detokenized text of what is fed (special tokens written out).
 *
 * @throws ModelError `GENERATION_FAILED` when the template fails on these messages.
 */
export function renderInput(loaded: LoadedModel, request: GenerateRequest): RenderedInput {
  const { model, template } = loaded;
  if (template) {
    const tokenText = { bos: model.tokens.bosString ?? '', eos: model.tokens.eosString ?? '' };
    const messages = templateMessages(request);
    let text: LlamaText;
    let generationPrompt: string;
    try {
      try {
        ({ text, generationPrompt } = template.render(messages, tokenText));
      } catch (err) {
        // Some templates refuse a system message (they raise): the instructions then lead the first user message.
        if (!messages.some((m) => m.role === 'system')) throw err;
        ({ text, generationPrompt } = template.render(systemIntoFirstUser(messages), tokenText));
      }
    } catch (err) {
      throw new ModelError('GENERATION_FAILED', `The chat template of ${loaded.summary.fileName} failed on this prompt (ref "${request.model}"): ${errorText(err)}`, request.model, { cause: err });
    }
    let tokens = text.tokenize(model.tokenizer);
    // The template may start with BOS; LlamaCompletion adds its own, so drop the template's.
    if (loaded.prependsBos && tokens.length > 0 && tokens[0] === model.tokens.bos) tokens = tokens.slice(1);
    return { tokens, rendered: model.detokenize(tokens, true), extraStops: endOfTurnStops(loaded, request), opensThinking: opensThinking(generationPrompt) };
  }
  const text = request.system ? `${request.system}\n\n${request.prompt}` : request.prompt;
  // Exactly what LlamaCompletion does with a string input (see tokenizeInput + BOS handling).
  const tokens = model.tokenize(text, false, loaded.prependsBos ? 'trimLeadingSpace' : undefined);
  return { tokens, rendered: text, extraStops: [], opensThinking: false };
}

/** The messages a template renders: the request's `turns` as given, else its system message (when set) and one user message. */
function templateMessages(request: GenerateRequest): TemplateMessage[] {
  if (request.turns) return request.turns.map((t) => ({ role: t.role, content: t.content }));
  const user: TemplateMessage = { role: 'user', content: request.prompt };
  return request.system ? [{ role: 'system', content: request.system }, user] : [user];
}

/** `messages` without system messages: their text (joined by blank lines) leads the first user message's. */
function systemIntoFirstUser(messages: readonly TemplateMessage[]): TemplateMessage[] {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
  const rest = messages.filter((m) => m.role !== 'system');
  const first = rest.findIndex((m) => m.role === 'user');
  return rest.map((m, i) => (i === first ? { role: 'user', content: `${system}\n\n${m.content}` } : m));
}

/** The chat wrapper's stop triggers for an open model turn (its end-of-turn markers), none without a wrapper. */
function endOfTurnStops(loaded: LoadedModel, request: GenerateRequest): LlamaText[] {
  if (!loaded.chatWrapper) return [];
  const history: ChatHistoryItem[] = [];
  if (request.system) history.push({ type: 'system', text: request.system });
  history.push({ type: 'user', text: request.prompt }, { type: 'model', response: [] });
  return loaded.chatWrapper.generateContextState({ chatHistory: history }).stopGenerationTriggers;
}
