/**
 * Chat templates done right, on GGUF files written from the shared tiny model with Flowlab's own
 * GGUF writer (ggufFixture.ts): the file's own template renders the prompt (ChatML, Llama 3),
 * a generation prompt's prefill (`<think>\n`) is kept, the thinking is kept apart from the
 * answer, and every stored call carries its rendered prompt and applied settings.
 */
import path from 'node:path';
import { JinjaTemplateChatWrapper } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../core/store/index.ts';
import { cli } from '../../test/cli.ts';
import { haveShared, tempDir } from '../../test/fixtures.ts';
import { writeGgufWithMetadata } from './ggufFixture.ts';
import { LlamaProvider } from './LlamaProvider.ts';
import { CHATML, LLAMA3, THINK } from './templates.fixture.ts';
import { haveModels, req, STORIES } from './testing.ts';

const dir = tempDir('templates');
const file = (name: string) => path.join(dir, `stories-${name}.gguf`);

describe.skipIf(!haveModels)('chat templates of the file itself (stories260K + a template)', () => {
  beforeAll(async () => {
    for (const [name, template] of Object.entries({ chatml: CHATML, llama3: LLAMA3, think: THINK })) {
      await writeGgufWithMetadata(STORIES, file(name), { 'tokenizer.chat_template': template });
    }
  });

  let provider: LlamaProvider;
  beforeAll(() => {
    provider = new LlamaProvider({ models: { chatml: { path: file('chatml') }, llama3: { path: file('llama3') }, think: { path: file('think') }, plain: { path: STORIES } } });
  });
  afterAll(() => provider.dispose());

  it("node-llama-cpp's own Jinja wrapper drops the prefill (the bug); Flowlab's rendering keeps it", async () => {
    const upstream = new JinjaTemplateChatWrapper({ template: THINK })
      .generateContextState({ chatHistory: [{ type: 'user', text: 'Q' }, { type: 'model', response: [] }] })
      .contextText.toString();
    expect(upstream.endsWith('<|im_start|>assistant\n')).toBe(true);
    expect(upstream).not.toContain('<think>');

    const out = await provider.generate(req({ model: 'think', system: 'Be brief.', params: { maxTokens: 24 } }));
    expect(out.renderedPrompt).toMatch(/^<\|im_start\|>system\nBe brief\. ?<\|im_end\|>\n<\|im_start\|>user\nOnce upon a time ?<\|im_end\|>\n<\|im_start\|>assistant\n<think>\n$/);
    // The tiny model never writes </think>: its whole text is thinking, and the answer is empty.
    expect(out.thinking && out.thinking.length).toBeGreaterThan(10);
    expect(out.text).toBe('');
    expect(out.tokens.completion).toBe(24);
  });

  it('ChatML and Llama 3 render as their templates say, BOS once; a file without a template keeps plain completion', async () => {
    const chatml = await provider.generate(req({ model: 'chatml', params: { maxTokens: 8 } }));
    expect(chatml.renderedPrompt).toMatch(/^<\|im_start\|>user\nOnce upon a time ?<\|im_end\|>\n<\|im_start\|>assistant\n$/);
    expect(chatml).not.toHaveProperty('thinking');
    const llama3 = await provider.generate(req({ model: 'llama3', system: '  Be brief. ', params: { maxTokens: 8 } }));
    // The template trims contents; its own {{ bos_token }} is the one BOS fed (not doubled), so the text starts at the header.
    expect(llama3.renderedPrompt).toMatch(/^<\|start_header_id\|>system<\|end_header_id\|>\n\nBe brief\. ?<\|eot_id\|><\|start_header_id\|>user<\|end_header_id\|>\n\nOnce upon a time ?<\|eot_id\|><\|start_header_id\|>assistant<\|end_header_id\|>\n\n$/);
    const plain = await provider.generate(req({ model: 'plain', system: 'A story.', params: { maxTokens: 8 } }));
    expect(plain.renderedPrompt).toBe('A story.\n\nOnce upon a time');
    expect(llama3.tokens.prompt).toBeGreaterThan(plain.tokens.prompt);
  });

  it('the applied sampler, threads, context and batch size come back with every call', async () => {
    const greedy = await provider.generate(req({ model: 'chatml', params: { maxTokens: 4 } }));
    expect(greedy.applied).toEqual({
      sampler: { temperature: 0, topK: 40, topP: 0.95, minP: 0, seed: 1 },
      threads: 1,
      contextSize: 1024,
      batchSize: 512,
      source: { threads: 'default', batchSize: 'default' },
      prefixReuse: true,
    });
    const sampled = await provider.generate(req({ model: 'chatml', seed: -1, params: { temperature: 0.7, topK: 5, minP: 0.1, maxTokens: 4 } }));
    expect(sampled.applied?.sampler).toEqual({ temperature: 0.7, topK: 5, topP: 0.95, minP: 0.1, seed: 2 ** 32 - 1 });
  });
});

describe.skipIf(!haveModels || !haveShared)('stored calls carry the rendered prompt and the settings (flowlab run, then replay)', () => {
  it('gsm8k-team on a ChatML file: every call has its rendered prompt and applied settings; the replay matches', async () => {
    const model = file('chatml-run');
    await writeGgufWithMetadata(STORIES, model, { 'tokenizer.chat_template': CHATML });
    const db = path.join(dir, 'run.db');
    const env = { ...process.env, FLOWLAB_DEV: '1' };
    const run = await cli(['run', 'examples/gsm8k-team.yaml', '--dataset', 'gsm8k', '--limit', '1', '--model', model, '--threads', '1', '--db', db, '--json'], env);
    expect(run.code, run.err).toBe(0);
    const { experimentId } = JSON.parse(run.out) as { experimentId: string };
    const store = openStore(db);
    try {
      const calls = store.getExperimentCalls(experimentId);
      expect(calls.length).toBeGreaterThan(0);
      for (const c of calls) {
        expect(c.renderedPrompt).toMatch(/<\|im_start\|>user\n[\s\S]*<\|im_start\|>assistant\n$/);
        expect(c.applied).toMatchObject({ threads: 1, contextSize: expect.any(Number), batchSize: expect.any(Number), source: { threads: 'flag' } });
        expect(c.applied?.sampler.seed).toBe(c.seed >>> 0);
        expect(c.promptTokensEvaluated).toBeLessThanOrEqual(c.promptTokens);
      }
    } finally {
      store.close();
    }
    const replay = await cli(['replay', experimentId, '--db', db, '--json'], env);
    expect(replay.code, replay.err).toBe(0);
    expect(JSON.parse(replay.out)).toMatchObject({ mismatched: 0, modelsLoaded: 0 });
  });
});
