/**
 * The two node-llama-cpp loads behind a `LlamaProvider`: a model file (plus its chat wrapper)
 * and a context on it (plus LoRA adapters), each failure wrapped in a `ModelError` that names
 * the file and quotes llama.cpp's own log lines.
 */
import {
  LlamaVocabularyType,
  resolveChatWrapper,
  type ChatWrapper,
  type CustomBatchingPrioritizationStrategy,
  type Llama,
  type LlamaContext,
  type LlamaModel,
} from 'node-llama-cpp';
import { ModelError } from '../../core/model/index.ts';
import type { LoadedModelInfo, ResolvedSettings } from './config.ts';
import { errorText } from './errorText.ts';
import type { GgufInfo } from './ggufInfo.ts';
import type { LogRing } from './logRing.ts';
import type { ResolvedLora } from './loraAdapters.ts';
import { ChatTemplate } from './chatTemplate.ts';
import type { SequencePool } from './sequencePool.ts';
import { llamaGpuLayers } from './platform.ts';

/** A loaded model file, shared by every context on it. */
export interface LoadedFile {
  model: LlamaModel;
  gpu: 'auto' | false;
  /** Set only when the file carries `tokenizer.chat_template`. */
  chatWrapper?: ChatWrapper;
  /** The file's own chat template, parsed (set with `chatWrapper`). */
  template?: ChatTemplate;
  prependsBos: boolean;
}

/** One context: a model file plus its adapters. */
export interface LoadedModel {
  summary: LoadedModelInfo;
  model: LlamaModel;
  context: LlamaContext;
  pool: SequencePool;
  /** Set only when the file carries `tokenizer.chat_template`. */
  chatWrapper?: ChatWrapper;
  /** The file's own chat template, parsed: what prompts are rendered with (`renderInput.ts`). */
  template?: ChatTemplate;
  /** Whether LlamaCompletion prepends a beginning-of-sequence token to the input. */
  prependsBos: boolean;
}

/**
 * Loads `realFile` (`gpu: false`: no layers offloaded) and, when the header has
 * `tokenizer.chat_template`, resolves its chat wrapper.
 *
 * @throws ModelError `MODEL_LOAD_FAILED` naming `realFile` (llama.cpp's error lines appended),
 *   also when the chat template cannot be used (the model is then disposed again).
 */
export async function openModelFile(llama: Llama, realFile: string, info: GgufInfo, gpu: 'auto' | false, logs: LogRing): Promise<LoadedFile> {
  const logMark = logs.mark();
  let model: LlamaModel;
  try {
    model = await llama.loadModel({ modelPath: realFile, gpuLayers: llamaGpuLayers(gpu) });
  } catch (err) {
    throw new ModelError(
      'MODEL_LOAD_FAILED',
      `Failed to load model ${realFile}: ${errorText(err)}${await logs.errorsSince(logMark)}`,
      realFile,
      { cause: err },
    );
  }
  let chatWrapper: ChatWrapper | undefined;
  let template: ChatTemplate | undefined;
  if (info.hasChatTemplate) {
    try {
      const source = (model.fileInfo.metadata as { tokenizer?: { chat_template?: unknown } }).tokenizer?.chat_template;
      template = new ChatTemplate(String(source));
      // A trial render, so a template that cannot render a user turn fails here, naming the file.
      template.render([{ role: 'user', content: 'U' }], { bos: '', eos: '' });
      // Only with a template: without one, resolveChatWrapper guesses (Llama2Chat for llama
      // models), whose default system prompt overflows small contexts.
      chatWrapper =
        resolveChatWrapper(model, { fallbackToOtherWrappersOnJinjaError: false, warningLogs: false }) ?? undefined;
    } catch (err) {
      await model.dispose().catch(() => {});
      throw new ModelError(
        'MODEL_LOAD_FAILED',
        `The chat template of ${realFile} cannot be used: ${errorText(err)}`,
        realFile,
        { cause: err },
      );
    }
  }
  const file: LoadedFile = { model, gpu, prependsBos: prependsBos(model) };
  if (chatWrapper) file.chatWrapper = chatWrapper;
  if (template) file.template = template;
  return file;
}

/**
 * Creates a context of `settings` on `file` with `adapters` applied.
 *
 * @param refs the refs sharing the context, named in errors.
 * @throws ModelError `MODEL_LOAD_FAILED`: naming the adapter (and asking whether it is one for
 *   this base model) when llama.cpp's message concerns an adapter, otherwise naming `realFile`
 *   and the requested size; llama.cpp's error lines appended.
 */
export async function createLlamaContext(
  file: LoadedFile,
  realFile: string,
  refs: readonly string[],
  settings: ResolvedSettings,
  adapters: readonly ResolvedLora[],
  logs: LogRing,
): Promise<LlamaContext> {
  const refList = refs.map((r) => `"${r}"`).join(', ');
  const logMark = logs.mark();
  try {
    return await file.model.createContext({
      contextSize: settings.contextSize,
      threads: settings.threads,
      sequences: settings.sequences,
      ...(settings.batchSize !== undefined ? { batchSize: settings.batchSize } : {}),
      ...(settings.batching === 'isolated' ? { batching: { itemPrioritizationStrategy: oneSequencePerBatch } } : {}),
      ...(settings.exactAttention ? { flashAttention: false, experimentalKvCacheKeyType: 'F32', experimentalKvCacheValueType: 'F32' } as const : {}),
      ...(adapters.length > 0
        ? { lora: { adapters: adapters.map((a) => ({ filePath: a.path, scale: a.scale })) } }
        : {}),
    });
  } catch (err) {
    const text = errorText(err);
    const logLines = await logs.errorsSince(logMark);
    const adapter = adapters.find((a) => text.includes(a.path));
    if (adapter || (adapters.length > 0 && /lora/i.test(text))) {
      const which = adapter ? adapter.path : adapters.map((a) => a.path).join(', ');
      throw new ModelError(
        'MODEL_LOAD_FAILED',
        `LoRA adapter ${which} (ref ${refList}) cannot be applied to ${realFile}: ${text}${logLines}; is it an adapter for this base model?`,
        adapter?.path ?? realFile,
        { cause: err },
      );
    }
    throw new ModelError(
      'MODEL_LOAD_FAILED',
      `Failed to create a context (${settings.contextSize} tokens x ${settings.sequences} sequences) for ${realFile}: ${text}${logLines}`,
      realFile,
      { cause: err },
    );
  }
}

/**
 * Batch strategy for `batching: 'isolated'`: each decode takes tokens of the first queued
 * sequence only (node-llama-cpp queues in arrival order, so sequences take turns). llama.cpp's
 * numerics depend on the batch's shape, so this keeps every call's logits identical to a solo run.
 */
const oneSequencePerBatch: CustomBatchingPrioritizationStrategy = ({ items, size }) => {
  const first = items[0];
  return first ? [{ item: first, processAmount: Math.max(1, Math.min(size, first.tokens.length)) }] : [];
};

/** Mirrors node-llama-cpp's (internal) resolveBeginningTokenToPrepend used by LlamaCompletion. */
function prependsBos(model: LlamaModel): boolean {
  const type = model.vocabularyType;
  if (type === LlamaVocabularyType.rwkv || type === LlamaVocabularyType.ugm) return false;
  if (type === LlamaVocabularyType.wpm) return model.tokens.bos != null;
  return model.tokens.shouldPrependBosToken && model.tokens.bos != null;
}
