import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyModel, tinyRandomModel } from '../../test/fixtures.ts';
import { TfjsTrainer } from './TfjsTrainer.ts';

/** `load(file, {reference})`: a resumed train loop keeps the KL reference of the file it started from. */
describe.skipIf(!existsSync(tinyModel) || !existsSync(tinyRandomModel))('TfjsTrainer.load with a reference (stories260K)', () => {
  it('takes the KL reference from the given file, and refuses one of other shapes', async () => {
    const trainer = new TfjsTrainer();
    const prompt = [1, 300, 400];
    const completion = [200, 100, 50];
    const stepped = path.join(mkdtempSync(path.join(tmpdir(), 'flowlab-ref-')), 'iter-001.gguf');
    const base = await trainer.load(tinyModel);
    let baseLp: number[];
    try {
      baseLp = await base.logprobs(prompt, completion);
      await base.policyStep([{ promptTokens: prompt, completionTokens: completion, advantage: 1 }], { lr: 1e-2, kl: 0 });
      await base.writeGguf(stepped);
    } finally {
      base.dispose();
    }
    const resumed = await trainer.load(stepped, { reference: tinyModel });
    try {
      const policy = await resumed.logprobs(prompt, completion);
      const reference = await resumed.logprobs(prompt, completion, 1, true);
      expect(reference).toEqual(baseLp); // the starting weights, not the stepped file's
      expect(policy.reduce((a, b) => a + b, 0)).toBeGreaterThan(baseLp.reduce((a, b) => a + b, 0)); // the stepped weights (advantage 1 raised the sample's log-probability)
    } finally {
      resumed.dispose();
    }
    await expect(trainer.load(tinyModel, { reference: tinyRandomModel })).rejects.toMatchObject({ code: 'GGUF_CORRUPT', message: expect.stringContaining("the KL reference's tensors differ") });
  }, 60_000);
});
