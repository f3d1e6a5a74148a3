import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import type { SftSequence } from '../training/port.ts';
import { checkBlindSpot, sampleWinners } from './blindSpotGuard.ts';
import { massFamily } from './family.ts';
import type { RankedRun } from './outer.ts';
import { runRsi, type RsiOptions } from './rsi.ts';
import { fakeTrainer, scripted } from './rsi.fixture.ts';

const run = (runId: string, rank: number, verified: number) => ({ runId, rank, verified }) as RankedRun;
const ranking = (taskId: string, winners: RankedRun[]) => ({ taskId, self: { train: winners, validation: [], dropped: [] } });

describe('the blind-spot guard: the external verifier on a sample of the self-judged winners', () => {
  it('samples ceil(share x n) winners per task, seeded, in rank order', () => {
    const w = [run('a', 1, 1), run('b', 2, 0), run('c', 3, 0), run('d', 4, 1)];
    expect(sampleWinners(w, 0, 1, 't')).toEqual([]);
    expect(sampleWinners(w, 1, 1, 't').map((x) => x.runId)).toEqual(['a', 'b', 'c', 'd']);
    const half = sampleWinners(w, 0.5, 1, 't');
    expect(half).toHaveLength(2);
    expect(sampleWinners(w, 0.5, 1, 't')).toEqual(half);
    expect(half[0]!.rank).toBeLessThan(half[1]!.rank);
    expect(sampleWinners(w, 0.3, 1, 't')).toHaveLength(2); // ceil(1.2)
    // Over seeds, every winner gets sampled (the draw moves).
    const seen = new Set(Array.from({ length: 20 }, (_, s) => sampleWinners(w, 0.25, s, 't')[0]!.runId));
    expect(seen.size).toBe(4);
  });

  it('2 of 4 rejected: rate 0.5, Wilson [0.150, 0.850]; halts above 0.25, not at 0.5 (strictly above)', () => {
    const rs = [ranking('t0', [run('a', 1, 1), run('b', 2, 0)]), ranking('t1', [run('c', 1, 0), run('d', 2, 1)])];
    const c = checkBlindSpot(rs, { sample: 1, maxDisagreement: 0.25 }, 1, 0);
    expect(c).toMatchObject({ sampled: 4, disagreed: 2, rate: 0.5, halt: true });
    expect(c.ci![0]).toBeCloseTo(0.15, 3);
    expect(c.ci![1]).toBeCloseTo(0.85, 3);
    expect(c.checked.filter((x) => x.disagreed).map((x) => x.runId)).toEqual(['b', 'c']);
    expect(c.reason).toBe('blind-spot guard: the external verifier rejects 2 of 4 sampled self-judged winners (50.0%), above the threshold of 25.0%');
    expect(checkBlindSpot(rs, { sample: 1, maxDisagreement: 0.5 }, 1, 0).halt).toBe(false);
    // A run at half score is right by --verifier-min 0.5, wrong by 1.
    expect(checkBlindSpot([ranking('t', [run('h', 1, 0.5)])], { sample: 1, maxDisagreement: 0 }, 0.5, 0).disagreed).toBe(0);
    expect(checkBlindSpot([ranking('t', [run('h', 1, 0.5)])], { sample: 1, maxDisagreement: 0 }, 1, 0).disagreed).toBe(1);
    expect(() => checkBlindSpot(rs, { sample: 2, maxDisagreement: 0 }, 1, 0)).toThrow(RangeError);
  });

  it('writes its threshold in one key order whatever order it was given in (a replay reads sorted settings; halt.json must match)', () => {
    const sorted = JSON.parse('{"maxDisagreement":0.25,"sample":0.5}') as { sample: number; maxDisagreement: number };
    expect(JSON.stringify(checkBlindSpot([], sorted, 1, 0).threshold)).toBe('{"sample":0.5,"maxDisagreement":0.25}');
  });
});

const family = massFamily('learn-tool');
const ds = createLearnDataset('learn-tool', ['tool']);
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the blind-spot guard halts an rsi self-judge arm (SIMULATED model)', () => {
  const setup = (loopId: string, maxDisagreement: number, arms?: RsiOptions['arms']) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mass-blind-'));
    dirs.push(dir);
    const base = path.join(dir, 'base.gguf');
    writeFileSync(base, 'base');
    const store = openStore(':memory:');
    stores.push(store);
    const log: Array<{ start: string; seqs: SftSequence[] }> = [];
    const o: RsiOptions = {
      loopId, outDir: path.join(dir, 'out'), cycles: 1, baseModel: base, design: null,
      outer: { runs: 6, neighbours: 3, seed: 1, iterations: 500, train: 4, validation: 1, verifierMin: 1, sampling: { temperature: 1 } },
      thresholds: { maxQuarantinedShare: 1, minAgreement: 0, blindSpot: { sample: 0.5, maxDisagreement } },
      sft: { passes: 1, lr: 1e-3, batch: 8 }, heldoutSampling: { temperature: 0 }, heldoutSamples: 1, allowUnreliableJudge: true, ...(arms && { arms }),
    };
    // The SIMULATED judge answers "A" on every untampered pair, so its winners are whatever the ring put first; the base mostly answers "search".
    const deps = { store, trainer: fakeTrainer(log), makeProvider: async (f: string) => scripted(f), family, trainTasks: ds.load({ split: 'train', limit: 3 }), heldoutTasks: ds.load({ split: 'heldout', limit: 4 }) };
    return { o, deps, log, store };
  };

  it('a threshold set here halts cycle 1 with its report; nothing of the generation is exported or trained', async () => {
    const { o, deps, log, store } = setup('blind', 0.2);
    const report = await runRsi(deps, o);
    const check = report.halted!.blindSpot!;
    // 3 tasks x ceil(0.5 x 4) winners; each check is the stored run's own grade on the pristine task.
    expect(check.sampled).toBe(6);
    for (const c of check.checked) expect(c.disagreed).toBe(store.getRun(c.runId).score < 1);
    expect(check.disagreed).toBe(check.checked.filter((c) => store.getRun(c.runId).score < 1).length);
    expect(check.rate!).toBeGreaterThan(0.2);
    expect(report.halted).toMatchObject({ cycle: 1, reasons: [check.reason] });
    expect(check.reason).toBe(`blind-spot guard: the external verifier rejects ${check.disagreed} of 6 sampled self-judged winners (${((100 * check.disagreed) / 6).toFixed(1)}%), above the threshold of 20.0%`);
    expect(JSON.parse(readFileSync(report.halted!.file, 'utf8'))).toMatchObject({ cycle: 1, blindSpot: { sampled: 6, disagreed: check.disagreed } });
    // Halted before the export: no cycle folder, no SFT step, no version.
    expect(existsSync(path.join(o.outDir, 'cycle-1'))).toBe(false);
    expect(log).toHaveLength(0);
    expect(store.weights.list()).toHaveLength(0);
    expect(report.cycles[0]!.groups[0]!.blindSpot).toEqual(check);

    // The same loop with the threshold at 1 runs on: the same check, reported per cycle, and both arms exported.
    const loose = setup('blind', 1);
    const on = await runRsi(loose.deps, loose.o);
    expect(on.halted).toBeUndefined();
    expect(on.cycles[0]!.groups[0]!.blindSpot).toMatchObject({ sampled: 6, disagreed: check.disagreed, halt: false });
    expect(existsSync(path.join(loose.o.outDir, 'cycle-1', 'self', 'manifest.json'))).toBe(true);
    // The sampled winners are the self arm's training cut.
    const cut = new Set(Object.values(on.cycles[0]!.arms.self!.selections).flatMap((s) => s.train));
    for (const c of check.checked) expect(cut.has(c.runId)).toBe(true);
  });

  it('a loop without the self arm has no self-judged winner to check: the guard stays out', async () => {
    const { o, deps } = setup('blind-v', 0, ['verifier']);
    const report = await runRsi(deps, o);
    expect(report.halted).toBeUndefined();
    expect(report.cycles[0]!.groups[0]!.blindSpot).toBeUndefined();
  });
});
