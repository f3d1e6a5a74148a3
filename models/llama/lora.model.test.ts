import { existsSync, realpathSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRoleName } from '../../core/ids.ts';
import type { GenerateRequest } from '../../core/model/index.ts';
import { makeLoraAdapter, readLoraBase, writeGguf } from '../gguf/index.ts';
import { LlamaProvider } from './index.ts';
import { expectModelError, GREEDY_40, haveModels, RANDOM as RANDOM_GIVEN, STORIES as STORIES_GIVEN } from './testing.ts';

// Messages name models by their real path (symlinks resolved), so the expectations do too.
const real = (p: string) => (existsSync(p) ? realpathSync(p) : p);
const STORIES = real(STORIES_GIVEN);
const RANDOM = real(RANDOM_GIVEN);

function req(model: string, over: { seed?: number; temperature?: number; maxTokens?: number } = {}): GenerateRequest {
  return {
    role: asRoleName('writer'),
    model,
    prompt: 'Once upon a time',
    seed: over.seed ?? 1,
    key: { taskKey: 't', nodeId: 'n', attempt: 1, callIndex: 0 },
    params: { temperature: over.temperature ?? 0, maxTokens: over.maxTokens ?? 40 },
  };
}

describe.skipIf(!haveModels)('per-ref LoRA adapters (stories260K)', () => {
  let tmp: string;
  let zero: string;
  let random: string;
  let forTinyRandom: string;
  let forStoriesOnTiny: string;
  let otherArch: string;
  let deepLayers: string;
  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'flowlab-lora-'));
    const stories = await readLoraBase(STORIES);
    zero = path.join(tmp, 'zero.gguf');
    random = path.join(tmp, 'random.gguf');
    await writeGguf(zero, makeLoraAdapter(stories, { rank: 4, init: 'zero', seed: 1 }));
    await writeGguf(random, makeLoraAdapter(stories, { rank: 4, init: 'random', seed: 1, std: { a: 0.05, b: 0.5 } }));
    forTinyRandom = path.join(tmp, 'for-tiny-random.gguf');
    await writeGguf(forTinyRandom, makeLoraAdapter(await readLoraBase(RANDOM), { rank: 2, init: 'random' }));
    forStoriesOnTiny = random;
    const gpt2 = makeLoraAdapter(stories, { rank: 4 });
    gpt2.metadata['general.architecture'] = 'gpt2';
    otherArch = path.join(tmp, 'gpt2-adapter.gguf');
    await writeGguf(otherArch, gpt2);
    const deep = makeLoraAdapter(stories, { rank: 2 });
    deepLayers = path.join(tmp, 'deep-layers.gguf');
    await writeGguf(deepLayers, { ...deep, tensors: deep.tensors.filter((t) => !t.name.startsWith('blk.0.')) });
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('a zero-B adapter leaves the output identical to the base model (greedy and seeded sampling)', async () => {
    const p = new LlamaProvider({ models: { base: { path: STORIES }, tuned: { path: STORIES, lora: [{ path: zero }] } } });
    try {
      const base = await p.generate(req('base'));
      const tuned = await p.generate(req('tuned'));
      expect(base.text).toBe(GREEDY_40);
      expect(tuned.text).toBe(GREEDY_40);
      const sampled = { seed: 5, temperature: 0.8, maxTokens: 40 };
      expect((await p.generate(req('tuned', sampled))).text).toBe((await p.generate(req('base', sampled))).text);
      expect(p.modelsLoaded()).toBe(1);
      expect(p.contextsCreated()).toBe(2);
    } finally {
      await p.dispose();
    }
  });

  it('a random adapter changes the output; scale 0 switches it off', async () => {
    const p = new LlamaProvider({
      models: { on: { path: STORIES, lora: [{ path: random }] }, off: { path: STORIES, lora: [{ path: random, scale: 0 }] } },
    });
    try {
      const on = await p.generate(req('on'));
      expect(on.text).not.toBe(GREEDY_40);
      expect(on.text.length).toBeGreaterThan(0);
      expect(on.model).toBe('stories260K.gguf');
      expect((await p.generate(req('off'))).text).toBe(GREEDY_40);
      const [info] = await p.load('on');
      expect(info!.lora).toEqual([{ path: random, scale: 1 }]);
      expect(info!.refs).toEqual(['on']);
    } finally {
      await p.dispose();
    }
  });

  it('two roles with different adapters on one base file: one model, two contexts, each role its own output', async () => {
    const p = new LlamaProvider({
      models: {
        'role:solver': { path: STORIES, lora: [{ path: zero }] },
        'role:critic': { path: STORIES, lora: [{ path: random }] },
        // same file and same adapter as the critic: shares the critic's context
        'role:critic2': { path: STORIES, lora: [{ path: random }] },
      },
      defaults: { threads: 1, sequences: 2 },
    });
    try {
      const loaded = await p.load();
      expect(p.modelsLoaded()).toBe(1);
      expect(p.contextsCreated()).toBe(2);
      expect(loaded.map((l) => l.refs)).toEqual([['role:solver'], ['role:critic', 'role:critic2']]);
      const [solver, critic, critic2] = await Promise.all([
        p.generate(req('role:solver')),
        p.generate(req('role:critic')),
        p.generate(req('role:critic2')),
      ]);
      expect(solver!.text).toBe(GREEDY_40);
      expect(critic!.text).not.toBe(GREEDY_40);
      expect(critic2!.text).toBe(critic!.text);
      expect(p.modelsLoaded()).toBe(1);
      expect(p.contextsCreated()).toBe(2);
    } finally {
      await p.dispose();
    }
  });

  it('bad adapter files: clear errors naming the adapter file and the ref; the provider keeps working', async () => {
    const junk = path.join(tmp, 'junk.gguf');
    await writeFile(junk, Buffer.from('definitely not a gguf file'));
    const missing = path.join(tmp, 'missing.gguf');
    const p = new LlamaProvider({
      models: {
        ok: { path: STORIES },
        missing: { path: STORIES, lora: [{ path: missing }] },
        junk: { path: STORIES, lora: [{ path: junk }] },
        model: { path: STORIES, lora: [{ path: RANDOM }] },
        arch: { path: STORIES, lora: [{ path: otherArch }] },
        shape: { path: STORIES, lora: [{ path: forTinyRandom }] },
        nan: { path: STORIES, lora: [{ path: zero, scale: Number.NaN }] },
        tiny: { path: RANDOM, lora: [{ path: forStoriesOnTiny }] },
        // stories260K has 5 blocks, the tiny random Llama 1: blk.1 is not in that base
        deep: { path: RANDOM, lora: [{ path: deepLayers }] },
      },
      onLog: () => {},
    });
    try {
      const m = await expectModelError(p.generate(req('missing')), 'MODEL_NOT_FOUND', `LoRA adapter file not found: ${missing}`, '"missing"');
      expect(m.where).toBe(missing);
      await expectModelError(p.generate(req('junk')), 'MODEL_INVALID', junk, '"junk"', 'Not a GGUF file');
      await expectModelError(p.generate(req('model')), 'MODEL_INVALID', `Not a LoRA adapter: ${RANDOM}`, 'full model');
      await expectModelError(p.generate(req('arch')), 'MODEL_LOAD_FAILED', otherArch, 'architecture "gpt2"', 'is "llama"');
      // an adapter for another base of the same architecture: llama.cpp's own reason, wrapped
      await expectModelError(p.generate(req('shape')), 'MODEL_LOAD_FAILED', forTinyRandom, '"shape"', STORIES, /incorrect shape/);
      await expectModelError(p.generate(req('tiny')), 'MODEL_LOAD_FAILED', forStoriesOnTiny, RANDOM, /incorrect shape/);
      await expectModelError(p.generate(req('deep')), 'MODEL_LOAD_FAILED', deepLayers, RANDOM, /blk\.1\.attn_q\.weight' does not exist in base model/);
      await expectModelError(p.generate(req('nan')), 'MODEL_INVALID', 'scale must be a finite number');
      expect((await p.generate(req('ok'))).text).toBe(GREEDY_40);
    } finally {
      await p.dispose();
    }
  });
});
