/**
 * The `blind-spot-kept` reveal of a workshop's rsi step (cli/workshopRunner.ts `blindSpotResult`),
 * read from an rsi report shaped as `flowlab rsi --json` prints it (core/mass `RsiReport`), with
 * hand-set figures: the truth, the facts per cycle and arm, the chart's curves; and a scenario
 * that asks it of a command other than rsi refused at its path.
 */
import { describe, expect, it } from 'vitest';
import { parseScenario, WorkshopError } from '../core/workshop/index.ts';
import { thrownBy } from '../test/fixtures.ts';
import { blindSpotResult } from './workshopRunner.ts';

const p = (errors: number, n: number, interval: [number, number]) => ({ errors, n, rate: errors / n, interval });
const BASE = p(12, 48, [0.1492, 0.3878]);
const held = (arm: number, blind: ReturnType<typeof p>, previous?: number) => ({
  base: 0.5, arm, sign: { p: 0.03 }, blindSpot: blind, baseBlindSpot: BASE, ...(previous !== undefined && { vsPrevious: { previous, sign: { p: 0.5 } } }),
});
const REPORT = {
  loopId: 'rsi-unit',
  cycles: [
    { cycle: 1, arms: { self: { heldout: held(0.6, p(11, 48, [0.1331, 0.3654])) }, verifier: { heldout: held(0.65, p(8, 48, [0.0870, 0.2958])) } } },
    { cycle: 2, arms: { self: { heldout: held(0.7, p(9, 48, [0.1019, 0.3194]), 0.6) }, verifier: { heldout: held(0.8, p(2, 48, [0.0115, 0.1398]), 0.65) } } },
  ],
};

describe('workshop: who keeps the blind spot (rsi step)', () => {
  it('reads each arm\'s blind-spot curve: the self arm kept it (9/48, interval over the base\'s 0.25), the verifier arm\'s fell (2/48)', () => {
    const r = blindSpotResult(REPORT);
    expect(r.truth).toBe('self');
    expect(r.headline).toBe("The self-judge arm kept its blind spot; the verifier arm's fell.");
    expect(r.facts[0]).toEqual({
      label: 'Blind-spot error rate (held-out answers in the wrong unit)',
      value: 'self arm 25.0% [14.9, 38.8] (12/48) → 18.8% [10.2, 31.9] (9/48) (did not fall); verifier arm 25.0% [14.9, 38.8] (12/48) → 4.2% [1.1, 14.0] (2/48) (fell)',
    });
    expect(r.facts.map((f) => f.label)).toEqual(['Blind-spot error rate (held-out answers in the wrong unit)', 'Cycle 1, self arm', 'Cycle 1, verifier arm', 'Cycle 2, self arm', 'Cycle 2, verifier arm']);
    expect(r.facts[4]!.value).toBe('held-out 0.500 (base) → 0.800, sign test p 0.0300; vs cycle 1: 0.650 → 0.800, p 0.5000; blind spot 4.2% [1.1, 14.0] (2/48)');
    expect(r.chart).toEqual({ kind: 'lines', title: 'Held-out blind-spot error rate per arm (cycle 0 = the base model)', unit: 'share', x: 'cycle', series: [
      { name: 'self-judge arm', points: [0.25, 11 / 48, 9 / 48] }, { name: 'verifier arm', points: [0.25, 8 / 48, 2 / 48] },
    ] });
  });

  it('says an arm\'s rate rose when its last interval lies above the base\'s rate (the rehearsed learn-unit run: 0/48 -> 22/48)', () => {
    // Wilson's lower bound at 0 of 48 computes as a rounding error above 0 (the rehearsal's self arm): not a rise.
    const zero = p(0, 48, [1e-17, 0.0741]);
    const rising = { cycles: [
      { cycle: 1, arms: { self: { heldout: { ...held(0, zero), baseBlindSpot: zero } }, verifier: { heldout: { ...held(0.5, p(22, 48, [0.3264, 0.5970])), baseBlindSpot: zero } } } },
    ] };
    const r = blindSpotResult(rising);
    expect(r.truth).toBe('both');
    expect(r.headline).toBe("Neither arm's blind spot fell over these cycles. The verifier arm's rate rose above the base's: it learned to answer with a number, and many of those answers are in the wrong unit.");
    expect(r.facts[0]!.value).toBe('self arm 0.0% [0.0, 7.4] (0/48) → 0.0% [0.0, 7.4] (0/48) (did not fall); verifier arm 0.0% [0.0, 7.4] (0/48) → 45.8% [32.6, 59.7] (22/48) (rose)');
  });

  it('blind-spot-rose: from a base at 0/48 the verifier arm rose to 22/48 and the self arm stayed at 0: truth verifier', () => {
    const zero = p(0, 48, [1e-17, 0.0741]);
    const rising = { cycles: [
      { cycle: 1, arms: { self: { heldout: { ...held(0, zero), baseBlindSpot: zero } }, verifier: { heldout: { ...held(0.5, p(22, 48, [0.3264, 0.5970])), baseBlindSpot: zero } } } },
    ] };
    const r = blindSpotResult(rising, 'blind-spot-rose');
    expect(r.truth).toBe('verifier');
    expect(r.headline).toBe('The verifier arm answers in the wrong unit more often than the model it started from: a generation trained on its winners learned to give a number without learning which unit the request names.');
  });

  it('says which arm has no blind-spot rate (a family without one, or one arm only)', () => {
    const oneArm = { cycles: REPORT.cycles.map((c) => ({ ...c, arms: { self: c.arms.self } })) };
    expect(thrownBy(WorkshopError, () => blindSpotResult(oneArm)).message).toMatch(/no held-out blind-spot rate for the verifier arm/);
    expect(thrownBy(WorkshopError, () => blindSpotResult({ cycles: [], halted: { cycle: 1, reasons: ['blind-spot guard'] } })).message).toMatch(/for either arm .*the loop halted: blind-spot guard/);
  });

  it('a scenario asking blind-spot-kept of a command other than rsi is refused at its path', () => {
    const yaml = [
      'id: demo', 'title: Demo', 'summary: A demo.', 'steps:',
      '  - id: one', '    title: One', '    text: Some text.', '    run: { command: rank, args: [--dataset, learn-unit] }',
      '    question: { prompt: Who keeps it?, choices: [self, verifier, both, neither], truth: blind-spot-kept }', '    reveal: The curves.',
    ].join('\n');
    const err = thrownBy(WorkshopError, () => parseScenario(yaml, 'demo.yaml'));
    expect(err.issues.map((i) => [i.path, i.message])).toEqual([['steps[0].run.command', 'truth blind-spot-kept reads the cycles of an rsi, not of rank']]);
    // Every fixed choice of the truth must be offered.
    const missing = thrownBy(WorkshopError, () => parseScenario(yaml.replace('command: rank', 'command: rsi').replace('[self, verifier, both, neither]', '[self, verifier]'), 'demo.yaml'));
    expect(missing.issues.map((i) => i.message)).toEqual(['truth blind-spot-kept needs the choice "both"', 'truth blind-spot-kept needs the choice "neither"']);
  });
});
