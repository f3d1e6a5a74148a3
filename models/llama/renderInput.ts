/** The prompt of one request as the model sees it: through the file's chat template, or plain completion text. */
import type { ChatHistoryItem, LlamaText, Token } from 'node-llama-cpp';
import type { GenerateRequest } from '../../core/model/index.ts';
import type { LoadedModel } from './loaders.ts';

/** Tokens to feed (without the BOS that LlamaCompletion prepends), their text, extra stops. */
export interface RenderedInput {
  tokens: Token[];
  rendered: string;
  extraStops: LlamaText[];
}

/**
 * Renders `request` for `loaded`: with a chat template, a system turn (`request.system`, when
 * set), one user turn (`request.prompt`) and an open model turn, tokenized by the model and
 * without the template's own leading BOS (LlamaCompletion adds one); the template's
 * end-of-turn triggers become `extraStops`. Without one, `system + "\n\n" + prompt` (or just
 * `prompt`), tokenized exactly as LlamaCompletion tokenizes a string input.
 */
export function renderInput(loaded: LoadedModel, request: GenerateRequest): RenderedInput {
  const { model, chatWrapper } = loaded;
  if (chatWrapper) {
    const history: ChatHistoryItem[] = [];
    if (request.system) history.push({ type: 'system', text: request.system });
    history.push({ type: 'user', text: request.prompt }, { type: 'model', response: [] });
    const state = chatWrapper.generateContextState({ chatHistory: history });
    let tokens = state.contextText.tokenize(model.tokenizer);
    // The template may start with BOS; LlamaCompletion adds its own, so drop the template's.
    if (loaded.prependsBos && tokens.length > 0 && tokens[0] === model.tokens.bos) tokens = tokens.slice(1);
    return { tokens, rendered: model.detokenize(tokens, true), extraStops: state.stopGenerationTriggers };
  }
  const text = request.system ? `${request.system}\n\n${request.prompt}` : request.prompt;
  // Exactly what LlamaCompletion does with a string input (see tokenizeInput + BOS handling).
  const tokens = model.tokenize(text, false, loaded.prependsBos ? 'trimLeadingSpace' : undefined);
  return { tokens, rendered: text, extraStops: [] };
}
