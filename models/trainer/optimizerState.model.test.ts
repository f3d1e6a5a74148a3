/**
 * Adam's state out and back in (a resumed train loop; core/training/optimizerFile.ts): a model
 * that took two SFT steps, written to GGUF with its optimiser state, and a fresh load of that file
 * with the state restored take the same third step — the same loss, and the same bytes when
 * written — while a fresh load without the state (the moments at zero) does not.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { noteSkip, scratchDir, tinyModel as STORIES } from '../../test/fixtures.ts';
import { TfjsTrainer } from './TfjsTrainer.ts';

const haveStories = existsSync(STORIES);
if (!haveStories) noteSkip('optimizerState', 'the optimiser state round trip', STORIES);
const tmp = scratchDir('optimizer-state');

describe.skipIf(!haveStories)('TfjsTrainableModel optimiser state', () => {
  it('restored moments continue the run exactly; zero moments do not', async () => {
    const seq = { tokens: [1, 403, 407, 261, 378, 395, 263, 260, 100, 327, 262], lossMask: [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1] };
    const opts = { lr: 1e-3, maxGradNorm: 1 };
    const dir = tmp();
    const trainer = new TfjsTrainer();
    const a = await trainer.load(STORIES);
    await a.sftStep([seq], opts);
    await a.sftStep([seq], opts);
    const mid = path.join(dir, 'mid.gguf');
    await a.writeGguf(mid);
    const state = a.optimizerState();
    expect(state.step).toBe(2);
    expect(state.tensors.some((t) => t.some((x) => x !== 0))).toBe(true);
    const third = await a.sftStep([seq], opts);
    await a.writeGguf(path.join(dir, 'a.gguf'));
    a.dispose();

    const b = await trainer.load(mid);
    b.restoreOptimizerState(state);
    const thirdB = await b.sftStep([seq], opts);
    await b.writeGguf(path.join(dir, 'b.gguf'));
    b.dispose();
    expect(thirdB.loss).toBe(third.loss);
    expect(readFileSync(path.join(dir, 'b.gguf')).equals(readFileSync(path.join(dir, 'a.gguf')))).toBe(true);

    const c = await trainer.load(mid);
    await c.sftStep([seq], opts);
    await c.writeGguf(path.join(dir, 'c.gguf'));
    c.dispose();
    expect(readFileSync(path.join(dir, 'c.gguf')).equals(readFileSync(path.join(dir, 'a.gguf')))).toBe(false);
  }, 300_000);
});
