import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { TRAIN_LOOP_DEFAULTS } from '../core/api/trainLoop.ts';
import { capture } from '../test/fixtures.ts';
import { define } from './commands/trainLoop.ts';

describe("flowlab train-loop's defaults are the one set the lab and the window use", () => {
  it('every option default equals TRAIN_LOOP_DEFAULTS (core/api/trainLoop.ts)', () => {
    const cmd = new Command('train-loop');
    define(cmd, { io: capture() });
    const defaults = Object.fromEntries(cmd.options.map((o) => [o.attributeName(), o.defaultValue as unknown]));
    const d = TRAIN_LOOP_DEFAULTS;
    const asNumber = (k: string) => Number(defaults[k]);
    expect({
      split: defaults.split, heldoutSplit: defaults.heldoutSplit, group: defaults.group, iterations: defaults.iterations, limit: defaults.limit,
      heldout: defaults.heldout, heldoutSamples: defaults.heldoutSamples, seed: defaults.seed, warmStart: defaults.warmStart, sftSteps: defaults.sftSteps,
      sftPool: defaults.sftPool, contextSize: defaults.contextSize,
      lr: asNumber('lr'), kl: asNumber('kl'), temperature: asNumber('temperature'), entropy: asNumber('entropy'), sftLr: asNumber('sftLr'), maxGradNorm: asNumber('maxGradNorm'),
    }).toEqual({
      split: d.split, heldoutSplit: d.heldoutSplit, group: 8, iterations: 10, limit: 4, heldout: 32, heldoutSamples: 4, seed: 0, warmStart: 0, sftSteps: 2, sftPool: 0,
      contextSize: d.contextSize, lr: 3e-4, kl: 0.02, temperature: 1, entropy: 0, sftLr: 1e-3, maxGradNorm: d.maxGradNorm,
    });
    expect([d.group, d.iterations, d.limit, d.heldout, d.heldoutSamples, d.lr, d.kl, d.sftLr]).toEqual([8, 10, 4, 32, 4, 3e-4, 0.02, 1e-3]);
  });
});
