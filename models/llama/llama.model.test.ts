/** The node-llama-cpp adapter with the shared tiny models (model-dependent: skipped without them). */
import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelError } from '../../core/model/index.ts';
import { writeGgufWithMetadata } from './ggufFixture.ts';
import { LlamaProvider, readGgufInfo } from './index.ts';
import { expectModelError, GREEDY_40, GREEDY_PREFIX, haveModels, RANDOM, req, STORIES } from './testing.ts';

if (!haveModels) {
  console.log(
    `[models/llama] skipping the model-dependent tests: ${STORIES} and ${RANDOM} not found (set FLOWLAB_SHARED to the shared folder)`,
  );
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-llama-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe.skipIf(!haveModels)('with the shared tiny models', () => {
  let provider: LlamaProvider;
  beforeAll(async () => {
    provider = new LlamaProvider({
      models: { default: { path: STORIES }, critic: { path: STORIES } },
      defaults: { threads: 1, contextSize: 1024, sequences: 4 },
    });
    await provider.load('default');
  });
  afterAll(async () => {
    await provider?.dispose();
  });

  it('readGgufInfo: stories260K header facts', async () => {
    const info = await readGgufInfo(STORIES);
    expect(info).toMatchObject({
      path: STORIES,
      fileName: 'stories260K.gguf',
      sizeBytes: 1185376,
      architecture: 'llama',
      contextLength: 2048,
      hasChatTemplate: false,
      parameters: 292800,
      fileType: 'F32',
      blockCount: 5,
      embeddingLength: 64,
      vocabSize: 512,
      tensorCount: 48,
    });
    expect(info.fileTypeId).toBeUndefined(); // no general.file_type: derived from the tensors
  });

  it('readGgufInfo: llama-2-tiny-random header facts', async () => {
    const info = await readGgufInfo(RANDOM);
    expect(info).toMatchObject({
      architecture: 'llama',
      name: 'LLaMA v2',
      fileType: 'F16',
      fileTypeId: 1,
      contextLength: 4096,
      parameters: 513048,
      vocabSize: 32000,
      blockCount: 1,
      embeddingLength: 8,
      tensorCount: 12,
      hasChatTemplate: false,
    });
  });

  it('truncated copies: MODEL_INVALID naming the file (header and tensor data)', async () => {
    const bytes = await readFile(STORIES);
    const head = path.join(tmp, 'truncated-header.gguf');
    await writeFile(head, bytes.subarray(0, 100));
    await expectModelError(readGgufInfo(head), 'MODEL_INVALID', head, 'truncated');
    const body = path.join(tmp, 'truncated-data.gguf');
    await writeFile(body, bytes.subarray(0, 600_000));
    await expectModelError(readGgufInfo(body), 'MODEL_INVALID', body, 'truncated', 'tensor');
    const p = new LlamaProvider({ models: { a: { path: head }, b: { path: body } } });
    await expectModelError(p.generate(req({ model: 'a' })), 'MODEL_INVALID', head);
    await expectModelError(p.generate(req({ model: 'b' })), 'MODEL_INVALID', body);
    expect(p.modelsLoaded()).toBe(0);
    await p.dispose();
  });

  it('greedy "Once upon a time" gives the known continuation, with real token counts', async () => {
    const out = await provider.generate(req());
    expect(out.text.startsWith(GREEDY_PREFIX)).toBe(true);
    expect(out.text).toBe(GREEDY_40);
    // BOS + 6 prompt tokens; 40 sampled tokens (maxTokens)
    expect(out.tokens).toEqual({ prompt: 7, completion: 40 });
    expect(out.stopReason).toBe('maxTokens');
    expect(out.model).toBe('stories260K.gguf');
    expect(out.renderedPrompt).toBe('Once upon a time');
    expect(out.seed).toBe(1);
    expect(out.ms).toBeGreaterThan(0);
  });

  it('system text is prepended with a blank line when the model has no chat template', async () => {
    const out = await provider.generate(req({ system: 'A story.', params: { maxTokens: 8 } }));
    expect(out.renderedPrompt).toBe('A story.\n\nOnce upon a time');
    expect(out.tokens.prompt).toBeGreaterThan(7);
    expect(out.tokens.completion).toBe(8);
  });

  it('stop strings end generation before their first occurrence', async () => {
    const out = await provider.generate(req({ params: { stop: ['Lily'] } }));
    expect(out.text).toBe(', there was a little girl named');
    expect(out.stopReason).toBe('stop');
    expect(out.tokens.completion).toBeGreaterThan(0);
  });

  it('JSON schema grammar: parseable JSON with the required fields and types', async () => {
    const numberSchema = { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] };
    const stringSchema = {
      type: 'object',
      properties: { name: { type: 'string' }, age: { type: 'integer' } },
      required: ['name', 'age'],
    };
    for (const seed of [1, 2, 3]) {
      const a = await provider.generate(req({ seed, jsonSchema: numberSchema, params: { temperature: 0.8, maxTokens: 120 } }));
      const pa = JSON.parse(a.text) as { answer: unknown };
      expect(typeof pa.answer).toBe('number');
      expect(a.stopReason).toBe('eos');
      expect(a.tokens.prompt).toBe(7);
      expect(a.tokens.completion).toBeGreaterThan(0);

      const b = await provider.generate(req({ seed, jsonSchema: stringSchema, params: { temperature: 0.8, maxTokens: 160 } }));
      const pb = JSON.parse(b.text) as { name: unknown; age: unknown };
      expect(typeof pb.name).toBe('string');
      expect(Number.isInteger(pb.age)).toBe(true);
      expect(b.tokens.completion).toBeGreaterThan(0);
    }
  });

  it('determinism: same seed, same text; a different seed, different text (temperature 0.8)', async () => {
    const p = { temperature: 0.8, maxTokens: 30 };
    const a1 = await provider.generate(req({ seed: 1, params: p }));
    const a2 = await provider.generate(req({ seed: 1, params: p }));
    expect(a2.text).toBe(a1.text);
    const b = await provider.generate(req({ seed: 2, params: p }));
    expect(b.text).not.toBe(a1.text);
    // a fresh provider (new runtime, model and context) gives the same text
    const fresh = new LlamaProvider({ models: { default: { path: STORIES } } });
    try {
      expect((await fresh.generate(req({ seed: 1, params: p }))).text).toBe(a1.text);
    } finally {
      await fresh.dispose();
    }
  });

  it('determinism across processes', async () => {
    const script = path.join(tmp, 'gen.mts');
    const providerUrl = new URL('./index.ts', import.meta.url).href;
    await writeFile(
      script,
      `import { LlamaProvider } from ${JSON.stringify(providerUrl)};
const p = new LlamaProvider({ models: { default: { path: ${JSON.stringify(STORIES)} } } });
const out = await p.generate(${JSON.stringify(req({ seed: 7, params: { temperature: 0.8, maxTokens: 30 } }))});
process.stdout.write(JSON.stringify(out.text));
await p.dispose();
`,
    );
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', script], {
      cwd: process.cwd(),
      timeout: 60_000,
    });
    const here = await provider.generate(req({ seed: 7, params: { temperature: 0.8, maxTokens: 30 } }));
    expect(JSON.parse(stdout)).toBe(here.text);
  });

  it('concurrency (default isolated batching): 4 parallel calls on one model equal the same calls run alone', async () => {
    const requests = [11, 12, 13, 14].map((seed) => req({ seed, params: { temperature: 0.8, maxTokens: 60 } }));
    const alone = [];
    for (const r of requests) alone.push(await provider.generate(r));
    const together = await Promise.all(requests.map((r) => provider.generate(r)));
    expect(together.map((t) => t.text)).toEqual(alone.map((a) => a.text));
    expect(together.map((t) => t.tokens)).toEqual(alone.map((a) => a.tokens));
    expect(new Set(alone.map((a) => a.text)).size).toBeGreaterThan(1);
  });

  it("batching 'mixed': parallel calls share batches and all complete", async () => {
    // No text comparison: mixed batches change llama.cpp's numerics (measured |dp| ~1e-4, and now
    // and then far more), so even greedy text can differ from a solo run. See LlamaModelConfig.batching.
    const p = new LlamaProvider({ models: { default: { path: STORIES, batching: 'mixed' } } });
    try {
      const [loaded] = await p.load();
      expect(loaded!.batching).toBe('mixed');
      const prompts = ['Once upon a time', 'The dog', 'Lily and Ben', 'One day'];
      const together = await Promise.all(
        prompts.map((prompt) => p.generate(req({ prompt, params: { temperature: 0, maxTokens: 50 } }))),
      );
      expect(together.map((t) => t.tokens.completion)).toEqual([50, 50, 50, 50]);
      expect(together.every((t) => t.text.length > 0)).toBe(true);
    } finally {
      await p.dispose();
    }
  });

  it('more calls than sequences wait for a free sequence and still match', async () => {
    const p = new LlamaProvider({ models: { default: { path: STORIES, sequences: 2 } } });
    try {
      const requests = [1, 2, 3, 4, 5, 6].map((seed) => req({ seed, params: { temperature: 0.8, maxTokens: 40 } }));
      const together = await Promise.all(requests.map((r) => p.generate(r)));
      for (const [i, r] of requests.entries()) expect((await p.generate(r)).text).toBe(together[i]!.text);
    } finally {
      await p.dispose();
    }
  });

  it('refs naming the same file share one model; a different file is a second one', async () => {
    await provider.generate(req({ model: 'critic', params: { maxTokens: 4 } }));
    expect(provider.modelsLoaded()).toBe(1);
    const [loaded] = await provider.load('critic');
    expect(loaded!.refs.sort()).toEqual(['critic', 'default']);

    const two = new LlamaProvider({ models: { a: { path: STORIES }, b: { path: STORIES }, r: { path: RANDOM } } });
    try {
      await two.generate(req({ model: 'a', params: { maxTokens: 4 } }));
      await two.generate(req({ model: 'b', params: { maxTokens: 4 } }));
      expect(two.modelsLoaded()).toBe(1);
      const out = await two.generate(req({ model: 'r', prompt: 'Hello', params: { maxTokens: 5 } }));
      expect(out.model).toBe('llama-2-tiny-random.gguf');
      expect(out.tokens).toEqual({ prompt: 2, completion: 5 });
      expect(two.modelsLoaded()).toBe(2);
    } finally {
      await two.dispose();
    }
  });

  it('abort during generation: ABORTED', async () => {
    const ac = new AbortController();
    const pending = provider.generate(req({ signal: ac.signal, params: { maxTokens: 900 } }));
    setTimeout(() => ac.abort(), 1);
    await expectModelError(pending, 'ABORTED');
    // the sequence went back to the pool: the provider still works
    expect((await provider.generate(req())).text).toBe(GREEDY_40);
  });

  it('one AbortSignal shared by 12 concurrent calls: one listener on it (no leak warning); aborting stops them all', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const ac = new AbortController();
      const calls = Array.from({ length: 12 }, (_, i) => provider.generate(req({ seed: i, signal: ac.signal, params: { maxTokens: 900 } })));
      // Wait until the calls are under way (a loaded machine may take longer than a few ms), then
      // a little more so that every call that would add its own listener has had the time to.
      const deadline = Date.now() + 10_000;
      while (getEventListeners(ac.signal, 'abort').length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 20));
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1); // 4 running, 8 waiting for a sequence
      ac.abort();
      const settled = await Promise.allSettled(calls);
      expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as ModelError).code : 'ok'))).toEqual(Array(12).fill('ABORTED'));
      const done = await Promise.all(Array.from({ length: 12 }, (_, i) => provider.generate(req({ seed: i, signal: new AbortController().signal, params: { maxTokens: 4 } }))));
      expect(done.every((d) => d.tokens.completion === 4)).toBe(true);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('dispose during a generation fails that call (GENERATION_FAILED) and releases everything', async () => {
    const p = new LlamaProvider({ models: { default: { path: STORIES } } });
    await p.load();
    const failure = expectModelError(p.generate(req({ params: { maxTokens: 900 } })), 'GENERATION_FAILED', 'disposed');
    await new Promise((r) => setTimeout(r, 2));
    await p.dispose();
    await failure;
  });

  it('a prompt that does not fit the context fails clearly; generation stops at a full context', async () => {
    const p = new LlamaProvider({ models: { default: { path: STORIES, contextSize: 256 } } });
    try {
      const long = 'Once upon a time there was a dog. '.repeat(40);
      await expectModelError(p.generate(req({ prompt: long })), 'GENERATION_FAILED', 'does not fit', '256');
      const out = await p.generate(req({ params: { maxTokens: 1000 } }));
      expect(out.stopReason).toBe('maxTokens');
      expect(out.tokens.prompt + out.tokens.completion).toBeLessThanOrEqual(256);
      expect(out.tokens.completion).toBeGreaterThan(200);
    } finally {
      await p.dispose();
    }
  });

  it('a model with a chat template goes through the template (system + one user turn)', async () => {
    const chatml =
      "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";
    const file = path.join(tmp, 'stories-chatml.gguf');
    await writeGgufWithMetadata(STORIES, file, { 'tokenizer.chat_template': chatml });
    expect((await readGgufInfo(file)).hasChatTemplate).toBe(true);
    const p = new LlamaProvider({ models: { default: { path: file } } });
    try {
      const [loaded] = await p.load();
      expect(loaded!.usesChatTemplate).toBe(true);
      const out = await p.generate(req({ system: 'Be brief.', params: { maxTokens: 20 } }));
      // stories260K has no special tokens for these markers: they are plain text here
      expect(out.renderedPrompt).toMatch(/^<\|im_start\|>system\nBe brief\. ?<\|im_end\|>\n<\|im_start\|>user\nOnce upon a time ?<\|im_end\|>\n<\|im_start\|>assistant\n$/);
      expect(out.text).not.toContain(GREEDY_PREFIX); // a different prompt than plain completion
      expect(out.tokens.prompt).toBeGreaterThan(20);
      expect(out.tokens.completion).toBe(20);
      const json = await p.generate(
        req({
          jsonSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] },
          params: { temperature: 0.8, maxTokens: 120 },
        }),
      );
      expect(typeof (JSON.parse(json.text) as { answer: unknown }).answer).toBe('number');
    } finally {
      await p.dispose();
    }
  });
});
