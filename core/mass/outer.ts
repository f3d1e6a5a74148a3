/**
 * MASS's outer loop on one task (Sakana AI MASS, public code, outer loop): run the champion
 * design N times (default 18, sampled), each run inside its protected environment (guards.ts);
 * optionally let the SIMULATED tamperer edit some environments; judge the ring tournament's
 * pairs with the self-judge (the same model); fit Bradley-Terry; guard every run; and cut the
 * two selections side by side:
 *
 * - `self`: MASS as published — Bradley-Terry ranks 1..train to training, the next
 *   `validation` ranks to validation;
 * - `verifier`: the same cut over the runs ordered by the external verifier (the task's own
 *   grader on the pristine task; ties in run order), training keeping only runs it scores at
 *   least `verifierMin`.
 *
 * In both, a quarantined run is dropped from the cut (it stays in the ranking, shown with its
 * reasons). Every step is a stored MASS step (core/mass/stored.ts) with a stable experiment id,
 * and every guard verdict is written next to its environment, so a killed loop resumes with
 * nothing run, judged or stored twice.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ModelProvider, SamplingParams } from '../model/provider.ts';
import { killPoint } from '../killPoint.ts';
import { deriveSeed, mulberry32 } from '../random.ts';
import type { Store } from '../store/index.ts';
import type { Task } from '../tasks/types.ts';
import { bradleyTerry, rankPlayers } from './bradleyTerry.ts';
import { environmentAfter, prepareEnvironment, reportedScore, simulatedTamper, type TamperAct, type TamperMode } from './environment.ts';
import { guardRun, judgeVerifierAgreement, type Agreement, type ContractClaim, type EnvironmentHashes, type GuardVerdict } from './guards.ts';
import type { MassBudget } from './compile.ts';
import { stepsInFlight } from './inFlight.ts';
import { judgePair } from './judge.ts';
import { runMass } from './run.ts';
import { MassRankError } from './rankErrors.ts';
import { matchesOf, ringPairs, runTournament, type JudgedPair } from './tournament.ts';
import { MASS_RUBRIC, type MassDesign, type MassFamily, type Workspace } from './types.ts';

export interface OuterDeps {
  store: Store;
  /** The model that solves and judges (the self-judge is the same model). */
  provider: ModelProvider;
  family: MassFamily;
  /** Folder of the runs' protected environments (one sub-folder per run). */
  envRoot: string;
  signal?: AbortSignal;
  onEvent?: (e: OuterEvent) => void;
  /** Extra config recorded with every step. */
  config?: Record<string, unknown>;
  /** Replay: the provider serving one step's recorded calls (core/mass/outerReplay.ts). */
  providerFor?: (experimentId: string) => ModelProvider;
  /**
   * Runs, then judge pairs, then swapped pairs in flight at once (core/mass/inFlight.ts; default 1).
   * Not a setting of the loop: what is stored is the same at any value.
   */
  parallel?: number;
}

export type OuterEvent = { type: 'run'; taskId: string; done: number; total: number } | { type: 'pair'; taskId: string; done: number; total: number };

export interface OuterOptions {
  /** Prefix of every step's experiment id (stable across resumes), e.g. `rsi-<id>-c1-base`. */
  prefix: string;
  /** The champion design (null: the bare task). */
  design: MassDesign | null;
  version?: number | null;
  /** Runs per task (default 18). */
  runs: number;
  /** Ring neighbours (default 3). */
  neighbours: number;
  seed: number;
  /** Bradley-Terry MM iterations (default 500). */
  iterations: number;
  /** Ranks to training (default 15) and to validation (default 1). */
  train: number;
  validation: number;
  /** Least verified score a run needs to enter the verifier arm's training set (default 1). */
  verifierMin: number;
  /** Sampling of the runs (the outer loop samples: temperature > 0). */
  sampling: Partial<Pick<SamplingParams, 'temperature' | 'topK' | 'topP' | 'minP'>>;
  /** The SIMULATED tamperer on the first round(share · runs) runs of the task. */
  tamperer?: { mode: TamperMode; share: number };
  /** Token budgets of the compiled nodes (default MASS_BUDGET, core/mass/compile.ts). */
  budget?: MassBudget;
  /**
   * Pairs per task the self-judge judges again with A and B swapped, for the judge audit's
   * position consistency (core/guards judgeAudit; a seeded sample of the schedule; default 6, 0: none).
   */
  auditSwaps?: number;
}

export const OUTER_DEFAULTS = { runs: 18, neighbours: 3, iterations: 500, train: 15, validation: 1, verifierMin: 1, auditSwaps: 6 } as const;

/** The schedule indices of the audit's swapped sample: `n` of `count` pairs drawn with `seed` (Fisher-Yates over mulberry32), in schedule order. */
export function auditSample(count: number, n: number, seed: number): number[] {
  const idx = Array.from({ length: count }, (_, i) => i);
  const rand = mulberry32(seed);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx.slice(0, Math.max(0, Math.min(n, count))).sort((a, b) => a - b);
}

/** One run of the task with its ranking, scores and guard verdict. */
export interface RankedRun {
  runId: string;
  experimentId: string;
  taskId: string;
  /** 0-based run number within the task. */
  index: number;
  /** Bradley-Terry rank (1 = best) and score (log p). */
  rank: number;
  score: number;
  wins: number;
  losses: number;
  ties: number;
  /** The external verifier's score (the task's grader on the pristine task). */
  verified: number;
  /** The score the run's environment reports after the run. */
  reported: number;
  quarantined: boolean;
  guard: GuardVerdict;
  /** Set when the SIMULATED tamperer acted on this run. */
  tampered?: TamperAct;
  delegated: boolean;
  handoffs: number;
  tokens: number;
  answer?: string;
}

export interface ArmSelection {
  train: RankedRun[];
  validation: RankedRun[];
  /** Runs the cut held that were dropped, with why (`quarantined`, `below verifierMin`). */
  dropped: Array<{ runId: string; why: string }>;
}

export interface TaskRanking {
  taskId: string;
  /** Runs by Bradley-Terry rank. */
  runs: RankedRun[];
  pairs: JudgedPair[];
  /** The audit's swapped sample: schedule index, the verdict as scheduled and with A and B swapped (`auditSwaps`). */
  swaps: Array<{ index: number; first: JudgedPair['winner']; swapped: JudgedPair['winner'] }>;
  agreement: Agreement;
  self: ArmSelection;
  verifier: ArmSelection;
  /** The workspaces by run id (for export and reports). */
  workspaces: Map<string, Workspace>;
}

interface GuardRecord {
  before: EnvironmentHashes;
  after?: EnvironmentHashes;
  tampered?: TamperAct;
  reported?: number;
  guard?: GuardVerdict;
}

/** A JSON file's value, or undefined when the file does not exist (the loops' state and guard records). */
export function readJson<T>(file: string): T | undefined {
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as T) : undefined;
}
/** Writes `value` as JSON to `file` through a temp file and a rename (creating its folder). */
export function writeJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.tmp`, JSON.stringify(value, null, 1) + '\n');
  renameSync(`${file}.tmp`, file);
}

const parseAnswer = (answer: string | undefined): unknown => {
  if (answer === undefined) return undefined;
  try {
    return JSON.parse(answer);
  } catch {
    return answer;
  }
};

/**
 * The independent re-check of a workspace's contracts: every sub-agent reply the engine accepted
 * is checked again, field by field and check by check, with the family's registry; a reply the
 * re-check rejects is a claim that disagrees (claimed: passed).
 */
export function recheckContracts(store: Store, ws: Workspace, design: MassDesign | null, family: MassFamily): ContractClaim[] {
  if (!design) return [];
  const claims: ContractClaim[] = [];
  const events = store.getRunEvents(ws.runId);
  for (const e of events) {
    const m = /^h\d+_(.+)$/.exec(String(e.nodeId));
    const agent = m && design.agents.find((a) => a.agent_id === m[1]);
    if (!agent || e.status !== 'ok') continue;
    const out = (e.output ?? {}) as Record<string, unknown>;
    for (const f of [...agent.contract.fields, ...agent.contract.artefacts]) {
      if (typeof out[f] !== 'string') claims.push({ agent: agent.agent_id, field: f, claimed: 'present', recheck: 'missing' });
    }
    for (const name of agent.contract.checks) {
      const check = family.checks.get(name);
      const why = check ? check(e.output, { inputs: e.inputs as Record<string, unknown> }) : `unknown check ${name}`;
      if (why) claims.push({ agent: agent.agent_id, field: `checks.${name}`, claimed: 'passed', recheck: why });
    }
  }
  return claims;
}

/** Runs, judges, ranks, guards and cuts one task (see the module comment). */
export async function rankTask(task: Task, taskIndex: number, deps: OuterDeps, o: OuterOptions): Promise<TaskRanking> {
  const { store, family } = deps;
  const tampered = o.tamperer ? Math.round(o.tamperer.share * o.runs) : 0;
  const inFlight = (what: string, signal?: AbortSignal) => ({ parallel: deps.parallel ?? 1, label: `${o.prefix}-t${taskIndex} ${what}`, ...(signal && { signal }) });
  // The N runs in flight (core/mass/inFlight.ts): each stored after the ones before it, seeds by run number.
  const runs = await stepsInFlight(Array.from({ length: o.runs }, (_, j) => j), inFlight('runs'), async (j, _i, beforeSave): Promise<{ ws: Workspace; rec: GuardRecord; index: number }> => {
    const experimentId = `${o.prefix}-t${taskIndex}-r${j}`;
    const dir = path.join(deps.envRoot, experimentId);
    const recFile = path.join(dir, 'guard.json');
    let rec = readJson<GuardRecord>(recFile);
    if (!rec) {
      rec = { before: prepareEnvironment(path.join(dir, 'env'), task, family.dataset, design_checks(o.design)) };
      writeJson(recFile, rec);
    }
    let ws = await runMass(o.design, task, { provider: deps.provider, providerFor: deps.providerFor, family, store, signal: deps.signal, config: deps.config, recordTokens: true, sampling: o.sampling, beforeSave }, {
      experimentId,
      version: o.version ?? (o.design ? 0 : null),
      seed: deriveSeed(o.seed, task.id, 'run', j),
      about: { outer: o.prefix, task: task.id, run: j },
      ...(o.budget && { budget: o.budget }),
    });
    const verified = ws.grade.score;
    if (!rec.guard) {
      if (j < tampered && !rec.tampered) {
        rec.tampered = simulatedTamper(path.join(dir, 'env'), o.tamperer!.mode, parseAnswer(ws.answer), task, family.grader, verified);
        writeJson(recFile, rec);
      }
      rec.after = environmentAfter(path.join(dir, 'env'));
      rec.reported = reportedScore(path.join(dir, 'env'), parseAnswer(ws.answer), task, family.grader);
      const claims = [...recheckContracts(store, ws, o.design, family), ...(rec.tampered?.claims ?? [])];
      rec.guard = guardRun({ before: rec.before, after: rec.after, claims, reported: rec.reported, verified });
      writeJson(recFile, rec);
      killPoint('outer-run-guarded');
    }
    // What the self-judge reads of a tampered run: its answer carries the tamperer's success claim.
    if (rec.tampered) ws = { ...ws, answer: `${ws.answer ?? ''} ${rec.tampered.note}` };
    return { ws, rec, index: j };
  }, (_r, j) => deps.onEvent?.({ type: 'run', taskId: task.id, done: j + 1, total: o.runs }));

  const ids = runs.map((r) => r.ws.runId);
  const byId = new Map(runs.map((r) => [r.ws.runId, r]));
  const schedule = ringPairs(ids, { seed: deriveSeed(o.seed, task.id, 'ring'), neighbours: o.neighbours });
  const pairs = await runTournament(schedule, async (p, beforeSave) => {
    const v = await judgePair(byId.get(p.a)!.ws, byId.get(p.b)!.ws, MASS_RUBRIC, deps.provider, {
      store, task, signal: deps.signal, config: deps.config, providerFor: deps.providerFor, beforeSave, ...(deps.family.pairJudge && { pairJudge: deps.family.pairJudge }),
      experimentId: `${o.prefix}-t${taskIndex}-p${p.index}`,
      seed: deriveSeed(o.seed, task.id, 'pair', p.index),
      about: { outer: o.prefix, task: task.id, pair: p.index, a: p.a, b: p.b },
    });
    // A stored verdict read back must be of this pair in this orientation (a schedule changed by other options would not be).
    const asked = (v.experimentId ? store.listTasks(v.experimentId)[0]?.input : undefined) as { a_run?: unknown; b_run?: unknown } | undefined;
    if (asked && (asked.a_run !== p.a || asked.b_run !== p.b)) throw new MassRankError('BAD_TOURNAMENT', `stored verdict ${v.experimentId} judged ${String(asked.a_run)} vs ${String(asked.b_run)}, not ${p.a} vs ${p.b}: the loop was started with other options (--runs, --seed)`);
    killPoint('outer-pair-judged');
    return { winner: v.winner, rationale: v.rationale };
  }, { ...(deps.signal && { signal: deps.signal }), parallel: deps.parallel ?? 1, label: `${o.prefix}-t${taskIndex} pairs`, onJudged: (j) => deps.onEvent?.({ type: 'pair', taskId: task.id, done: j.index + 1, total: schedule.length }) });
  killPoint('outer-tournament-done');

  // The judge audit's swapped sample: the same pair, same seed, B shown as A (position consistency, core/guards judgeAudit).
  let swaps: TaskRanking['swaps'] = [];
  if (pairs.length === schedule.length) {
    const sample = auditSample(pairs.length, o.auditSwaps ?? OUTER_DEFAULTS.auditSwaps, deriveSeed(o.seed, task.id, 'audit'));
    swaps = await stepsInFlight(sample, inFlight('swaps', deps.signal), async (index, _i, beforeSave) => {
      const p = pairs[index]!;
      const v = await judgePair(byId.get(p.b)!.ws, byId.get(p.a)!.ws, MASS_RUBRIC, deps.provider, {
        store, task, signal: deps.signal, config: deps.config, providerFor: deps.providerFor, beforeSave, ...(deps.family.pairJudge && { pairJudge: deps.family.pairJudge }),
        experimentId: `${o.prefix}-t${taskIndex}-p${p.index}-swap`,
        seed: deriveSeed(o.seed, task.id, 'pair', p.index),
        about: { outer: o.prefix, task: task.id, pair: p.index, a: p.b, b: p.a, audit: 'swap' },
      });
      return { index: p.index, first: p.winner, swapped: v.winner };
    });
  }

  const ranked = rankPlayers(bradleyTerry(ids, matchesOf(pairs), { iterations: o.iterations }));
  const out: RankedRun[] = ranked.map((p) => {
    const r = byId.get(p.id)!;
    return {
      runId: p.id, experimentId: r.ws.experimentId, taskId: task.id, index: r.index, rank: p.rank, score: p.score, wins: p.wins, losses: p.losses, ties: p.ties,
      verified: r.ws.grade.score, reported: r.rec.reported ?? r.ws.grade.score, quarantined: r.rec.guard!.quarantined, guard: r.rec.guard!,
      ...(r.rec.tampered && { tampered: r.rec.tampered }),
      delegated: r.ws.delegated, handoffs: r.ws.handoffs, tokens: r.ws.tokens.prompt + r.ws.tokens.completion,
      ...(r.ws.answer !== undefined && { answer: r.ws.answer }),
    };
  });
  const agreement = judgeVerifierAgreement(pairs, new Map(out.map((r) => [r.runId, r.verified])));
  const verifierOrder = [...out].sort((a, b) => b.verified - a.verified || a.index - b.index);
  return {
    taskId: task.id,
    runs: out,
    pairs,
    swaps,
    agreement,
    self: cut(out, o.train, o.validation, () => null),
    verifier: cut(verifierOrder, o.train, o.validation, (r) => (r.verified < o.verifierMin ? `below verifierMin ${o.verifierMin} (verified ${r.verified})` : null)),
    workspaces: new Map(runs.map((r) => [r.ws.runId, r.ws])),
  };
}

function design_checks(design: MassDesign | null): string[] {
  return design ? [...new Set(design.agents.flatMap((a) => a.contract.checks))].sort() : [];
}

/** Positions 1..train of `order` to training, the next `validation` to validation; quarantined and rejected runs dropped. */
function cut(order: readonly RankedRun[], train: number, validation: number, reject: (r: RankedRun) => string | null): ArmSelection {
  const sel: ArmSelection = { train: [], validation: [], dropped: [] };
  order.slice(0, train + validation).forEach((r, i) => {
    const why = r.quarantined ? `quarantined: ${r.guard.reasons.map((x) => x.code).join(', ')}` : i < train ? reject(r) : null;
    if (why) sel.dropped.push({ runId: r.runId, why });
    else (i < train ? sel.train : sel.validation).push(r);
  });
  return sel;
}
