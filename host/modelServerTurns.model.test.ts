/**
 * Multi-turn chats in `flowlab serve-model`: a 3-turn conversation (system, user, assistant,
 * user) sent to a GGUF carrying a ChatML template (written from the shared tiny model with
 * Flowlab's GGUF writer) is rendered turn by turn through the file's template, the generation
 * prompt after the last user turn; the same conversation to a file without a template is plain
 * completion of the turns joined by blank lines; a `tool` role, an image part and a conversation
 * ending with an assistant message are refused with 400 naming the field.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../core/model/index.ts';
import { ChatTemplate } from '../models/llama/chatTemplate.ts';
import { writeGgufWithMetadata } from '../models/llama/ggufFixture.ts';
import { LlamaProvider } from '../models/llama/index.ts';
import { CHATML } from '../models/llama/templates.fixture.ts';
import { haveShared, noteSkip, scratchDir, tinyModel } from '../test/fixtures.ts';
import { startModelServer, type ModelServer } from './modelServer.ts';

if (!haveShared) noteSkip('serve-model turns', 'multi-turn rendering', tinyModel);
const dir = scratchDir('serve-turns');

describe.skipIf(!haveShared)('serve-model renders whole conversations (stories260K + ChatML)', () => {
  let server: ModelServer;
  let llama: LlamaProvider;
  const seen: Array<{ request: GenerateRequest; result: GenerateResult }> = [];
  beforeAll(async () => {
    const chatml = path.join(dir(), 'stories-chatml.gguf');
    await writeGgufWithMetadata(tinyModel, chatml, { 'tokenizer.chat_template': CHATML });
    llama = new LlamaProvider({ models: { chatml: { path: chatml, threads: 1 }, plain: { path: tinyModel, threads: 1 } } });
    // The real provider, with each call's request and result kept: the rendered prompt is what was fed.
    const provider: ModelProvider = {
      name: 'recording',
      modelsLoaded: () => llama.modelsLoaded(),
      dispose: () => Promise.resolve(),
      async generate(request) {
        const result = await llama.generate(request);
        seen.push({ request, result });
        return result;
      },
    };
    server = await startModelServer({ models: { chatml, plain: tinyModel }, provider });
  });
  afterAll(async () => {
    await server?.close();
    await llama?.dispose();
  });

  const post = (body: Record<string, unknown>) => fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const conversation = [
    { role: 'system', content: 'You tell tales.' },
    { role: 'user', content: 'Who is Lily?' },
    { role: 'assistant', content: [{ type: 'text', text: 'A little girl.' }] },
    { role: 'user', content: 'Tell me more.' },
  ];

  it('the ChatML file renders the three turns in order, the generation prompt after the last user turn', async () => {
    const res = await post({ model: 'chatml', messages: conversation, temperature: 0, max_tokens: 8 });
    expect(res.status).toBe(200);
    const { request, result } = seen.at(-1)!;
    // The conversation the provider got, through the file's template: exactly ChatML's text.
    expect(new ChatTemplate(CHATML).render(request.turns!, { bos: '', eos: '' }).plain).toBe(
      '<|im_start|>system\nYou tell tales.<|im_end|>\n<|im_start|>user\nWho is Lily?<|im_end|>\n<|im_start|>assistant\nA little girl.<|im_end|>\n<|im_start|>user\nTell me more.<|im_end|>\n<|im_start|>assistant\n',
    );
    // What was fed, detokenized: stories260K's vocabulary has no ChatML tokens, so each marker is
    // tokenized as text of its own, starting with SentencePiece's word-start space.
    expect(result.renderedPrompt).toBe(
      '<|im_start|>system\nYou tell tales. <|im_end|>\n<|im_start|>user\nWho is Lily? <|im_end|>\n<|im_start|>assistant\nA little girl. <|im_end|>\n<|im_start|>user\nTell me more. <|im_end|>\n<|im_start|>assistant\n',
    );
    expect(((await res.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens).toBe(result.tokens.prompt);
  });

  it('a file without a template: plain completion, the system text then the turns, joined by blank lines', async () => {
    const res = await post({ model: 'plain', messages: conversation, temperature: 0, max_tokens: 8 });
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.result.renderedPrompt).toBe('You tell tales.\n\nWho is Lily?\n\nA little girl.\n\nTell me more.');
  });

  it('a one-turn chat renders as Flowlab renders its own calls (system + user)', async () => {
    const direct = await llama.generate({ role: 'user' as never, model: 'chatml', system: 'You tell tales.', prompt: 'Who is Lily?', params: { temperature: 0, maxTokens: 8 }, seed: 1, key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 } });
    const res = await post({ model: 'chatml', messages: conversation.slice(0, 2), temperature: 0, max_tokens: 8, seed: 1 });
    const served = (await res.json()) as { choices: Array<{ message: { content: string } }> };
    expect(seen.at(-1)!.result.renderedPrompt).toBe(direct.renderedPrompt);
    expect(served.choices[0]!.message.content).toBe(direct.text);
  });

  it('refuses a tool role, an image part and a conversation ending with the assistant, naming the field', async () => {
    const refuse = async (messages: unknown[]) => {
      const res = await post({ model: 'chatml', messages });
      return [res.status, ((await res.json()) as { error: { param: string } }).error.param];
    };
    expect(await refuse([...conversation, { role: 'tool', content: '42', tool_call_id: 'c1' }])).toEqual([400, 'messages[4].role']);
    expect(await refuse([{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image_url', image_url: { url: 'data:,' } }] }])).toEqual([400, 'messages[0].content']);
    expect(await refuse(conversation.slice(0, 3))).toEqual([400, 'messages[2].role']);
  });
});
