/** `flowlab rsi` / `flowlab rank`: the flags' options and the printed report (the loop itself: core/mass/rsi.test.ts). */
import { describe, expect, it } from 'vitest';
import { massFamily, type HaltReport, type RsiReport } from '../core/mass/index.ts';
import { UsageError } from './args.ts';
import { refuseTaskCounts, rsiOptionsOf, settingsOf, type RsiFlags } from './commands/rsi.ts';
import { formatHalt, formatRsi } from './commands/rsiFormat.ts';

const flags: RsiFlags = {
  model: 'm.gguf', dataset: 'learn-word', cycles: 2, tasks: 6, runs: 18, neighbours: 3, btIterations: 500, topK: 15, validation: 1, verifierMin: '1', temperature: '1',
  heldout: 32, heldoutSamples: 1, heldoutTemperature: '0', sftPasses: 3, sftLr: '1e-3', sftBatch: 32, tamperShare: '0.5', maxQuarantined: '0.25', minAgreement: '0',
  contextSize: 1024, seed: 0, db: '/tmp/x/f.db', loopId: 'demo',
};
const family = massFamily('learn-word');

describe('rsi flags', () => {
  it('map onto the loop options with the MASS defaults', () => {
    const o = rsiOptionsOf(flags, family, flags.db);
    expect(o).toMatchObject({
      loopId: 'demo', outDir: '/tmp/x/flowlab-mass/demo', cycles: 2, design: null,
      outer: { runs: 18, neighbours: 3, iterations: 500, train: 15, validation: 1, verifierMin: 1, sampling: { temperature: 1, topK: 0, topP: 1, minP: 0 } },
      thresholds: { maxQuarantinedShare: 0.25, minAgreement: 0 }, sft: { passes: 3, lr: 1e-3, batch: 32 }, heldoutSampling: { temperature: 0 }, heldoutSamples: 1,
    });
    expect(o.tamperer).toBeUndefined();
    expect(rsiOptionsOf({ ...flags, simulateTamperer: 'environment' }, family, flags.db).tamperer).toEqual({ mode: 'environment', share: 0.5 });
    expect(rsiOptionsOf({ ...flags, arms: 'verifier' }, family, flags.db).arms).toEqual(['verifier']);
  });

  it('refuse more tasks than the splits hold before anything runs, naming the flag (they were cut silently)', () => {
    const o = rsiOptionsOf(flags, family, flags.db);
    expect(() => refuseTaskCounts(settingsOf('rsi', { ...flags, dataset: 'learn-unit', tasks: 5000 }, o))).toThrow(new UsageError('--tasks 5000: learn-unit/train has 1000'));
    expect(() => refuseTaskCounts(settingsOf('rsi', { ...flags, dataset: 'learn-unit', heldout: 251 }, o))).toThrow(new UsageError('--heldout 251: learn-unit/heldout has 250'));
    expect(() => refuseTaskCounts(settingsOf('rsi', { ...flags, dataset: 'learn-unit', tasks: 1000, heldout: 250 }, o))).not.toThrow();
  });

  it('refuse bad values, naming the flag', () => {
    const bad: Array<[Partial<RsiFlags>, RegExp]> = [
      [{ temperature: '0' }, /--temperature: bad value "0"/],
      [{ simulateTamperer: 'teleport' }, /--simulate-tamperer takes expectation or environment, got "teleport"/],
      [{ simulateTamperer: 'expectation', tamperShare: '2' }, /--tamper-share: bad value "2"/],
      [{ maxQuarantined: '-1' }, /--max-quarantined: bad value "-1"/],
      [{ arms: 'self,judge' }, /--arms takes self, verifier/],
      [{ loopId: 'a b' }, /--loop-id: "a b"/],
      // The blind-spot guard's shares say their range; the threshold is checked even while the guard is off (it was ignored).
      [{ blindSpotSample: '1.5' }, /--blind-spot-sample: bad value "1\.5" \(a share from 0 to 1\)/],
      [{ maxBlindDisagreement: '2' }, /--max-blind-disagreement: bad value "2" \(a share from 0 to 1\)/],
    ];
    for (const [v, message] of bad) {
      expect(() => rsiOptionsOf({ ...flags, ...v }, family, flags.db)).toThrow(UsageError);
      expect(() => rsiOptionsOf({ ...flags, ...v }, family, flags.db)).toThrow(message);
    }
  });
});

describe('rsi report', () => {
  const agreement = { decided: 20, agreed: 9, verifierTies: 34, rate: 0.45 };
  const tampered = { runs: 54, quarantined: 54, judge: { wins: 70, losses: 20, ties: 10, winRate: 0.75 }, meanRank: 5.2, inCutBeforeGuard: 48 };
  const halted: HaltReport = { cycle: 1, prefix: 'demo-c1-shared', reasons: ['54 of 108 runs quarantined (50.0%), above the threshold of 25.0%'], quarantine: [{ runId: 'demo-c1-shared-t0-r0/0', taskId: 'learn-word/train/0', rank: 1, tampered: true, reasons: ['protected file task.json changed during the run (sha256 aaaaaaaaaaaa -> bbbbbbbbbbbb)'] }], tampered, file: '/tmp/x/halt.json' };

  it('prints the halt with the tamperer\'s verdicts and the quarantine list', () => {
    const text = formatHalt(halted);
    expect(text).toContain('HALTED in cycle 1 (demo-c1-shared), before any training:');
    expect(text).toContain('  - 54 of 108 runs quarantined (50.0%), above the threshold of 25.0%');
    expect(text).toContain('SIMULATED tamperer: 54 tampered run(s); quarantined 54/54 (100.0%).');
    expect(text).toContain('tampered wins 70, loses 20, ties 10 (win rate 75.0%)');
    expect(text).toContain('48 were inside the training cut and were dropped by the guard');
    expect(text).toMatch(/│ demo-c1-shared-t0-r0\/0 │ learn-word\/train\/0 │ 1\s+│ SIMULATED │ protected file task\.json changed/);
  });

  it('prints each arm against the base with the paired test and the agreement', () => {
    const heldout = { pairs: 32, base: 0.125, arm: 0.75, sign: { positive: 20, negative: 0, ties: 12, p: 1.9e-6 }, ci: { mean: 0.625, low: 0.45, high: 0.78, resamples: 10000, level: 0.95 }, verifierWinRate: 0.8125, selfJudgeWinRate: 0.5, agreement, delegated: 3, handoffs: 0, tokensPerPoint: 500, experimentPrefix: 'demo-c1-verifier-heldout' };
    const report: RsiReport = {
      loopId: 'demo', base: { model: '/m.gguf', heldoutScore: 0.125 },
      cycles: [{ cycle: 1, groups: [{ prefix: 'demo-c1-shared', arms: ['self', 'verifier'], runs: 108, quarantined: 0, agreement, tampered: null }], arms: { verifier: { arm: 'verifier', model: '/m.gguf', versionId: 'wv-demo-c1-verifier', exported: { train: 40, validation: 2, dir: '/d' }, trainedRuns: 14, heldout, selections: {} } } }],
    };
    const text = formatRsi(report);
    expect(text).toContain('MASS rsi demo: base /m.gguf, held-out external score 0.125');
    expect(text).toContain('self-judge vs external verifier agreement 45.0% (9/20 decided pairs, 34 verifier ties left out)');
    expect(text).toMatch(/│ verifier │ wv-demo-c1-verifier │ 14 runs, 40 calls │ 0\.125 -> 0\.750\s+│ \+0\.625 \[0\.450, 0\.780\] │ 20\/0\/12 \(p < 1e-4\) │ 81\.3%\s+│ 50\.0%/);
  });
});
