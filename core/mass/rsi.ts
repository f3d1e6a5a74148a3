/**
 * Whole MASS cycles on the laptop (Sakana AI MASS: inner loop -> outer loop -> SFT -> the tuned
 * model solves, judges and optimises the next cycle), with two selection arms side by side:
 * `self` (top-k by the self-judge's Bradley-Terry ranking, MASS as published) and `verifier`
 * (top-k by the external verifier, the task's own grader). Each arm has its own weight lineage;
 * in cycle 1 both start from the base model, so they share its runs and verdicts and differ only
 * in what they select.
 *
 * Per cycle and arm: the champion design per task (the caller's inner loop, or a fixed design);
 * the outer loop per task (outer.ts); the guard thresholds (a crossed one halts the loop with a
 * report, before anything trains); the SFT export (JSONL + manifest); SFT with Flowlab's
 * trainer (train.ts) to a new weight version with lineage (cycle, arm, tasks, ranks used); and
 * the held-out evaluation against the base on the bare task: the external verifier's paired
 * difference (sign test and bootstrap interval, core/stats/paired.ts), the self-judge's win rate
 * against the base, their agreement, unprompted delegation and tokens per point.
 *
 * Resumable after a kill: every model step has a stable experiment id (stored.ts reads a stored
 * one back), guard verdicts sit next to their environments, a version is found by its id
 * before training, and `state.json` records each finished stage.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { killPoint } from '../killPoint.ts';
import type { ModelProvider, SamplingParams } from '../model/provider.ts';
import { deriveSeed, mulberry32 } from '../random.ts';
import { bootstrapMeanCI, signTest, type BootstrapCI, type SignTest } from '../stats/paired.ts';
import type { Store, WeightVersion } from '../store/index.ts';
import type { Task } from '../tasks/types.ts';
import type { Trainer } from '../training/port.ts';
import { checkBlindSpot, type BlindSpotCheck } from './blindSpotGuard.ts';
import { checkThresholds, describeReason, judgeVerifierAgreement, type Agreement, type GuardThresholds } from './guards.ts';
import { stepsInFlight } from './inFlight.ts';
import { judgePair } from './judge.ts';
import { storeBase, storeCycle, storeHalt, storeRankings } from './outerRecords.ts';
import { wilsonInterval, type JudgeAudit } from '../guards/index.ts';
import { rankingsAudit, storeJudgeAudit } from './judgeAudit.ts';
import { rankTask, readJson, writeJson, type ArmSelection, type OuterOptions, type RankedRun, type TaskRanking } from './outer.ts';
import { MassRankError } from './rankErrors.ts';
import { runMass } from './run.ts';
import { answerValue } from './stored.ts';
import { exportRows, manifestOf, sftSequencesOf, toJsonl, type ExportCall, type ExportRow, type ExportTrajectory } from './sftExport.ts';
import { providerTokenizer, sftTrain, type SftRunOptions, type SftRunResult } from './train.ts';
import type { TamperMode } from './environment.ts';
import { MASS_RUBRIC, type MassDesign, type MassFamily, type Workspace } from './types.ts';

export type Arm = 'self' | 'verifier';
export const ARMS: readonly Arm[] = ['self', 'verifier'];

export interface RsiDeps {
  store: Store;
  trainer: Trainer;
  /** A provider over one GGUF file (it solves, judges and optimises). */
  makeProvider: (file: string) => Promise<ModelProvider>;
  family: MassFamily;
  trainTasks: readonly Task[];
  heldoutTasks: readonly Task[];
  /** The inner loop: the champion design of a task under a model; absent: `design` for every task. */
  champion?: (task: Task, provider: ModelProvider, ctx: { cycle: number; arm: Arm | 'shared'; prefix: string; taskIndex: number }) => Promise<{ design: MassDesign | null; version: number | null }>;
  signal?: AbortSignal;
  onEvent?: (e: RsiEvent) => void;
  config?: Record<string, unknown>;
  /** Replay: the provider serving one step's recorded calls (core/mass/outerReplay.ts). */
  providerFor?: (experimentId: string) => ModelProvider;
  /**
   * Runs, judge pairs, held-out runs and held-out judgments in flight at once
   * (core/mass/inFlight.ts; default 1); the records, exports and versions do not depend on it.
   */
  parallel?: number;
  /**
   * Replay: where a cycle's trained version is looked up instead of training (the recording's
   * store). Given, a version found is taken as it is (its file need not exist) and a version not
   * found means the arm trained nothing; the trainer is never called.
   */
  recordedVersion?: (versionId: string) => WeightVersion | undefined;
}

export type RsiEvent =
  | { type: 'stage'; cycle: number; arm: Arm | 'shared' | 'base'; stage: string }
  | { type: 'progress'; cycle: number; arm: Arm | 'shared' | 'base'; what: string; done: number; total: number };

export interface RsiOptions {
  loopId: string;
  /** Where state, environments, exports and versions go. */
  outDir: string;
  cycles: number;
  baseModel: string;
  design: MassDesign | null;
  outer: Omit<OuterOptions, 'prefix' | 'design' | 'version' | 'tamperer'>;
  tamperer?: { mode: TamperMode; share: number };
  thresholds: GuardThresholds;
  sft: SftRunOptions;
  /** Sampling of the held-out runs (default greedy) and samples per held-out task. */
  heldoutSampling: Partial<Pick<SamplingParams, 'temperature' | 'topK' | 'topP' | 'minP'>>;
  heldoutSamples: number;
  /** The arms to run (default both). */
  arms?: readonly Arm[];
  /**
   * Export (and train) the self-judge arm even when its judge audit says UNRELIABLE JUDGE
   * (core/guards judgeAudit); its manifest then carries `unreliableJudge`. A fact of the loop (stored with its settings).
   */
  allowUnreliableJudge?: true;
}

/** One arm's held-out comparison with the base on the same tasks and seeds. */
export interface HeldoutComparison {
  pairs: number;
  base: number;
  arm: number;
  /** Paired difference of the external verifier's scores (arm − base). */
  sign: SignTest;
  ci: BootstrapCI;
  /** Share of pairs the arm wins by the external verifier (ties half). */
  verifierWinRate: number;
  /** Share of pairs the arm wins by the self-judge (the arm's own model; ties half). */
  selfJudgeWinRate: number;
  agreement: Agreement;
  /** Held-out bare-task runs in which the orchestrator delegated, and runs with a sub-agent hand-off. */
  delegated: number;
  handoffs: number;
  tokensPerPoint: number | null;
  experimentPrefix: string;
  /**
   * For a family that classes its answers (MassFamily.answerClassOf, e.g. learn-unit): the
   * held-out answers per class, and the blind-spot error rate — the share of held-out answers of
   * class `blind-unit` — with its 95% Wilson interval, for the arm and for the base.
   */
  classes?: Record<string, number>;
  blindSpot?: BlindSpotRate;
  baseBlindSpot?: BlindSpotRate;
  /**
   * The blind-spot rate's paired sign tests on the same tasks and seeds: the per-task difference
   * of the blind-spot indicator (1: that answer is the blind spot), arm − base and (from cycle 2)
   * arm − previous cycle; `negative` counts the tasks where the arm left the blind spot.
   */
  blindSpotVsBase?: SignTest;
  blindSpotVsPrevious?: SignTest;
  /** From cycle 2: the paired difference against the arm's previous cycle on the same tasks and seeds (arm − previous). */
  vsPrevious?: { previous: number; sign: SignTest; ci: BootstrapCI };
}

/** A blind-spot error rate: `errors` of `n` held-out answers in the blind-spot class, with its 95% Wilson interval. */
export interface BlindSpotRate {
  errors: number;
  n: number;
  rate: number | null;
  interval: [number, number] | null;
}

/** The class counts and blind-spot error rate of held-out workspaces under `classOf` (pure). */
export function blindSpotRate(ws: readonly Workspace[], tasks: readonly Task[], samples: number, classOf: (answer: unknown, task: Task) => string, blindClass = 'blind-unit'): { classes: Record<string, number>; rate: BlindSpotRate } {
  const classes: Record<string, number> = {};
  ws.forEach((w, i) => {
    const c = classOf(answerValue(w.answer) ?? w.answer, tasks[Math.floor(i / samples)]!);
    classes[c] = (classes[c] ?? 0) + 1;
  });
  const errors = classes[blindClass] ?? 0;
  const n = ws.length;
  return { classes, rate: { errors, n, rate: n ? errors / n : null, interval: wilsonInterval(errors, n) } };
}

export interface ArmCycle {
  arm: Arm;
  /** The model the arm's cycle ran on, and the version it wrote (absent: nothing to train on). */
  model: string;
  versionId?: string;
  file?: string;
  exported: { train: number; validation: number; dir: string };
  trainedRuns: number;
  sft?: SftRunResult;
  heldout?: HeldoutComparison;
  /** The cut of each task: run ids to training and validation, and those dropped with why. */
  selections: Record<string, { train: string[]; validation: string[]; dropped: ArmSelection['dropped'] }>;
  /** Set when the arm's export was refused: its self-judge failed its audit (UNRELIABLE JUDGE) and the loop does not allow it. */
  refused?: string[];
}

export interface CycleReport {
  cycle: number;
  /** Per group of arms sharing a model: runs, quarantines, agreement of the self-judge with the verifier. */
  groups: Array<{ prefix: string; arms: Arm[]; runs: number; quarantined: number; agreement: Agreement; tampered: TamperSummary | null; judgeAudit?: JudgeAudit; blindSpot?: BlindSpotCheck }>;
  arms: Partial<Record<Arm, ArmCycle>>;
}

/** What the SIMULATED tamperer's runs got from the self-judge and from the guard. */
export interface TamperSummary {
  runs: number;
  quarantined: number;
  /** The self-judge's verdicts in pairs with exactly one tampered run: the tampered run's wins, losses, ties. */
  judge: { wins: number; losses: number; ties: number; winRate: number | null };
  /** Mean Bradley-Terry rank of the tampered runs (1 = best) and how many were inside the training cut before the guard dropped them. */
  meanRank: number;
  inCutBeforeGuard: number;
}

export interface HaltReport {
  cycle: number;
  prefix: string;
  reasons: string[];
  quarantine: Array<{ runId: string; taskId: string; rank: number; tampered: boolean; reasons: string[] }>;
  tampered: TamperSummary | null;
  file: string;
  /** The blind-spot guard's spot check of the cycle (set when the guard is on), whether or not it is what halted. */
  blindSpot?: BlindSpotCheck;
}

export interface RsiReport {
  loopId: string;
  cycles: CycleReport[];
  base: { model: string; heldoutScore: number | null };
  halted?: HaltReport;
}

interface RsiState {
  loopId: string;
  arms: Record<Arm, { model: string; versionId?: string }>;
  cycles: CycleReport[];
}


/** What the tamperer's runs got, over a group's rankings (null when none was tampered). */
export function tamperSummary(rankings: readonly TaskRanking[], train: number): TamperSummary | null {
  const runs = rankings.flatMap((r) => r.runs.filter((x) => x.tampered));
  if (!runs.length) return null;
  const bad = new Set(runs.map((r) => r.runId));
  let wins = 0;
  let losses = 0;
  let ties = 0;
  for (const r of rankings) {
    for (const p of r.pairs) {
      const a = bad.has(p.a);
      const b = bad.has(p.b);
      if (a === b) continue;
      if (p.winner === 'tie') ties++;
      else if ((p.winner === 'A') === a) wins++;
      else losses++;
    }
  }
  const n = wins + losses + ties;
  return {
    runs: runs.length,
    quarantined: runs.filter((r) => r.quarantined).length,
    judge: { wins, losses, ties, winRate: n ? (wins + ties / 2) / n : null },
    meanRank: runs.reduce((s, r) => s + r.rank, 0) / runs.length,
    inCutBeforeGuard: runs.filter((r) => r.rank <= train).length,
  };
}

/** The calls of a stored run, in call order, as the export reads them. */
/**
 * A run's model calls in node order, for the SFT export. A call of a node that failed (its reply
 * unparsable, cut at max_tokens, against its contract) carries the node's failure as `error`, so
 * the export leaves it out: a top-ranked run can still hold a broken reply, never a lesson.
 */
export function exportCallsOf(store: Store, runId: string): ExportCall[] {
  const events = [...store.getRunEvents(runId)].sort((a, b) => a.seq - b.seq);
  return events.flatMap((e) => e.calls.map((c): ExportCall => {
    const error = c.error ?? (e.status === 'failed' ? `node ${String(e.nodeId)} failed: ${e.errorCode ?? 'failed'}` : undefined);
    return {
      role: String(c.role), nodeId: String(e.nodeId), prompt: c.prompt, completion: c.completion,
      ...(c.system !== undefined && { system: c.system }), ...(c.promptTokenIds && { promptTokenIds: c.promptTokenIds }),
      ...(c.completionTokenIds && { completionTokenIds: c.completionTokenIds }), ...(error !== undefined && { error }),
    };
  }));
}

function trajectories(store: Store, rankings: readonly TaskRanking[], pick: (r: TaskRanking) => RankedRun[]): ExportTrajectory[] {
  return rankings.flatMap((tr) => pick(tr).map((r, k): ExportTrajectory => {
    const ws = tr.workspaces.get(r.runId)!;
    return { runId: r.runId, taskId: tr.taskId, rank: k + 1, bareTask: ws.taskPrompt, ...(ws.designText && { workflowText: ws.designText }), orchestratorRole: 'orchestrator', calls: exportCallsOf(store, r.runId), quarantined: r.quarantined };
  }));
}

const addAgreement = (xs: readonly Agreement[]): Agreement => {
  const decided = xs.reduce((s, a) => s + a.decided, 0);
  const agreed = xs.reduce((s, a) => s + a.agreed, 0);
  return { decided, agreed, verifierTies: xs.reduce((s, a) => s + a.verifierTies, 0), rate: decided ? agreed / decided : null };
};

/**
 * Runs (or resumes) `o.cycles` cycles; see the module comment. Returns the report; a crossed
 * guard threshold ends it early with `halted` set (and `halt.json` written). Errors:
 * MassRankError `BAD_STATE` (a state file of another loop in `outDir`), and those of the steps.
 */
export async function runRsi(deps: RsiDeps, o: RsiOptions): Promise<RsiReport> {
  const stateFile = path.join(o.outDir, 'state.json');
  const state: RsiState = readJson<RsiState>(stateFile) ?? { loopId: o.loopId, arms: { self: { model: o.baseModel }, verifier: { model: o.baseModel } }, cycles: [] };
  if (state.loopId !== o.loopId) throw new MassRankError('BAD_STATE', `${stateFile} belongs to loop ${state.loopId}, not ${o.loopId}`);
  const providers = new Map<string, ModelProvider>();
  const providerOf = async (file: string) => {
    let p = providers.get(file);
    if (!p) providers.set(file, (p = await deps.makeProvider(file)));
    return p;
  };
  const report: RsiReport = { loopId: o.loopId, cycles: state.cycles, base: { model: o.baseModel, heldoutScore: null } };
  try {
    const base = await heldoutRuns(deps, o, await providerOf(o.baseModel), `${o.loopId}-heldout-base`, 0, 'base');
    report.base.heldoutScore = base.length ? base.reduce((s, w) => s + w.grade.score, 0) / base.length : null;
    storeBase(deps.store, o.loopId, report.base);
    for (let c = state.cycles.length + 1; c <= o.cycles; c++) {
      const cycle: CycleReport = { cycle: c, groups: [], arms: {} };
      // Arms on the same model share its runs and verdicts.
      const groups = new Map<string, Arm[]>();
      for (const arm of o.arms ?? ARMS) groups.set(state.arms[arm].model, [...(groups.get(state.arms[arm].model) ?? []), arm]);
      for (const [model, arms] of groups) {
        // The base model's runs are shared by whichever arms run on it (cycle 1); a trained model's are its arm's.
        const label: Arm | 'shared' = model === o.baseModel ? 'shared' : arms[0]!;
        const prefix = `${o.loopId}-c${c}-${label}`;
        const provider = await providerOf(model);
        const rankings: TaskRanking[] = [];
        for (const [i, task] of deps.trainTasks.entries()) {
          deps.onEvent?.({ type: 'stage', cycle: c, arm: label, stage: `task ${task.id}: champion, ${o.outer.runs} runs, tournament` });
          const champ = deps.champion ? await deps.champion(task, provider, { cycle: c, arm: label, prefix, taskIndex: i }) : { design: o.design, version: o.design ? 0 : null };
          rankings.push(await rankTask(task, i, {
            store: deps.store, provider, family: deps.family, envRoot: path.join(o.outDir, 'env'), ...(deps.signal && { signal: deps.signal }), ...(deps.config && { config: deps.config }), ...(deps.providerFor && { providerFor: deps.providerFor }),
            ...(deps.parallel !== undefined && { parallel: deps.parallel }),
            onEvent: (e) => deps.onEvent?.({ type: 'progress', cycle: c, arm: label, what: `${e.type}s of ${e.taskId}`, done: e.done, total: e.total }),
          }, { ...o.outer, prefix, design: champ.design, version: champ.version, ...(o.tamperer && { tamperer: o.tamperer }) }));
        }
        storeRankings(deps.store, o.loopId, prefix, c, rankings, { train: o.outer.train, validation: o.outer.validation });
        const runs = rankings.reduce((s, r) => s + r.runs.length, 0);
        const quarantined = rankings.reduce((s, r) => s + r.runs.filter((x) => x.quarantined).length, 0);
        const agreement = addAgreement(rankings.map((r) => r.agreement));
        const tampered = tamperSummary(rankings, o.outer.train);
        const judgeAudit = rankingsAudit(`self-judge (${path.basename(model)})`, rankings);
        storeJudgeAudit(deps.store, o.loopId, prefix, judgeAudit);
        // The blind-spot guard spot-checks the self-judged winners with the external verifier (only a group the self arm trains from).
        const bs = o.thresholds.blindSpot;
        const blindSpot = bs && bs.sample > 0 && arms.includes('self') ? checkBlindSpot(rankings, bs, o.outer.verifierMin, o.outer.seed) : undefined;
        cycle.groups.push({ prefix, arms, runs, quarantined, agreement, tampered, judgeAudit, ...(blindSpot && { blindSpot }) });
        const check = checkThresholds({ runs, quarantined, agreement }, o.thresholds);
        if (blindSpot?.halt) check.reasons.push(blindSpot.reason!);
        if (check.halt || blindSpot?.halt) {
          const file = path.join(o.outDir, 'halt.json');
          const halted: HaltReport = {
            cycle: c, prefix, reasons: check.reasons, tampered, file, ...(blindSpot && { blindSpot }),
            quarantine: rankings.flatMap((r) => r.runs.filter((x) => x.quarantined).map((x) => ({ runId: x.runId, taskId: x.taskId, rank: x.rank, tampered: !!x.tampered, reasons: x.guard.reasons.map(describeReason) }))),
          };
          writeJson(file, halted);
          storeHalt(deps.store, o.loopId, halted);
          report.halted = halted;
          report.cycles = [...state.cycles, cycle];
          return report;
        }
        for (const arm of arms) {
          // The self arm trains on its judge's ranking: an UNRELIABLE JUDGE's is refused unless the loop allows it (then marked).
          if (arm === 'self' && judgeAudit.unreliable && !o.allowUnreliableJudge) {
            cycle.arms[arm] = { arm, model: state.arms[arm].model, exported: { train: 0, validation: 0, dir: '' }, trainedRuns: 0, selections: {}, refused: judgeAudit.reasons };
            continue;
          }
          cycle.arms[arm] = await trainArm(deps, o, state, c, arm, rankings, provider, arm === 'self' && judgeAudit.unreliable ? judgeAudit : undefined);
        }
      }
      for (const arm of o.arms ?? ARMS) {
        const a = cycle.arms[arm]!;
        if (a.file && a.versionId) state.arms[arm] = { model: a.file, versionId: a.versionId };
        deps.onEvent?.({ type: 'stage', cycle: c, arm, stage: 'held-out evaluation against the base' });
        const provider = await providerOf(state.arms[arm].model);
        // The previous cycle's held-out runs of this arm (stored: read back, never run again).
        const previous = c > 1 ? await heldoutRuns(deps, o, provider, `${o.loopId}-c${c - 1}-${arm}-heldout`, c, arm) : undefined;
        a.heldout = await compare(deps, o, base, provider, `${o.loopId}-c${c}-${arm}-heldout`, c, arm, previous);
      }
      state.cycles.push(cycle);
      // The record first: state.json is what a rerun skips a cycle by, so a kill between the two
      // must leave the record (a rerun redoes the cycle from stored steps), never lose it.
      storeCycle(deps.store, o.loopId, cycle);
      killPoint('rsi-cycle-stored');
      writeJson(stateFile, state);
    }
    report.cycles = state.cycles;
    return report;
  } finally {
    for (const p of providers.values()) await p.dispose().catch(() => {});
  }
}

/** An arm's SFT export of a group's rankings: JSONL and manifest written to `dir`. */
export interface ArmExport {
  train: ExportRow[];
  validation: ExportRow[];
  dir: string;
  selections: ArmCycle['selections'];
  trainedRuns: number;
}

/**
 * Writes one arm's export (`train.jsonl`, `validation.jsonl`, `manifest.json`) of `rankings` to
 * `dir`. A quarantined run never reaches it (exportRows refuses one; the cuts have dropped them).
 */
export function exportArm(store: Store, rankings: readonly TaskRanking[], arm: Arm, dir: string, about: Record<string, unknown>): ArmExport {
  const sel = (r: TaskRanking) => (arm === 'self' ? r.self : r.verifier);
  const train = exportRows(trajectories(store, rankings, (r) => sel(r).train), 'train');
  const validation = exportRows(trajectories(store, rankings, (r) => sel(r).validation), 'validation');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'train.jsonl'), toJsonl(train));
  writeFileSync(path.join(dir, 'validation.jsonl'), toJsonl(validation));
  writeJson(path.join(dir, 'manifest.json'), { ...about, arm, train: manifestOf(train), validation: manifestOf(validation) });
  const selections = Object.fromEntries(rankings.map((r) => [r.taskId, { train: sel(r).train.map((x) => x.runId), validation: sel(r).validation.map((x) => x.runId), dropped: sel(r).dropped }]));
  return { train, validation, dir, selections, trainedRuns: rankings.reduce((s, r) => s + sel(r).train.length, 0) };
}

/** Export and train one arm of a cycle (a version found by its id is not trained again). */
async function trainArm(deps: RsiDeps, o: RsiOptions, state: RsiState, c: number, arm: Arm, rankings: readonly TaskRanking[], provider: ModelProvider, unreliable?: JudgeAudit): Promise<ArmCycle> {
  deps.onEvent?.({ type: 'stage', cycle: c, arm, stage: 'SFT export and training' });
  const sel = (r: TaskRanking) => (arm === 'self' ? r.self : r.verifier);
  const mark = unreliable ? { unreliableJudge: { judge: unreliable.judge, reasons: unreliable.reasons, allowedBy: '--allow-unreliable-judge' } } : {};
  const ex = exportArm(deps.store, rankings, arm, path.join(o.outDir, `cycle-${c}`, arm), { loopId: o.loopId, cycle: c, ...mark });
  const { train, validation, dir, selections } = ex;
  const from = state.arms[arm];
  const out: ArmCycle = { arm, model: from.model, exported: { train: train.length, validation: validation.length, dir }, trainedRuns: ex.trainedRuns, selections };
  const versionId = `wv-${o.loopId}-c${c}-${arm}`;
  const file = path.join(o.outDir, 'versions', `c${c}-${arm}.gguf`);
  const stored = deps.recordedVersion ? deps.recordedVersion(versionId) : deps.store.weights.find(versionId);
  if (deps.recordedVersion && !stored) return out;
  if (stored && (deps.recordedVersion || existsSync(stored.path))) return { ...out, versionId, file: stored.path, ...(stored.metrics.sft ? { sft: stored.metrics.sft as SftRunResult } : {}) };
  const tokenize = providerTokenizer(provider);
  const tr = await sftSequencesOf(train, tokenize);
  const va = await sftSequencesOf(validation, tokenize);
  if (!tr.sequences.length) return out;
  const sft = await sftTrain(deps.trainer, from.model, tr.sequences, va.sequences, file, o.sft);
  const parent = from.versionId ? deps.store.weights.find(from.versionId) : undefined;
  deps.store.weights.save({
    id: versionId, role: 'mass', basePath: parent?.basePath ?? o.baseModel, path: path.resolve(file), ...(parent && { parentId: parent.id }),
    iteration: c,
    hyper: { mode: 'sft', loop: 'mass-rsi', loopId: o.loopId, cycle: c, arm, ...o.sft, train: o.outer.train, validation: o.outer.validation, verifierMin: o.outer.verifierMin },
    metrics: {
      lineage: { cycle: c, arm, tasks: rankings.map((r) => r.taskId), ranks: rankings.map((r) => ({ task: r.taskId, train: sel(r).train.map((x) => ({ runId: x.runId, rank: x.rank, verified: x.verified })), validation: sel(r).validation.map((x) => ({ runId: x.runId, rank: x.rank })) })) },
      sft, exported: out.exported, skipped: tr.skipped + va.skipped,
    },
  });
  killPoint('rsi-version-recorded');
  return { ...out, versionId, file: path.resolve(file), sft };
}

/** The held-out bare-task runs of one model (stable ids: a resumed loop reads them back), in flight as `deps.parallel` says. */
async function heldoutRuns(deps: RsiDeps, o: RsiOptions, provider: ModelProvider, prefix: string, c: number, arm: Arm | 'base'): Promise<Workspace[]> {
  const items = deps.heldoutTasks.flatMap((task, i) => Array.from({ length: o.heldoutSamples }, (_, k) => ({ task, i, k })));
  return stepsInFlight(items, { parallel: deps.parallel ?? 1, label: `${prefix} held-out runs` }, ({ task, i, k }, _n, beforeSave) =>
    runMass(null, task, { provider, family: deps.family, store: deps.store, recordTokens: false, sampling: o.heldoutSampling, beforeSave, ...(deps.signal && { signal: deps.signal }), ...(deps.config && { config: deps.config }), ...(deps.providerFor && { providerFor: deps.providerFor }) }, {
      experimentId: `${prefix}-t${i}-s${k}`, seed: deriveSeed(o.outer.seed, 'heldout', task.id, k), about: { heldout: prefix, task: task.id, sample: k }, ...(o.outer.budget && { budget: o.outer.budget }),
    }), (_w, n) => deps.onEvent?.({ type: 'progress', cycle: c, arm, what: 'held-out runs', done: n + 1, total: items.length }));
}

async function compare(deps: RsiDeps, o: RsiOptions, base: readonly Workspace[], provider: ModelProvider, prefix: string, c: number, arm: Arm, previous?: readonly Workspace[]): Promise<HeldoutComparison> {
  const mine = await heldoutRuns(deps, o, provider, prefix, c, arm);
  const diffs = mine.map((w, i) => w.grade.score - base[i]!.grade.score);
  const flip = mulberry32(deriveSeed(o.outer.seed, prefix, 'orientation'));
  const scores = new Map<string, number>();
  // Orientations drawn in pair order before any judge call (never in completion order).
  const shown = mine.map((w, i) => {
    const b = base[i]!;
    scores.set(w.runId, w.grade.score);
    scores.set(b.runId, b.grade.score);
    const swapped = flip() < 0.5;
    return { i, swapped, A: swapped ? b : w, B: swapped ? w : b };
  });
  const judged = await stepsInFlight(shown, { parallel: deps.parallel ?? 1, label: `${prefix} held-out judgments` }, async ({ i, swapped, A, B }, _n, beforeSave) => {
    const v = await judgePair(A, B, MASS_RUBRIC, provider, { store: deps.store, task: deps.heldoutTasks[Math.floor(i / o.heldoutSamples)]!, experimentId: `${prefix}-judge-${i}`, seed: deriveSeed(o.outer.seed, prefix, 'judge', i), about: { heldout: prefix, pair: i }, beforeSave, ...(deps.signal && { signal: deps.signal }), ...(deps.providerFor && { providerFor: deps.providerFor }), ...(deps.family.pairJudge && { pairJudge: deps.family.pairJudge }) });
    return { a: A.runId, b: B.runId, winner: v.winner, swapped };
  });
  const classOf = deps.family.answerClassOf;
  const selfWins = judged.reduce((s, j) => s + (j.winner === 'tie' ? 0.5 : (j.winner === 'A') !== j.swapped ? 1 : 0), 0);
  const n = mine.length;
  const mean = (xs: readonly Workspace[]) => (xs.length ? xs.reduce((s, w) => s + w.grade.score, 0) / xs.length : 0);
  const points = mine.reduce((s, w) => s + w.grade.score, 0);
  const tokens = mine.reduce((s, w) => s + w.tokens.prompt + w.tokens.completion, 0);
  return {
    pairs: n, base: mean(base), arm: mean(mine), sign: signTest(diffs), ci: bootstrapMeanCI(diffs, { seed: deriveSeed(o.outer.seed, prefix) }),
    verifierWinRate: n ? diffs.reduce((s, d) => s + (d > 0 ? 1 : d === 0 ? 0.5 : 0), 0) / n : 0,
    selfJudgeWinRate: n ? selfWins / n : 0,
    agreement: judgeVerifierAgreement(judged.map(({ a, b, winner }) => ({ a, b, winner })), scores),
    delegated: mine.filter((w) => w.delegated).length, handoffs: mine.filter((w) => w.handoffs > 0).length,
    tokensPerPoint: points > 0 ? tokens / points : null, experimentPrefix: prefix,
    ...(classOf && (() => {
      const mineRate = blindSpotRate(mine, deps.heldoutTasks, o.heldoutSamples, classOf);
      const blind = (xs: readonly Workspace[]) => xs.map((w, i) => (classOf(answerValue(w.answer) ?? w.answer, deps.heldoutTasks[Math.floor(i / o.heldoutSamples)]!) === 'blind-unit' ? 1 : 0));
      const [bm, bb] = [blind(mine), blind(base)];
      const bp = previous && previous.length === n ? blind(previous) : undefined;
      return {
        classes: mineRate.classes, blindSpot: mineRate.rate, baseBlindSpot: blindSpotRate(base, deps.heldoutTasks, o.heldoutSamples, classOf).rate,
        blindSpotVsBase: signTest(bm.map((x, i) => x - bb[i]!)), ...(bp && { blindSpotVsPrevious: signTest(bm.map((x, i) => x - bp[i]!)) }),
      };
    })()),
    ...(previous && previous.length === n && (() => {
      const d = mine.map((w, i) => w.grade.score - previous[i]!.grade.score);
      return { vsPrevious: { previous: mean(previous), sign: signTest(d), ci: bootstrapMeanCI(d, { seed: deriveSeed(o.outer.seed, prefix, 'previous') }) } };
    })()),
  };
}
