/**
 * The streaming capabilities of the node-llama-cpp adapter (the playground's, docs/models.md):
 * `renderPrompt` gives exactly what `generate` feeds (a file's ChatML template applied, the token
 * count with BOS; a file without one, the plain prompt), without generating; `onTokens` counts the
 * completion tokens as they are sampled, adding up to the call's count; `onText`'s pieces add up to
 * the text. On a copy of the shared tiny model with a template written in (ggufFixture.ts).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/fixtures.ts';
import { writeGgufWithMetadata } from './ggufFixture.ts';
import { LlamaProvider } from './LlamaProvider.ts';
import { CHATML } from './templates.fixture.ts';
import { haveModels, req, STORIES } from './testing.ts';

const dir = tempDir('render-prompt');
const chatml = path.join(dir, 'stories-chatml.gguf');

describe.skipIf(!haveModels)('renderPrompt and onTokens (stories260K, 1 thread)', () => {
  let provider: LlamaProvider;
  beforeAll(async () => {
    await writeGgufWithMetadata(STORIES, chatml, { 'tokenizer.chat_template': CHATML });
    provider = new LlamaProvider({ models: { chatml: { path: chatml, threads: 1 }, plain: { path: STORIES, threads: 1 } } });
  });
  afterAll(() => provider?.dispose());

  it('renders through the template exactly what generate then feeds, with its token count', async () => {
    const request = req({ model: 'chatml', system: 'Be brief.', params: { maxTokens: 8 } });
    const rendered = await provider.renderPrompt(request);
    expect(rendered.form).toBe('template');
    expect(rendered.text).toMatch(/^<\|im_start\|>system\nBe brief\. ?<\|im_end\|>\n<\|im_start\|>user\nOnce upon a time ?<\|im_end\|>\n<\|im_start\|>assistant\n$/);
    const out = await provider.generate(request);
    expect([rendered.text, rendered.tokens]).toEqual([out.renderedPrompt, out.tokens.prompt]);
  });

  it('keeps plain completion for a file without a template', async () => {
    const rendered = await provider.renderPrompt(req({ model: 'plain', system: 'Be brief.' }));
    const out = await provider.generate(req({ model: 'plain', system: 'Be brief.', params: { maxTokens: 4 } }));
    expect(rendered).toEqual({ text: 'Be brief.\n\nOnce upon a time', tokens: out.tokens.prompt, form: 'plain' });
  });

  it('counts tokens as they are sampled and streams pieces that add up to the text', async () => {
    let counted = 0;
    let calls = 0;
    let text = '';
    const out = await provider.generate(req({ model: 'plain', seed: 3, params: { temperature: 0.8, maxTokens: 40 }, onTokens: (n) => { counted += n; calls++; }, onText: (p) => { text += p; } }));
    expect(counted).toBe(out.tokens.completion);
    expect(out.tokens.completion).toBe(40);
    expect(calls).toBeGreaterThan(10);
    expect(text).toBe(out.text);
  });
});
