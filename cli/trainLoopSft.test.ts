/**
 * `flowlab train-loop`'s SFT flags (--warm-start, --sft-mix, --sft-steps, --sft-lr,
 * --sft-min-score, --sft-roles), --entropy and the report's per-class, constant-policy and wiring lines.
 */
import { describe, expect, it } from 'vitest';
import type { HeldoutResult, IterationMetrics, TrainLoopReport } from '../core/training/index.ts';
import { UsageError } from './args.ts';
import { entropyOf, formatTrainLoop, sftScheduleOf, trainLoopJson } from './commands/trainLoop.ts';

const flags = { warmStart: 0, sftSteps: 2, sftLr: '1e-3' };

describe('the SFT schedule of the flags', () => {
  it('none without a warm start or a mix; otherwise every field, per-role scores and roles', () => {
    expect(sftScheduleOf(flags)).toBeUndefined();
    expect(sftScheduleOf({ ...flags, warmStart: 3 })).toEqual({ warmStart: 3, mix: false, steps: 2, lr: 1e-3, minScore: 1 });
    expect(sftScheduleOf({ ...flags, sftMix: true, sftMinScore: '0.5', sftRoles: 'executor' })).toEqual({ warmStart: 0, mix: true, steps: 2, lr: 1e-3, minScore: 0.5, roles: ['executor'] });
    expect(sftScheduleOf({ ...flags, warmStart: 1, sftMinScore: 'designer=0.5,executor=1' })!.minScore).toEqual({ designer: 0.5, executor: 1 });
    // --sft-pool n: the replay pool; 0 (the default) is this iteration only, and leaves no key.
    expect(sftScheduleOf({ ...flags, sftMix: true, sftPool: 8 })).toEqual({ warmStart: 0, mix: true, steps: 2, lr: 1e-3, minScore: 1, pool: 8 });
    expect(sftScheduleOf({ ...flags, sftMix: true, sftPool: 0 })).not.toHaveProperty('pool');
  });

  it('refuses bad values, naming the flag', () => {
    const bad: Array<[Parameters<typeof sftScheduleOf>[0], RegExp]> = [
      [{ ...flags, sftMinScore: '0.5' }, /--sft-min-score needs --warm-start <k> or --sft-mix/],
      [{ ...flags, sftRoles: 'a' }, /--sft-roles needs --warm-start <k> or --sft-mix/],
      [{ ...flags, sftPool: 4 }, /--sft-pool needs --warm-start <k> or --sft-mix/],
      [{ ...flags, warmStart: 1, sftLr: '0' }, /--sft-lr: bad value "0"/],
      [{ ...flags, warmStart: 1, sftMinScore: '1.5' }, /--sft-min-score: bad value "1.5"/],
      [{ ...flags, warmStart: 1, sftMinScore: 'designer=' }, /--sft-min-score: bad value ""/],
      [{ ...flags, warmStart: 1, sftMinScore: 'designer=0.5=1' }, /"designer=0.5=1" is not role=score/],
    ];
    for (const [v, message] of bad) expect(() => sftScheduleOf(v), JSON.stringify(v)).toThrow(UsageError), expect(() => sftScheduleOf(v)).toThrow(message);
  });
});

describe('--entropy', () => {
  it('a weight in [0, 1]; 0 is none; other values are refused naming the flag', () => {
    expect(entropyOf('0.05')).toBe(0.05);
    expect(entropyOf('0')).toBeUndefined();
    for (const v of ['-0.1', '2', 'x']) expect(() => entropyOf(v)).toThrow(new RegExp(`--entropy: bad value "${v}"`));
  });
});

describe('the report', () => {
  const role = (reward: number, step: 'sft' | 'grpo', wiring: number, sftSequences?: number) => ({
    reward, rungs: { format: 1, validity: 1, completion: 1, correctness: 0.5, credit: 0 }, samples: 8, signalSamples: 4, zeroSpreadGroups: 0, trainTokens: 10, path: '/m.gguf',
    step, wiringRootFailures: wiring, ...(sftSequences !== undefined && { sftSequences }), ...(step === 'grpo' && { loss: -0.1, kl: 0.01 }),
  });
  const it1: IterationMetrics = { iteration: 1, experimentId: 'e1', score: 0.25, roles: { designer: role(0.1, 'sft', 0.5, 3), executor: role(0.2, 'sft', 0, 2) }, sampledTokens: 10, sampleTokensPerSecond: 100, seconds: { sampling: 1, training: 1, writeReload: 0.1, total: 2.1 } };
  const it2: IterationMetrics = { ...it1, iteration: 2, experimentId: 'e2', roles: { designer: role(0.4, 'grpo', 0.25), executor: role(0.5, 'grpo', 0) } };
  const held = (score: number, accuracy: number, right: number, wiring: number): HeldoutResult => ({
    experimentId: `h${score}`, score, samples: 6, roles: { designer: score, executor: score }, examples: {}, accuracy, classAccuracy: right,
    classes: { math: { runs: 2, accuracy, score, classRight: right }, weather: { runs: 4, accuracy, score, classRight: right } },
    constant: { answer: 'weather:now', accuracy: 1 / 3, class: 'weather', classAccuracy: 2 / 3 }, wiringRootFailures: { designer: wiring, executor: 0 },
  });
  const report: TrainLoopReport = {
    loopId: 'tl-1', roles: ['designer', 'executor'], iterations: [it1, it2], heldout: { before: held(0.1, 0, 0.5, 0.5), after: held(0.6, 0.5, 1, 0) },
    versions: { designer: ['v1', 'v2'], executor: ['v3', 'v4'] }, finalModels: { designer: '/d.gguf', executor: '/e.gguf' }, cancelled: false,
    hyper: { lr: 3e-4, kl: 0.02, temperature: 1, group: 8, tasksPerIteration: 4, maxGradNorm: 1, seed: 0, dataset: 'learn-design', loopId: 'tl-1' },
  };

  it('shows each role\'s step, wiring root failures per run (a curve for a role that wires), accuracy per class and the best constant policy', () => {
    const text = formatTrainLoop(report);
    expect(text).toMatch(/│ sft \(3\)\s+│ 0\.50\s+│/);
    expect(text).toMatch(/│ grpo\s+│ 0\.25\s+│/);
    expect(text).toContain('designer wiring root failures per run █▅  (0.50 0.25)');
    expect(text).not.toContain('executor wiring root failures per run');
    expect(text).toContain('Held-out accuracy: 0.000 before -> 0.500 after; best constant policy (always "weather:now") 0.333');
    expect(text).toContain('Held-out right class: 0.50 before -> 1.00 after; best constant policy (always weather) 0.67');
    expect(text).toContain('Held-out per class, right class / correct, before -> after (runs): math 0.50/0.00 -> 1.00/0.50 (2), weather 0.50/0.00 -> 1.00/0.50 (4)');
    expect(text).toContain('Held-out wiring root failures per run, designer: 0.500 before -> 0.000 after');
  });

  it('--json carries them too', () => {
    const j = trainLoopJson(report);
    expect(j.iterations[0]!.roles.designer).toMatchObject({ step: 'sft', sftSequences: 3, wiringRootFailures: 0.5 });
    expect(j.heldout!.after).toMatchObject({ accuracy: 0.5, classAccuracy: 1, constant: { class: 'weather' }, wiringRootFailures: { designer: 0, executor: 0 }, classes: { math: { runs: 2 } } });
  });
});
