import { afterEach, describe, expect, it } from 'vitest';
import type { StoreApi } from 'zustand/vanilla';
import { rankingRecord, storeBase, storeCycle, storeHalt, storeRankings } from '../../core/mass/outerRecords.ts';
import type { TaskRanking } from '../../core/mass/outer.ts';
import { storeJudgeAudit } from '../../core/mass/judgeAudit.ts';
import { auditJudge } from '../../core/guards/index.ts';
import type { CycleReport } from '../../core/mass/rsi.ts';
import type { NewExperiment, Store } from '../../core/store/index.ts';
import { newExperiment } from '../../test/fixtures.ts';
import type { LabState } from '../state.ts';
import { formatRsi } from '../../cli/commands/rsiFormat.ts';
import { MassOuterPanel, RANK_COMMAND } from './MassOuterPanel.tsx';
import { closeViewStores, renderView, storeLab } from './viewTest.fixture.tsx';

afterEach(closeViewStores);

/** A lab over the MASS records `fill` stores, its MASS lists loaded. */
async function lab(fill: (s: Store) => void) {
  const l = await storeLab(fill);
  await l.getState().loadMass();
  return l;
}

const render = (l: StoreApi<LabState>): string => renderView(l, <MassOuterPanel />);

const agreement = { decided: 4, agreed: 3, verifierTies: 1, rate: 0.75 };
const guard = (q: boolean) => ({ quarantined: q, reasons: q ? [{ code: 'ENV_CHANGED' as const, file: 'grader.json', before: 'a'.repeat(64), after: 'b'.repeat(64) }] : [] });

/** A SIMULATED ranking of 18 runs (hand-written, no model): run r2 quarantined, the rest by rank. */
function simulatedRanking(): TaskRanking {
  const runs = Array.from({ length: 18 }, (_, i) => ({
    runId: `sim-r${i}`, experimentId: `sim-${i}`, taskId: 'learn-tool/train/0', index: i, rank: i + 1, score: -i / 10, wins: 18 - i, losses: i, ties: 0,
    verified: i % 2 ? 0 : 1, reported: 0, quarantined: i === 2, guard: guard(i === 2), delegated: i === 0, handoffs: 0, tokens: 10,
  }));
  const kept = runs.filter((r) => !r.quarantined);
  return {
    taskId: 'learn-tool/train/0', runs, pairs: [], swaps: [], agreement, workspaces: new Map(),
    self: { train: kept.slice(0, 15), validation: kept.slice(15, 16), dropped: [{ runId: 'sim-r2', why: 'quarantined' }] },
    verifier: { train: [], validation: [], dropped: [] },
  };
}

/** A SIMULATED cycle report (hand-written numbers). */
const cycle: CycleReport = {
  cycle: 1, groups: [],
  arms: {
    verifier: {
      arm: 'verifier', model: 'base.gguf', versionId: 'wv-sim-c1-verifier', exported: { train: 15, validation: 1, dir: 'out' }, trainedRuns: 15, selections: {},
      heldout: { pairs: 8, base: 0.25, arm: 0.5, sign: { positive: 2, negative: 0, ties: 6, p: 0.5 }, ci: { low: 0, high: 0.5, mean: 0.25, resamples: 1000, level: 0.95 }, verifierWinRate: 0.625, selfJudgeWinRate: 0.5, agreement: { decided: 2, agreed: 1, verifierTies: 6, rate: 0.5 }, delegated: 3, handoffs: 1, tokensPerPoint: null, experimentPrefix: 'sim' },
    },
  },
};

describe('MASS outer-loop panel', () => {
  it('shows the empty state with the rank command', async () => {
    const html = render(await lab(() => {}));
    expect(html).toContain('data-testid="mass-outer-empty"');
    expect(html).toContain(RANK_COMMAND);
    // The form above offers rank and rsi: the text says so (it said "run one from a terminal" only).
    expect(html).toContain('Start one above (job rank or rsi), or from a terminal:');
  });

  it('shows the ranking with the 15/1 cut, the quarantine with its reason, and the cycle comparison (SIMULATED records)', async () => {
    const l = await lab((s) => {
      storeRankings(s, 'sim-loop', 'sim-loop-c1-shared', 1, [simulatedRanking()], { train: 15, validation: 1 });
      storeBase(s, 'sim-loop', { model: 'base.gguf', heldoutScore: 0.25 });
      storeCycle(s, 'sim-loop', cycle);
      // One champion run's experiment (<prefix>-t<task>-r<run>) with its model file, and a judge pair's (no model file).
      s.createExperiment(newExperiment({ id: 'sim-loop-c1-shared-t0-r0', kind: 'mass', config: { threads: 1, models: { models: { default: '/m/base.gguf' }, roleModels: {}, gpu: false } } as NewExperiment['config'] }));
      s.createExperiment(newExperiment({ id: 'sim-loop-c1-shared-t0-p0', kind: 'mass' }));
    });
    await l.getState().refresh();
    expect(l.getState().outerLoop.status).toBe('ready');
    const html = render(l);
    // The loop's model, as `flowlab ls` names its runs' (issue 29: outer loops named none).
    expect(html).toContain('data-testid="mass-outer-models">models base.gguf</p>');
    expect(html).toContain('data-testid="mass-ranking-sim-loop-c1-shared/learn-tool/train/0"');
    expect(html).toContain('ranks 1–15 train, 16 validation, the rest left out');
    expect(html.match(/class="mass-cut-train"/g)).toHaveLength(15);
    expect(html.match(/class="mass-cut-validation"/g)).toHaveLength(1);
    expect(html.match(/class="mass-cut-out"/g)).toHaveLength(1);
    expect(html).toContain('dropped: quarantined');
    expect(html).toContain('data-testid="mass-quarantine"');
    expect(html).toContain('<code>sim-r2</code> (learn-tool/train/0, rank 3): protected file grader.json changed during the run (sha256 aaaaaaaaaaaa -&gt; bbbbbbbbbbbb)');
    expect(html).toContain('data-testid="mass-cycle-1-verifier"');
    // The paired held-out test as `flowlab rsi` prints it for the same cycle (cli/commands/rsiFormat.ts): the interval of the difference and the sign test.
    expect(html).toContain('<td>0.25 → 0.50</td><td class="nowrap" data-testid="mass-cycle-1-verifier-ci">+0.250 [0.000, 0.500]</td><td class="nowrap" data-testid="mass-cycle-1-verifier-sign">2/0/6 (p 0.5000)</td><td>50% / 63%</td><td>50%</td><td>3 / 1</td>');
    const cli = formatRsi({ loopId: 'sim-loop', base: { model: 'base.gguf', heldoutScore: 0.25 }, cycles: [cycle] });
    expect(cli).toMatch(/│ 0\.250 -> 0\.500\s+│ \+0\.250 \[0\.000, 0\.500\] │ 2\/0\/6 \(p 0\.5000\)\s+│/);
    expect(html).toContain('base mean external score 0.25');
  });

  it('shows a halted rank as halted before its export, with the reason (SIMULATED records)', async () => {
    const l = await lab((s) => {
      storeRankings(s, 'rk', 'rk', null, [simulatedRanking()], { train: 15, validation: 1 });
      storeHalt(s, 'rk', { cycle: null, reasons: ['9 of 18 runs quarantined (50.0%), above the threshold of 25.0%'] });
    });
    const html = render(l);
    expect(html).toContain('rk — 1 task(s), 0 cycle(s), halted');
    expect(html).toContain('data-testid="mass-outer-halted">Halted before the export (rank): 9 of 18 runs quarantined (50.0%), above the threshold of 25.0%</p>');
  });

  it('shows the self-judge audit: UNRELIABLE JUDGE with its figures and reasons (a scripted always-"B" judge, hand-computed)', async () => {
    // 10 pairs all "B"; 4 swapped pairs, none mirrored; the verifier decides 5 pairs, 2 of them B, and ties 5.
    const pairs = [...Array.from({ length: 2 }, () => ({ winner: 'B' as const, gold: 'B' as const })), ...Array.from({ length: 3 }, () => ({ winner: 'B' as const, gold: 'A' as const })), ...Array.from({ length: 5 }, () => ({ winner: 'B' as const, gold: 'tie' as const }))];
    const audit = auditJudge('self-judge (stories260K.gguf)', pairs, Array.from({ length: 4 }, () => ({ first: 'B' as const, swapped: 'B' as const })));
    const l = await lab((s) => {
      storeRankings(s, 'rk', 'rk', null, [simulatedRanking()], { train: 15, validation: 1 });
      storeJudgeAudit(s, 'rk', 'rk', audit);
    });
    const html = render(l);
    expect(html).toContain('data-testid="mass-judge-audit-rk"');
    expect(html).toContain('<strong>UNRELIABLE JUDGE</strong>');
    expect(html).toContain('verdicts: A 0, B 10, tie 0');
    // 0/4 mirrored: Wilson upper z²/(4 + z²) = 0.490; agreement 2/5 = 0.400; kappa: po = 2/10, pe = 1 x 2/10: 0.
    expect(html).toContain('position consistency (pairs judged in both orders): 0.000 [0.000, 0.490] (0/4)');
    expect(html).toContain('agreement with the verifier: 0.400');
    expect(html).toContain('Cohen&#x27;s kappa vs the verifier: 0.000');
    expect(html).toContain('answered &quot;B&quot; on 10 of 10 pairs (100.0%)');
  });

  it('keeps the record JSON-safe: the workspaces are left out', () => {
    expect(Object.keys(rankingRecord(simulatedRanking(), 'p', null, { train: 15, validation: 1 }))).not.toContain('workspaces');
  });
});
