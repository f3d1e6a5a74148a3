/**
 * The outer loop's records in the store (`mass_records`, core/store/mass.ts), for the lab's views:
 * per task, the Bradley-Terry ranking with its train/validation cut (the self-judge arm's
 * selection, core/mass/outer.ts); the guard's quarantine with each reason (core/mass/guards.ts);
 * and per cycle and arm, the held-out comparison with the base (core/mass/rsi.ts). `flowlab rank`
 * writes under its prefix, `flowlab rsi` under its loop id. Records are written once and only
 * when absent, so a resumed loop leaves them as they are. Pure: the store is passed in.
 */
import type { JudgeAudit } from '../guards/index.ts';
import type { BootstrapCI, SignTest } from '../stats/index.ts';
import type { MassRecord } from '../store/mass.ts';
import type { Store } from '../store/index.ts';
import { describeReason, type Agreement } from './guards.ts';
import type { RankedRun, TaskRanking } from './outer.ts';
import { MassError } from './errors.ts';

export const OUTER_RANKING = 'outer-ranking';
export const OUTER_CYCLE = 'outer-cycle';
export const OUTER_BASE = 'outer-base';
export const OUTER_HALT = 'outer-halt';

/**
 * The parts of rsi.ts's `CycleReport` and `HaltReport` read here (declared here: rsi.ts writes
 * through this module, so importing its types back would be a cycle). The whole report is stored.
 */
export interface CycleRecord {
  cycle: number;
  arms: Partial<Record<string, {
    arm: string; model: string; versionId?: string; trainedRuns: number;
    heldout?: { pairs: number; base: number; arm: number; sign?: SignTest; ci?: BootstrapCI; verifierWinRate: number; selfJudgeWinRate: number; agreement: Agreement; delegated: number; handoffs: number };
  }>>;
}
export interface HaltRecord {
  /** The cycle that halted (`flowlab rsi`), or null: a `flowlab rank` loop halted before its export. */
  cycle: number | null;
  reasons: string[];
}

/** Where a run landed: the self-judge arm's training or validation set, dropped from the cut (with why), or left out. */
export type OuterCut = 'train' | 'validation' | 'dropped' | 'out';

/** One ranked run as the views show it: the tournament's fields of `RankedRun` (outer.ts) plus its place in the cut. */
export interface OuterRunRow extends Pick<RankedRun, 'rank' | 'score' | 'wins' | 'losses' | 'ties' | 'verified'> {
  runId: string;
  quarantined: boolean;
  /** The SIMULATED tamperer acted on this run. */
  tampered: boolean;
  delegated: boolean;
  cut: OuterCut;
  /** Why the run was dropped from the cut (`quarantined`, `below verifierMin`). */
  dropped?: string;
  /** The guard's reasons, as core/mass/guards.ts `describeReason` words them. */
  reasons: string[];
}

export interface OuterTaskRanking {
  /** The step prefix the ranking ran under (one per cycle and group of arms in rsi). */
  prefix: string;
  cycle: number | null;
  taskId: string;
  /** Ranks to training and to validation. */
  train: number;
  validation: number;
  agreement: Agreement;
  runs: OuterRunRow[];
}

export interface OuterQuarantine {
  prefix: string;
  taskId: string;
  runId: string;
  rank: number;
  tampered: boolean;
  reasons: string[];
}

/** One arm in one cycle, against the base on the held-out tasks (null fields: not measured). */
export interface OuterCycleArm {
  cycle: number;
  arm: string;
  model: string;
  versionId?: string;
  trainedRuns: number;
  pairs: number;
  /** Mean external-verifier score of the base and of the arm on the held-out tasks. */
  baseScore: number | null;
  armScore: number | null;
  /**
   * The paired held-out test `flowlab rsi` prints (core/mass/rsi.ts, core/stats): the 95%
   * percentile-bootstrap interval of the mean arm − base difference and the exact sign test, as
   * stored with the cycle; null when the arm had no held-out evaluation.
   */
  ci: BootstrapCI | null;
  sign: SignTest | null;
  verifierWinRate: number | null;
  selfJudgeWinRate: number | null;
  /** Judge-verifier agreement rate on the held-out pairs. */
  agreement: number | null;
  delegated: number | null;
  handoffs: number | null;
}

export interface OuterLoopSummary {
  loopId: string;
  tasks: number;
  cycles: number;
  halted: boolean;
}

export interface OuterLoopView {
  loopId: string;
  rankings: OuterTaskRanking[];
  quarantine: OuterQuarantine[];
  cycles: OuterCycleArm[];
  baseHeldoutScore: number | null;
  halted: { cycle: number | null; reasons: string[] } | null;
  /** The self-judge's audit per ranking prefix (core/guards judgeAudit; records `judge-audit`), oldest first. */
  judgeAudits: Array<{ prefix: string; audit: JudgeAudit }>;
}

function putOnce(store: Store, rec: MassRecord): void {
  if (!store.mass.get(rec.evolutionId, rec.kind, rec.key)) store.mass.put(rec);
}

/** The JSON-safe record value of one task's ranking (the workspaces left out). */
export function rankingRecord(r: TaskRanking, prefix: string, cycle: number | null, cut: { train: number; validation: number }): OuterTaskRanking {
  const train = new Set(r.self.train.map((x) => x.runId));
  const validation = new Set(r.self.validation.map((x) => x.runId));
  const dropped = new Map(r.self.dropped.map((d) => [d.runId, d.why]));
  return {
    prefix, cycle, taskId: r.taskId, train: cut.train, validation: cut.validation, agreement: r.agreement,
    runs: r.runs.map((x) => ({
      runId: x.runId, rank: x.rank, score: x.score, wins: x.wins, losses: x.losses, ties: x.ties, verified: x.verified,
      quarantined: x.quarantined, tampered: !!x.tampered, delegated: x.delegated,
      cut: train.has(x.runId) ? 'train' : validation.has(x.runId) ? 'validation' : dropped.has(x.runId) ? 'dropped' : 'out',
      ...(dropped.has(x.runId) && { dropped: dropped.get(x.runId)! }),
      reasons: x.guard.reasons.map(describeReason),
    })),
  };
}

/** Stores each task's ranking under `loopId` (key `<prefix>/<taskId>`), once. */
export function storeRankings(store: Store, loopId: string, prefix: string, cycle: number | null, rankings: readonly TaskRanking[], cut: { train: number; validation: number }): void {
  for (const r of rankings) putOnce(store, { evolutionId: loopId, kind: OUTER_RANKING, key: `${prefix}/${r.taskId}`, value: rankingRecord(r, prefix, cycle, cut) });
}

/** Stores a finished cycle's report (key `c<n>`), the base's held-out score and a halt, once each. */
export function storeCycle(store: Store, loopId: string, cycle: CycleRecord): void {
  putOnce(store, { evolutionId: loopId, kind: OUTER_CYCLE, key: `c${cycle.cycle}`, value: cycle });
}
export function storeBase(store: Store, loopId: string, base: { model: string; heldoutScore: number | null }): void {
  putOnce(store, { evolutionId: loopId, kind: OUTER_BASE, key: 'base', value: base });
}
export function storeHalt(store: Store, loopId: string, halt: HaltRecord): void {
  putOnce(store, { evolutionId: loopId, kind: OUTER_HALT, key: 'halt', value: halt });
}

/** The stored outer loops (those with ranking records), oldest first. */
export function outerLoopsOf(store: Store): OuterLoopSummary[] {
  return store.mass.evolutions().flatMap((id) => {
    const recs = store.mass.list(id).filter((r) => r.kind.startsWith('outer-'));
    const rankings = recs.filter((r) => r.kind === OUTER_RANKING);
    if (!rankings.length) return [];
    return [{ loopId: id, tasks: new Set(rankings.map((r) => (r.value as OuterTaskRanking).taskId)).size, cycles: recs.filter((r) => r.kind === OUTER_CYCLE).length, halted: recs.some((r) => r.kind === OUTER_HALT) }];
  });
}

/** One outer loop's rankings, quarantine and cycle-over-cycle comparison. Errors: MassError `NOT_FOUND`. */
export function outerLoopOf(loopId: string, records: readonly MassRecord[]): OuterLoopView {
  const rankings = records.filter((r) => r.kind === OUTER_RANKING).map((r) => r.value as OuterTaskRanking);
  if (!rankings.length) throw new MassError('NOT_FOUND', `no outer loop ${loopId} in the store`);
  const quarantine = rankings.flatMap((t) => t.runs.filter((x) => x.quarantined).map((x) => ({ prefix: t.prefix, taskId: t.taskId, runId: x.runId, rank: x.rank, tampered: x.tampered, reasons: x.reasons })));
  const cycles = records.filter((r) => r.kind === OUTER_CYCLE).map((r) => r.value as CycleRecord).sort((a, b) => a.cycle - b.cycle).flatMap((c) =>
    Object.values(c.arms).flatMap((a) => (a ? [{
      cycle: c.cycle, arm: a.arm, model: a.model, ...(a.versionId && { versionId: a.versionId }), trainedRuns: a.trainedRuns,
      pairs: a.heldout?.pairs ?? 0, baseScore: a.heldout?.base ?? null, armScore: a.heldout?.arm ?? null, ci: a.heldout?.ci ?? null, sign: a.heldout?.sign ?? null,
      verifierWinRate: a.heldout?.verifierWinRate ?? null, selfJudgeWinRate: a.heldout?.selfJudgeWinRate ?? null,
      agreement: a.heldout?.agreement.rate ?? null, delegated: a.heldout?.delegated ?? null, handoffs: a.heldout?.handoffs ?? null,
    }] : [])));
  const base = records.find((r) => r.kind === OUTER_BASE)?.value as { heldoutScore: number | null } | undefined;
  const halt = records.find((r) => r.kind === OUTER_HALT)?.value as HaltRecord | undefined;
  const judgeAudits = records.filter((r) => r.kind === 'judge-audit').map((r) => ({ prefix: r.key, audit: r.value as JudgeAudit }));
  return { loopId, rankings, quarantine, cycles, baseHeldoutScore: base?.heldoutScore ?? null, halted: halt ? { cycle: halt.cycle, reasons: halt.reasons } : null, judgeAudits };
}
