/**
 * Non-finite models (a valid GGUF header, NaN or infinite weights) fail as `MODEL_INVALID` naming
 * the file, at load or first generation, with a grammar or without one; they never crash the
 * process or hang a call. Each row of `NON_FINITE_MODELS` is one malformed model file and the
 * error it must give.
 */
import path from 'node:path';
import { getLlama } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchDir } from '../../test/fixtures.ts';
import { probeFiniteLogits, scanFiniteWeights } from './finiteCheck.ts';
import { writeNonFiniteGguf } from './ggufFixture.ts';
import { LlamaProvider } from './index.ts';
import { expectModelError, haveModels, req, STORIES } from './testing.ts';

const dir = scratchDir('finite');

/** (file name, value written, tensors rewritten, what the message must hold). */
export const NON_FINITE_MODELS: ReadonlyArray<{ file: string; value: number; which?: (name: string) => boolean; message: RegExp }> = [
  { file: 'nan-all.gguf', value: Number.NaN, message: /non-finite weight \(NaN\) in tensor "token_embd\.weight" at element 0/ },
  { file: 'inf-output.gguf', value: Number.POSITIVE_INFINITY, which: (n) => n === 'output.weight', message: /non-finite weight \(Infinity\) in tensor "output\.weight"/ },
  { file: 'nan-one-norm.gguf', value: Number.NaN, which: (n) => n === 'blk.4.ffn_norm.weight', message: /tensor "blk\.4\.ffn_norm\.weight"/ },
];

const providers: LlamaProvider[] = [];
afterAll(async () => {
  for (const p of providers) await p.dispose();
});

describe.skipIf(!haveModels)('non-finite GGUF files', () => {
  for (const row of NON_FINITE_MODELS) {
    for (const grammar of [false, true]) {
      it(`${row.file}: generate ${grammar ? 'with' : 'without'} a JSON grammar is MODEL_INVALID naming the file`, async () => {
        const file = path.join(dir(), row.file);
        await writeNonFiniteGguf(STORIES, file, row.value, row.which);
        const provider = new LlamaProvider({ models: { default: { path: file } }, defaults: { threads: 1, contextSize: 256 } });
        providers.push(provider);
        const request = req(grammar ? { jsonSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] } } : {});
        await expectModelError(provider.generate(request), 'MODEL_INVALID', file, row.message);
        // The provider still answers: the same call fails the same way again, quickly.
        await expectModelError(provider.generate(request), 'MODEL_INVALID', file);
      });
    }
  }

  it('scanFiniteWeights passes the real model and names the tensor of a bad one', async () => {
    await expect(scanFiniteWeights(STORIES, 1_185_376)).resolves.toBeUndefined();
    const file = path.join(dir(), 'nan-ffn.gguf');
    await writeNonFiniteGguf(STORIES, file, Number.NaN, (n) => n === 'blk.2.ffn_up.weight');
    await expectModelError(scanFiniteWeights(file, 1_185_376), 'MODEL_INVALID', file, 'tensor "blk.2.ffn_up.weight" at element 0');
    // Above the scan limit the values are not read (the logits probe covers such files).
    await expect(scanFiniteWeights(file, 2 ** 40)).resolves.toBeUndefined();
  });

  it('probeFiniteLogits: finite for the real model, MODEL_INVALID when weights past the embedding are NaN', async () => {
    const llama = await getLlama({ gpu: false, build: 'never' });
    const file = path.join(dir(), 'nan-attn.gguf');
    await writeNonFiniteGguf(STORIES, file, Number.NaN, (n) => n === 'blk.0.attn_q.weight');
    for (const [f, bad] of [[STORIES, false], [file, true]] as const) {
      const model = await llama.loadModel({ modelPath: f, gpuLayers: 0 });
      const context = await model.createContext({ contextSize: 64, threads: 1 });
      try {
        const probe = probeFiniteLogits(model, context, f);
        if (bad) await expectModelError(probe, 'MODEL_INVALID', `Model file ${f} computes non-finite logits`);
        else await expect(probe).resolves.toBeUndefined();
        // The probe gives its sequence back: the context still has all of its sequences.
        expect(context.sequencesLeft).toBe(context.totalSequences);
      } finally {
        await context.dispose();
        await model.dispose();
      }
    }
  });
});
