import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { massFamily } from '../../mass/family.ts';
import type { OuterOptions } from '../../mass/outer.ts';
import { runRank } from '../../mass/rank.ts';
import { fakeTrainer, scripted } from '../../mass/rsi.fixture.ts';
import { runRsi, type RsiReport } from '../../mass/rsi.ts';
import { openStore, type Store } from '../../store/index.ts';
import { createLearnDataset } from '../../tasks/learn.ts';
import type { SftSequence } from '../../training/port.ts';
import { ApiError, createHandlers, type FlowlabApi } from '../index.ts';

const family = massFamily('learn-tool');
const ds = createLearnDataset('learn-tool', ['tool']);
const outer = (prefix: string): OuterOptions => ({ prefix, design: null, runs: 6, neighbours: 3, seed: 1, iterations: 500, train: 4, validation: 1, verifierMin: 1, sampling: { temperature: 1 } });

let dir: string;
let store: Store;
let api: FlowlabApi;
let report: RsiReport;
beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'mass-outer-api-'));
  const base = path.join(dir, 'base.gguf');
  writeFileSync(base, 'base');
  store = openStore(':memory:');
  const log: Array<{ start: string; seqs: SftSequence[] }> = [];
  // One real cycle of the loop over a SIMULATED model and trainer (core/mass/rsi.fixture.ts).
  report = await runRsi(
    { store, trainer: fakeTrainer(log), makeProvider: async (f) => scripted(f), family, trainTasks: ds.load({ split: 'train', limit: 2 }), heldoutTasks: ds.load({ split: 'heldout', limit: 4 }) },
    {
      loopId: 'rsi-a', outDir: path.join(dir, 'rsi'), cycles: 1, baseModel: base, design: null, outer: outer('x'),
      thresholds: { maxQuarantinedShare: 1, minAgreement: 0 }, sft: { passes: 1, lr: 1e-3, batch: 8 }, heldoutSampling: { temperature: 0 }, heldoutSamples: 1,
    },
  );
  // A rank loop whose SIMULATED tamperer is quarantined and halts it.
  const task = ds.load({ split: 'train', limit: 1 })[0]!;
  await runRank({ store, provider: scripted(''), family, tasks: [task] }, { ...outer('rank-t'), tamperer: { mode: 'expectation', share: 0.5 }, outDir: path.join(dir, 'rank'), thresholds: { maxQuarantinedShare: 0.25, minAgreement: 0 } });
  api = createHandlers({ store, version: 'test' });
}, 120_000);
afterAll(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('outer-loop reads (SIMULATED model and trainer)', () => {
  it('lists the stored outer loops', () => {
    expect(api.listOuterLoops()).toEqual([{ loopId: 'rsi-a', tasks: 2, cycles: 1, halted: false }, { loopId: 'rank-t', tasks: 1, cycles: 0, halted: true }]);
    // The inner loop's list is unchanged by outer-loop records.
    expect(api.listEvolutions()).toEqual([]);
  });

  it('gives each task its Bradley-Terry ranking with the train/validation cut', () => {
    const v = api.getOuterLoop({ loopId: 'rsi-a' });
    expect(v.rankings.map((t) => `${t.prefix}/${t.taskId}`)).toEqual(ds.load({ split: 'train', limit: 2 }).map((t) => `rsi-a-c1-shared/${t.id}`));
    for (const t of v.rankings) {
      expect(t.runs.map((r) => r.rank)).toEqual([1, 2, 3, 4, 5, 6]);
      expect([t.train, t.validation, t.cycle]).toEqual([4, 1, 1]);
      // No quarantine here: ranks 1-4 train, 5 validation, 6 left out.
      expect(t.runs.map((r) => r.cut)).toEqual(['train', 'train', 'train', 'train', 'validation', 'out']);
      // Ranked by Bradley-Terry score, best first.
      expect(t.runs.map((r) => r.score)).toEqual([...t.runs.map((r) => r.score)].sort((a, b) => b - a));
    }
    expect(v.quarantine).toEqual([]);
  });

  it('gives the cycle-over-cycle comparison per arm, as the loop reported it', () => {
    const v = api.getOuterLoop({ loopId: 'rsi-a' });
    const c1 = report.cycles[0]!;
    expect(v.cycles.map((c) => `${c.cycle}:${c.arm}`)).toEqual(['1:self', '1:verifier']);
    for (const c of v.cycles) {
      const h = c1.arms[c.arm as 'self' | 'verifier']!.heldout!;
      expect(c).toMatchObject({ pairs: 4, baseScore: h.base, armScore: h.arm, verifierWinRate: h.verifierWinRate, selfJudgeWinRate: h.selfJudgeWinRate, agreement: h.agreement.rate, delegated: h.delegated, handoffs: h.handoffs });
    }
    // The paired test equals what `flowlab rsi --json` prints (the report as JSON): interval and sign test of arm − base.
    const printed = JSON.parse(JSON.stringify(report)) as RsiReport;
    for (const c of v.cycles) {
      const h = printed.cycles[0]!.arms[c.arm as 'self' | 'verifier']!.heldout!;
      expect([c.arm, c.ci, c.sign]).toEqual([c.arm, h.ci, h.sign]);
      expect(c.ci!.mean).toBeCloseTo(c.armScore! - c.baseScore!, 12);
      expect(c.sign!.positive + c.sign!.negative + c.sign!.ties).toBe(c.pairs);
    }
    // The SIMULATED learner of the verifier arm beats the base on the held-out tasks.
    const ver = v.cycles.find((c) => c.arm === 'verifier')!;
    expect(ver.armScore!).toBeGreaterThan(ver.baseScore!);
    expect(v.baseHeldoutScore).toBe(report.base.heldoutScore);
    expect(v.halted).toBeNull();
  });

  it('lists the quarantine with each reason and drops those runs from the cut', () => {
    const v = api.getOuterLoop({ loopId: 'rank-t' });
    expect(v.quarantine).toHaveLength(3);
    expect(v.quarantine.every((q) => q.tampered && q.reasons.length > 0 && q.reasons.some((r) => /changed/.test(r)))).toBe(true);
    const runs = v.rankings[0]!.runs;
    expect(runs.filter((r) => r.quarantined).every((r) => r.cut === 'dropped' && /quarantined/.test(r.dropped!))).toBe(true);
    expect(runs.filter((r) => r.cut === 'train' || r.cut === 'validation').every((r) => !r.quarantined)).toBe(true);    // The halted rank is recorded as halted, before its export (cycle null), with the threshold's reason.
    expect(v.halted).toEqual({ cycle: null, reasons: ['3 of 6 runs quarantined (50.0%), above the threshold of 25.0%'] });
  });

  it('answers NOT_FOUND for an unknown loop, BAD_REQUEST for a bad payload', () => {
    try {
      api.getOuterLoop({ loopId: 'nope' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ApiError);
      expect((e as ApiError).code).toBe('NOT_FOUND');
    }
    expect(() => api.getOuterLoop({} as never)).toThrow(ApiError);
  });
});
