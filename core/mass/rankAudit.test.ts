import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { graderVerdict } from '../guards/index.ts';
import type { GenerateRequest, ModelProvider } from '../model/provider.ts';
import { openStore, type Store } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { deriveSeed } from '../random.ts';
import { massFamily } from './family.ts';
import { ScriptedProvider } from '../model/scripted.ts';
import { defaultTools } from '../tools/index.ts';
import { ReplayProvider } from '../../models/replay/index.ts';
import { evolve } from './inner.ts';
import { evolutionAudit, JUDGE_AUDIT, storedJudgeAudits } from './judgeAudit.ts';
import * as loop from './loop.fixture.ts';
import { replayEvolution } from './replay.ts';
import { auditSample, type OuterOptions } from './outer.ts';
import { runRank } from './rank.ts';
import { runRsi, type RsiOptions } from './rsi.ts';
import { fakeTrainer, scripted } from './rsi.fixture.ts';

const family = massFamily('learn-tool');
const task = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 1 })[0]!;
const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The SIMULATED runs of rsi.fixture.ts, judged by a scripted judge `verdict(answerA, answerB)` (answers as the judge's evidence shows them). */
function judgedBy(verdict: (a: string, b: string) => 'A' | 'B' | 'tie'): ModelProvider {
  const base = scripted('');
  return {
    ...base,
    async generate(r: GenerateRequest) {
      if (r.key.nodeId !== 'judge') return base.generate(r);
      const [a, b] = [/A: answer: ([^;]*)/.exec(r.prompt)?.[1] ?? '', /B: answer: ([^;]*)/.exec(r.prompt)?.[1] ?? ''];
      return { ...(await base.generate(r)), text: JSON.stringify({ winner: verdict(a, b), rationale: 'scripted' }) };
    },
  };
}
const right = (answer: string) => (answer.includes(task.expected) ? 1 : 0);

const outer = (prefix: string): OuterOptions => ({ prefix, design: null, runs: 6, neighbours: 3, seed: 1, iterations: 500, train: 4, validation: 1, verifierMin: 0, sampling: { temperature: 1 }, auditSwaps: 4 });
async function rank(name: string, judge: ModelProvider, allow = false) {
  const dir = mkdtempSync(path.join(tmpdir(), 'rank-audit-'));
  dirs.push(dir);
  const store = openStore(':memory:');
  stores.push(store);
  const res = await runRank({ store, provider: judge, family, tasks: [task] }, { ...outer(name), outDir: dir, thresholds: { maxQuarantinedShare: 1, minAgreement: 0 }, judge: `scripted ${name}`, allowUnreliableJudge: allow });
  return { res, store, dir };
}

describe('flowlab rank: the self-judge audit (SIMULATED runs, scripted judges)', () => {
  it('the swapped sample is seeded: n of the schedule, in order, the same for the same seed', () => {
    expect(auditSample(15, 4, 7)).toEqual(auditSample(15, 4, 7));
    expect(auditSample(15, 4, 7)).toHaveLength(4);
    expect(new Set(auditSample(15, 15, 7)).size).toBe(15);
    expect(auditSample(3, 6, 1)).toEqual([0, 1, 2]);
    expect(auditSample(5, 0, 1)).toEqual([]);
  });

  it('a judge that always answers "B": 15 pairs all B, 0 of 4 swaps mirrored: UNRELIABLE JUDGE, the self arm not exported, the audit stored', async () => {
    const { res, store, dir } = await rank('always-b', judgedBy(() => 'B'));
    const a = res.judgeAudit;
    expect(a.pairs).toBe(15); // 6 runs, 3 neighbours: 6 x 3 - 3 pairs met twice
    expect(a.verdicts).toEqual({ A: 0, B: 15, tie: 0 });
    expect(a.positionConsistency).toMatchObject({ n: 4, k: 0, rate: 0 });
    expect(a.unreliable).toBe(true);
    expect(a.reasons[0]).toBe('position consistency 0.0% (0/4 swapped pairs mirrored), below 60.0%');
    expect(a.reasons).toContain('answered "B" on 15 of 15 pairs (100.0%), at or above 95.0%: a position, not a judgment');
    expect(res.refused).toEqual({ arm: 'self', reasons: a.reasons });
    expect(Object.keys(res.exports)).toEqual(['verifier']);
    expect(existsSync(path.join(dir, 'self', 'manifest.json'))).toBe(false);
    expect(storedJudgeAudits(store, 'always-b')).toEqual([{ key: 'always-b', audit: a }]);
    expect(store.mass.list('always-b', JUDGE_AUDIT)).toHaveLength(1);
  });

  it('with --allow-unreliable-judge the self arm is exported and its manifest marked', async () => {
    const { res } = await rank('always-b-allowed', judgedBy(() => 'B'), true);
    expect(res.refused).toBeUndefined();
    const manifest = JSON.parse(readFileSync(path.join(res.exports.self!.dir, 'manifest.json'), 'utf8')) as { unreliableJudge?: { judge: string; reasons: string[]; allowedBy: string } };
    expect(manifest.unreliableJudge).toEqual({ judge: 'scripted always-b-allowed', reasons: res.judgeAudit.reasons, allowedBy: '--allow-unreliable-judge' });
    const verifier = JSON.parse(readFileSync(path.join(res.exports.verifier!.dir, 'manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(verifier.unreliableJudge).toBeUndefined();
  });

  it('a judge that always says "tie" and one that agrees with the grader: kappa 0 (unreliable) and kappa 1 (reliable) on the same pairs', async () => {
    const tie = (await rank('always-tie', judgedBy(() => 'tie'))).res;
    const good = (await rank('grader-like', judgedBy((a, b) => graderVerdict(right(a), right(b))))).res;
    // The runs (and so the pairs and the grader's verdicts) are the same in both loops: only the judge differs.
    const gold = good.rankings[0]!.pairs.map((p) => {
      const v = new Map(good.rankings[0]!.runs.map((x) => [x.runId, x.verified]));
      return graderVerdict(v.get(p.a)!, v.get(p.b)!);
    });
    const ties = gold.filter((g) => g === 'tie').length;
    const decided = 15 - ties;
    expect(decided).toBeGreaterThan(0); // the SIMULATED runs answer "weather" on some seeds, "search" on the rest
    expect(ties).toBeGreaterThan(0);
    // always tie: right exactly on the grader's ties; pe = 1 x ties/15 = po, so kappa = 0; every swap mirrored (tie <-> tie).
    expect(tie.judgeAudit.verdicts).toEqual({ A: 0, B: 0, tie: 15 });
    expect(tie.judgeAudit.positionConsistency).toMatchObject({ n: 4, k: 4, rate: 1 });
    expect(tie.judgeAudit.agreement).toMatchObject({ n: decided, k: 0, rate: 0 });
    expect(tie.judgeAudit.kappa.value).toBeCloseTo(0, 12);
    expect(tie.judgeAudit.unreliable).toBe(true);
    expect(tie.refused?.arm).toBe('self');
    // Agrees with the grader: every decided pair right, kappa 1 (SE 0: no interval), every swap mirrored.
    expect(good.judgeAudit.agreement).toMatchObject({ n: decided, k: decided, rate: 1 });
    expect(good.judgeAudit.kappa).toEqual({ n: 15, value: 1, ci: null });
    expect(good.judgeAudit.positionConsistency).toMatchObject({ n: 4, k: 4, rate: 1 });
    expect(good.judgeAudit.unreliable).toBe(false);
    expect(Object.keys(good.exports).sort()).toEqual(['self', 'verifier']);
  });
});

describe('flowlab rsi: an unreliable self-judge trains no self arm unless allowed', () => {
  it('cycle 1: the self arm is refused with the audit\'s reasons, the verifier arm trains; the audit is stored per group', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'rsi-audit-'));
    dirs.push(dir);
    const base = path.join(dir, 'base.gguf');
    writeFileSync(base, 'base');
    const store = openStore(path.join(dir, 'f.db'));
    stores.push(store);
    const ds = createLearnDataset('learn-tool', ['tool']);
    const o: RsiOptions = {
      loopId: 'rsi-audit', outDir: path.join(dir, 'out'), cycles: 1, baseModel: base, design: null, outer: outer('x') as RsiOptions['outer'],
      thresholds: { maxQuarantinedShare: 1, minAgreement: 0 }, sft: { passes: 1, lr: 1e-3, batch: 8 }, heldoutSampling: { temperature: 0 }, heldoutSamples: 1,
    };
    const report = await runRsi({ store, trainer: fakeTrainer([]), makeProvider: async () => judgedBy(() => 'B'), family, trainTasks: ds.load({ split: 'train', limit: 1 }), heldoutTasks: ds.load({ split: 'heldout', limit: 2 }) }, o);
    const [c1] = report.cycles;
    const audit = c1!.groups[0]!.judgeAudit!;
    expect(audit).toMatchObject({ judge: 'self-judge (base.gguf)', pairs: 15, verdicts: { A: 0, B: 15, tie: 0 }, unreliable: true });
    expect(c1!.arms.self).toMatchObject({ refused: audit.reasons, trainedRuns: 0 });
    expect(c1!.arms.self!.versionId).toBeUndefined();
    expect(c1!.arms.verifier!.versionId).toBe('wv-rsi-audit-c1-verifier');
    expect(existsSync(path.join(dir, 'out', 'cycle-1', 'self'))).toBe(false);
    expect(storedJudgeAudits(store, 'rsi-audit')).toEqual([{ key: 'rsi-audit-c1-shared', audit }]);
  });
});

describe('flowlab evolve: the inner loop\'s judge audited from its records', () => {
  it('verdicts against the grader on the stored workspaces; no swap, so position consistency is n/a', () => {
    const ws = (runId: string, score: number) => ({ kind: 'workspace', value: { runId, score } });
    const verdict = (a: string, b: string) => ({ kind: 'verdict', value: { a, b, winner: 'B' } });
    // Scores r1 1, r2 0, r3 0: the grader says A (r1 > r2), tie (r2 = r3), B (r3 < r1); the judge says B, B, B.
    const a = evolutionAudit('self-judge (m.gguf)', [ws('r1', 1), ws('r2', 0), ws('r3', 0), verdict('r1', 'r2'), verdict('r2', 'r3'), verdict('r3', 'r1'), { kind: 'champion', value: {} }]);
    expect(a.verdicts).toEqual({ A: 0, B: 3, tie: 0 });
    expect(a.positionConsistency).toEqual({ n: 0, k: 0, rate: null, ci: null });
    expect(a.agreement).toMatchObject({ n: 2, k: 1, rate: 0.5 });
    // po = 1/3, pe = 1 x 1/3: kappa 0; SE = sqrt((1/3)(2/3) / (3 (2/3)²)) = 0.4082, interval +-0.8002.
    expect(a.kappa.value).toBeCloseTo(0, 12);
    expect(a.kappa.ci![1]).toBeCloseTo(0.8002, 4);
    // 3 pairs: under the 8 an audit needs, which is itself the reason (the kappa and position tests need 8).
    expect(a.reasons).toEqual(['only 3 pairs judged, fewer than 8: too few to audit the judge']);
    expect(a.unreliable).toBe(true);
  });
});

describe('flowlab evolve --audit-swaps: the inner loop\'s verdicts judged again with A and B swapped', () => {
  const tools = defaultTools();
  /** loop.fixture's SIMULATED team and optimizer with a judge that answers `winner` to every pair. */
  const constantJudge = (winner: 'A' | 'B' | 'tie') => {
    const base = loop.scripted();
    return new ScriptedProvider(async (r) => (r.key.nodeId === 'judge' ? JSON.stringify({ winner, rationale: `always ${winner}` }) : (await base.generate(r)).text));
  };
  const mirror = { A: 'B', B: 'A', tie: 'tie' } as const;
  const swapsOf = (store: Store, id: string) => store.mass.list(id, 'verdict-swap').map((r) => r.value as { index: number; first: 'A' | 'B' | 'tie'; swapped: 'A' | 'B' | 'tie'; a: string; b: string });

  it('a judge that prefers the better mark mirrors every swapped verdict: position consistency 4/4; the swaps replay without the model', async () => {
    const store = openStore(':memory:');
    stores.push(store);
    await evolve({ ...loop.spec('sw'), auditSwaps: 4 }, { store, provider: loop.scripted(), tools });
    const verdicts = store.mass.list('sw', 'verdict').map((r) => r.value as { a: string; b: string; winner: string });
    // 6 verdicts (inner.test.ts); 4 of them drawn by the audit's seeded sample, judged again with B shown as A.
    expect(verdicts).toHaveLength(6);
    const swaps = swapsOf(store, 'sw');
    expect(swaps.map((x) => x.index)).toEqual(auditSample(6, 4, deriveSeed(7, 'audit', 0)));
    for (const x of swaps) {
      expect(x.first).toBe(verdicts[x.index]!.winner);
      expect([x.a, x.b]).toEqual([verdicts[x.index]!.b, verdicts[x.index]!.a]);
      expect(x.swapped).toBe(mirror[x.first]);
    }
    expect((store.mass.get('sw', 'evolution', 'settings')!.value as { auditSwaps?: number }).auditSwaps).toBe(4);
    // 16 steps of the loop (inner.test.ts) + 4 swapped judge calls.
    expect(store.listExperiments().filter((x) => x.id.startsWith('sw.'))).toHaveLength(20);
    const a = evolutionAudit('self-judge (m.gguf)', store.mass.list('sw'));
    expect(a.positionConsistency).toMatchObject({ n: 4, k: 4, rate: 1 });
    const replay = await replayEvolution(store, 'sw', { family: loop.family, tools, providerFor: (id) => new ReplayProvider(store.getExperimentCalls(id)) });
    expect(replay.mismatches).toEqual([]);
    expect(replay.records).toBe(30 + 4);
  });

  it('a judge that always answers "B" mirrors none: position consistency 0/4, marked UNRELIABLE JUDGE', async () => {
    const store = openStore(':memory:');
    stores.push(store);
    await evolve({ ...loop.spec('b'), auditSwaps: 4 }, { store, provider: constantJudge('B'), tools });
    const swaps = swapsOf(store, 'b');
    expect(swaps.map((x) => `${x.first}>${x.swapped}`)).toEqual(['B>B', 'B>B', 'B>B', 'B>B']);
    const a = evolutionAudit('self-judge (m.gguf)', store.mass.list('b'));
    // Always B: verdicts B only; a swapped B should read A, so 0 of 4 mirror; Wilson 95% interval of 0/4 is [0, 0.490].
    expect(a.positionConsistency).toMatchObject({ n: 4, k: 0, rate: 0 });
    expect(a.positionConsistency.ci![1]).toBeCloseTo(0.4899, 3);
    expect(a.unreliable).toBe(true);
    expect(a.reasons.join('; ')).toMatch(/position consistency 0\.0% \(0\/4 swapped pairs mirrored\)/);
  });

  it('without auditSwaps nothing is judged twice and the settings stay as stored before the option existed', async () => {
    const store = openStore(':memory:');
    stores.push(store);
    await evolve(loop.spec('none'), { store, provider: loop.scripted(), tools });
    expect(swapsOf(store, 'none')).toEqual([]);
    expect('auditSwaps' in (store.mass.get('none', 'evolution', 'settings')!.value as object)).toBe(false);
    await expect(evolve({ ...loop.spec('neg'), auditSwaps: -1 }, { store, provider: loop.scripted(), tools })).rejects.toMatchObject({ code: 'BAD_OPTIONS' });
  });
});
