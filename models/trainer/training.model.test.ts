/**
 * SFT end to end (docs/laptop-rl.md): the loss falls, the written GGUF loads in node-llama-cpp, and its
 * greedy output on the trained prompt equals the tfjs model's. Plus the policy step: the sign of
 * the advantage moves the completion's log-probability, the KL to the frozen reference is 0
 * before any step and > 0 after, and the ratio clip stops the gradient.
 */
import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { noteSkip, scratchDir, tinyModel as STORIES, tinyRandomModel as TINY } from '../../test/fixtures.ts';
import { TfjsTrainer } from './TfjsTrainer.ts';
import { LlamaCppReference } from './testing/llamaCpp.ts';

const haveStories = existsSync(STORIES);
if (!haveStories) noteSkip('training', 'the trainer tests', STORIES);

const tmp = scratchDir('training');

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe.skipIf(!haveStories)('training stories260K', () => {
  it('SFT: loss falls over 20 steps; the written GGUF loads in llama.cpp and greedy-decodes like the tfjs model', async () => {
    const base = await LlamaCppReference.open(STORIES);
    const prompt = base.tokenize('Once upon a time');
    const completion = base.model.tokenize(' there was a big dragon named Bob. Bob liked to eat apples.') as number[];
    const trainedOn = base.tokenize('The cat');
    const before = await base.greedy(prompt, 24);
    await base.dispose();

    const model = await new TfjsTrainer().load(STORIES);
    const out = path.join(tmp(), 'stories-sft.gguf');
    try {
      const seq = { tokens: [...prompt, ...completion], lossMask: [...prompt.map(() => 0), ...completion.map(() => 1)] };
      const losses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await model.sftStep([seq], { lr: 5e-4, maxGradNorm: 1 });
        expect(r.tokens).toBe(completion.length);
        losses.push(r.loss);
      }
      console.log(`SFT loss (lr 5e-4, 20 steps): ${losses.map((l) => l.toFixed(3)).join(' ')}`);
      expect(losses[19]!).toBeLessThan(losses[0]! * 0.5);
      expect(losses[10]!).toBeLessThan(losses[0]!);

      const tfjsGreedy = await model.greedy(prompt, 24);
      expect(tfjsGreedy).not.toEqual(before); // the weights did change
      expect(tfjsGreedy.slice(0, 8)).toEqual(completion.slice(0, 8)); // and learned the completion

      await model.writeGguf(out);
      expect(model.lastWrite?.tensors).toBe(48);
      expect((await readdir(tmp())).filter((f) => f.endsWith('.tmp'))).toEqual([]);

      const t0 = performance.now();
      const reloaded = await LlamaCppReference.open(out);
      const reloadMs = performance.now() - t0;
      try {
        const llamaGreedy = await reloaded.greedy(prompt, 24);
        console.log(
          `SFT reload: write ${model.lastWrite!.writeMs.toFixed(1)} ms, llama.cpp load ${reloadMs.toFixed(0)} ms; greedy equal: ${JSON.stringify(llamaGreedy) === JSON.stringify(tfjsGreedy)}; text ${JSON.stringify(reloaded.detokenize(llamaGreedy))}`,
        );
        expect(llamaGreedy).toEqual(tfjsGreedy);
        // Another prompt too: the whole model was written, not just what the prompt touches.
        expect(await reloaded.greedy(trainedOn, 16)).toEqual(await model.greedy(trainedOn, 16));
      } finally {
        await reloaded.dispose();
      }
    } finally {
      model.dispose();
    }
  });

  it('policy step: a positive advantage raises the completion log-probability, a negative one lowers it; KL 0 before, > 0 after', async () => {
    const ref = await LlamaCppReference.open(STORIES);
    const prompt = ref.tokenize('Once upon a time');
    const completion = ref.model.tokenize(' there was a cat.') as number[];
    await ref.dispose();

    const model = await new TfjsTrainer().load(STORIES);
    try {
      const sample = { promptTokens: prompt, completionTokens: completion };
      const lp0 = sum(await model.logprobs(prompt, completion));
      const r1 = await model.policyStep([{ ...sample, advantage: 1 }], { lr: 3e-4, kl: 0.1, maxGradNorm: 1 });
      expect(r1.kl).toBe(0); // the weights still equal the reference
      expect(r1.tokens).toBe(completion.length);
      const lp1 = sum(await model.logprobs(prompt, completion));
      expect(lp1).toBeGreaterThan(lp0);

      const r2 = await model.policyStep([{ ...sample, advantage: -1 }], { lr: 3e-4, kl: 0.1, maxGradNorm: 1 });
      expect(r2.kl).toBeGreaterThan(0);
      const lp2 = sum(await model.logprobs(prompt, completion));
      expect(lp2).toBeLessThan(lp1);
      // The reference is frozen at the loaded weights.
      expect(sum(await model.logprobs(prompt, completion, 1, true))).toBeCloseTo(lp0, 4);
      console.log(`policy step: completion log-prob ${lp0.toFixed(3)} -> ${lp1.toFixed(3)} (A=+1, KL ${r1.kl}) -> ${lp2.toFixed(3)} (A=-1, KL ${r2.kl!.toExponential(2)})`);
    } finally {
      model.dispose();
    }
  });

  it('policy step: reused samples are ratio-clipped; a batch is averaged per sample, then over samples', async () => {
    const model = await new TfjsTrainer().load(STORIES);
    try {
      const prompt = [1, 403, 407, 261, 378];
      const completion = [432, 383, 286];
      const lp = await model.logprobs(prompt, completion);
      // ratio = exp(lp - old) = e^2 > 1 + ε with A > 0: the clipped term is constant, no gradient.
      const clipped = await model.policyStep(
        [{ promptTokens: prompt, completionTokens: completion, advantage: 1, oldLogprobs: lp.map((x) => x - 2) }],
        { lr: 1e-3, kl: 0, clip: 0.2 },
      );
      expect(clipped.gradNorm).toBe(0);
      expect(clipped.loss).toBeCloseTo(-1.2, 5); // −(1 + ε)·A
      expect(await model.logprobs(prompt, completion)).toEqual(lp);
      // Inside the clip range (old = current): the loss is −A·ratio = −A and the gradient flows.
      const inside = await model.policyStep(
        [{ promptTokens: prompt, completionTokens: completion, advantage: 0.5, oldLogprobs: lp }],
        { lr: 1e-3, kl: 0 },
      );
      expect(inside.loss).toBeCloseTo(-0.5, 4);
      expect(inside.gradNorm).toBeGreaterThan(0);
      // Two samples of different lengths: per-sample token means, then the mean over samples.
      const a = await model.logprobs(prompt, [432]);
      const b = await model.logprobs(prompt, completion);
      const two = await model.policyStep(
        [
          { promptTokens: prompt, completionTokens: [432], advantage: 1 },
          { promptTokens: prompt, completionTokens: completion, advantage: 1 },
        ],
        { lr: 1e-6, kl: 0 },
      );
      expect(two.loss).toBeCloseTo(-(sum(a) / 1 + sum(b) / 3) / 2, 3);
      expect(two.tokens).toBe(4);
    } finally {
      model.dispose();
    }
  });

  it.skipIf(!existsSync(TINY))('llama-2-tiny-random: an SFT step on F16 weights writes back F16 that llama.cpp loads', async () => {
    const model = await new TfjsTrainer().load(TINY);
    const out = path.join(tmp(), 'tiny-sft.gguf');
    try {
      const seq = { tokens: [1, 9038, 2501, 263, 931, 727, 471], lossMask: [0, 0, 0, 0, 1, 1, 1] };
      const r0 = await model.sftStep([seq], { lr: 1e-2 });
      const r1 = await model.sftStep([seq], { lr: 1e-2 });
      expect(r1.loss).toBeLessThan(r0.loss);
      await model.writeGguf(out);
      const ref = await LlamaCppReference.open(out);
      try {
        expect(await ref.greedy([1, 9038, 2501], 8)).toEqual(await model.greedy([1, 9038, 2501], 8));
      } finally {
        await ref.dispose();
      }
    } finally {
      model.dispose();
    }
  });
});
