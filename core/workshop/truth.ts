/**
 * What a step's reveal shows: the truth (one of the question's choice ids) read from what ran,
 * with the facts and the chart the room sees. Pure functions of stored data (run records with
 * their credit, a train loop's held-out paired statistics, a MASS tamper summary).
 */
import type { RunRecord } from '../results/index.ts';
import type { TruthKind } from './scenario.ts';

/** A bar chart (one series) or line chart (one series per name) of the reveal. */
export type RevealChart =
  | { kind: 'bars'; title: string; unit: string; bars: Array<{ label: string; value: number }> }
  | { kind: 'lines'; title: string; unit: string; x: string; series: Array<{ name: string; points: number[] }> };

/** One labelled fact of the reveal (`Root failure`, `solver`). */
export interface RevealFact {
  label: string;
  value: string;
}

/** What a step produced: recorded once at rehearsal (or live), served byte for byte in the room. */
export interface StepResult {
  stepId: string;
  /** The choice id that is right. */
  truth: string;
  /** One sentence the reveal opens with. */
  headline: string;
  facts: RevealFact[];
  chart: RevealChart | null;
  /** The experiments the step wrote (the attendee token may read these and no others). */
  experimentIds: string[];
  /** A few run ids of those experiments, for the trace. */
  runIds: string[];
  /** The command that ran, to rerun at home. */
  command: string;
  /** Wall seconds the command took. */
  seconds: number;
  /** Epoch ms the command finished. */
  recordedAt: number;
}

/** The blame of a step's runs: roots blamed per role, ambiguous roots, silent runs, cascades. */
export interface BlameTally {
  runs: number;
  blamed: Record<string, number>;
  ambiguous: number;
  /** Runs with a wrong answer and no failed node (credit `silent`). */
  silent: number;
  cascades: number;
  wrong: number;
  /** Roots of class wiring / execution, over all runs. */
  wiring: number;
  execution: number;
  /** Candidates named by ambiguous roots, with counts. */
  candidates: Record<string, number>;
  /**
   * Each run's verdict, counted: the role its blamed roots name most often, `ambiguous` when its
   * roots are all ambiguous, `nobody` when it has no blamed or ambiguous root.
   */
  verdicts: Record<string, number>;
}

/** Counts structural blame over runs (core/blame/credit `CreditResult` of each run; infrastructure roots are nobody's). */
export function tallyBlame(runs: readonly RunRecord[]): BlameTally {
  const t: BlameTally = { runs: runs.length, blamed: {}, ambiguous: 0, silent: 0, cascades: 0, wrong: 0, wiring: 0, execution: 0, candidates: {}, verdicts: {} };
  const count = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
  for (const r of runs) {
    if (!r.correct) t.wrong++;
    const c = r.credit;
    const own: Record<string, number> = {};
    let ambiguous = 0;
    for (const root of c?.roots ?? []) {
      if (root.blamed) count(own, root.blamed);
      else if (root.candidates?.length) ambiguous++;
    }
    count(t.verdicts, top(own)?.[0] ?? (ambiguous ? 'ambiguous' : 'nobody'));
    if (!c) continue;
    if (c.silent) t.silent++;
    t.cascades += c.cascades.length;
    for (const root of c.roots) {
      if (root.failureClass === 'wiring') t.wiring++;
      if (root.failureClass === 'execution') t.execution++;
      if (root.blamed) t.blamed[root.blamed] = (t.blamed[root.blamed] ?? 0) + 1;
      else if (root.candidates?.length) {
        t.ambiguous++;
        for (const cand of root.candidates) t.candidates[cand] = (t.candidates[cand] ?? 0) + 1;
      }
    }
  }
  return t;
}

/** The key with the largest count (ties: the first in name order). */
function top(m: Record<string, number>): [string, number] | undefined {
  return Object.entries(m).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0];
}

/**
 * The `blamed-role` truth: the most common run verdict (`BlameTally.verdicts`: a role,
 * `ambiguous` or `nobody`; ties: the first in name order); `nobody` with no runs.
 */
export function blamedRoleTruth(t: BlameTally): string {
  return top(t.verdicts)?.[0] ?? 'nobody';
}

/** The paired held-out statistics of one trained role (as `flowlab compare` computes them). */
export interface RoleHeldout {
  before: number;
  after: number;
  delta: number;
  /** Two-sided exact sign test p-value. */
  p: number;
  positive: number;
  negative: number;
  ties: number;
  ci: { low: number; high: number };
}

/** Significance level of the `roles-learned` truth. */
export const LEARNED_ALPHA = 0.05;

/** Whether a role's held-out reward beat its start: mean paired difference > 0 and sign test p < {@link LEARNED_ALPHA}. */
export function beatsStart(h: RoleHeldout): boolean {
  return h.delta > 0 && h.p < LEARNED_ALPHA;
}

/** The `roles-learned` truth: `all`, the one role that learned, or `none` (two or more but not all: the first in name order). */
export function rolesLearnedTruth(roles: Record<string, RoleHeldout>): string {
  const names = Object.keys(roles).sort();
  const learned = names.filter((r) => beatsStart(roles[r]!));
  if (names.length > 0 && learned.length === names.length) return 'all';
  return learned[0] ?? 'none';
}

/** The SIMULATED tamperer as the self-judge saw it (core/mass `TamperSummary`). */
export interface TamperView {
  runs: number;
  quarantined: number;
  judge: { wins: number; losses: number; ties: number; winRate: number | null };
  meanRank: number;
  inCutBeforeGuard: number;
}

/** The `judge-prefers-tamperer` truth: `yes` when the self-judge's win rate for tampered runs is above 0.5. */
export function tampererTruth(t: TamperView): string {
  return t.judge.winRate !== null && t.judge.winRate > 0.5 ? 'yes' : 'no';
}

/** One counterfactual verdict as the `fix-saves` truth reads it (core/experiments `CounterfactualRun`, from `flowlab counterfactual --json`). */
export interface WhatIfRun {
  runId: string;
  trials: ReadonlyArray<{ nodeId: string; role: string | null; flipped: boolean | null }>;
}

/** What the "what if" forks found: runs a fix was tried on, runs it saved (some tried fix flipped the run to success), per role of the fixed node. */
export interface WhatIfTally {
  /** Failed or silent runs examined. */
  runs: number;
  /** Runs where at least one fix was tried (a node with a corrected output). */
  tried: number;
  /** Runs some tried fix flipped to success. */
  saved: number;
  /** Forks made (fixes tried). */
  forks: number;
  /** Per role of the fixed node: fixes tried and fixes that flipped their run. */
  byRole: Record<string, { tried: number; flipped: number }>;
}

/** Counts the counterfactual verdicts of a `fix-saves` step. */
export function tallyWhatIf(runs: readonly WhatIfRun[]): WhatIfTally {
  const t: WhatIfTally = { runs: runs.length, tried: 0, saved: 0, forks: 0, byRole: {} };
  for (const r of runs) {
    const tried = r.trials.filter((x) => x.flipped !== null);
    if (tried.length) t.tried++;
    if (tried.some((x) => x.flipped)) t.saved++;
    t.forks += tried.length;
    for (const x of tried) {
      const cell = (t.byRole[x.role ?? '(no role)'] ??= { tried: 0, flipped: 0 });
      cell.tried++;
      if (x.flipped) cell.flipped++;
    }
  }
  return t;
}

/** The `fix-saves` truth: `yes` when the fix saved more than half of the runs it was tried on (none tried: `no`). */
export function fixSavesTruth(t: WhatIfTally): string {
  return t.tried > 0 && t.saved * 2 > t.tried ? 'yes' : 'no';
}

/** An arm's held-out blind-spot error rate (core/mass rsi `BlindSpotRate`): errors of n answers, with the 95% Wilson interval. */
export interface BlindSpotPoint {
  errors: number;
  n: number;
  rate: number | null;
  interval: [number, number] | null;
}

/** One rsi arm's blind-spot curve: the base model's rate, then each cycle's (in cycle order). */
export interface BlindSpotCurve {
  base: BlindSpotPoint;
  cycles: BlindSpotPoint[];
}

/**
 * Whether an arm's blind-spot error rate fell: its last cycle's 95% Wilson interval lies wholly
 * below the base's rate (an arm with no measured cycle did not fall). A deliberately plain rule
 * the room can check on the chart; the paired tests are in the rsi report.
 */
export function blindSpotFell(c: BlindSpotCurve): boolean {
  const last = c.cycles.at(-1);
  return !!last?.interval && c.base.rate !== null && last.interval[1] < c.base.rate - 1e-9;
}

/**
 * Whether an arm's blind-spot error rate rose: its last cycle's 95% Wilson interval lies wholly
 * above the base's rate (1e-9: Wilson's lower bound at 0 errors is a rounding error above 0).
 */
export function blindSpotRose(c: BlindSpotCurve): boolean {
  const last = c.cycles.at(-1);
  return !!last?.interval && c.base.rate !== null && last.interval[0] > c.base.rate + 1e-9;
}

const whichArms = (self: boolean, verifier: boolean) => (self && verifier ? 'both' : self ? 'self' : verifier ? 'verifier' : 'neither');

/** The `blind-spot-kept` truth: the arm(s) whose blind-spot rate did not fall — `self`, `verifier`, `both` or `neither`. */
export function blindSpotKeptTruth(arms: { self: BlindSpotCurve; verifier: BlindSpotCurve }): string {
  return whichArms(!blindSpotFell(arms.self), !blindSpotFell(arms.verifier));
}

/** The `blind-spot-rose` truth: the arm(s) whose blind-spot rate rose above the base's — `self`, `verifier`, `both` or `neither`. */
export function blindSpotRoseTruth(arms: { self: BlindSpotCurve; verifier: BlindSpotCurve }): string {
  return whichArms(blindSpotRose(arms.self), blindSpotRose(arms.verifier));
}

/** The truth kinds whose value can be a role name (checked against the step's choices at rehearsal). */
export const ROLE_TRUTHS: readonly TruthKind[] = ['blamed-role', 'roles-learned'];
