/**
 * Blind-spot guards of MASS's outer loop (Sakana AI MASS, "The blind spot": the same model
 * solves, judges and optimises, so shared errors get approved — a simulator edited to teleport
 * objects was reported as success). Before anything reaches a training set:
 *
 * - each run's **protected environment** (the grader's expectation, the environment's files, the
 *   checks) is written outside the agents' reach (read-only files in the run's own folder, never
 *   given to a tool) and hashed (SHA-256) before and after the run; any change quarantines it;
 * - each **contract field** a workspace claims (e.g. `verified: true`, `score: 1`) is compared
 *   with an independent re-check (the external verifier on the pristine task); a disagreement
 *   quarantines it; so does a reported score that differs from the verified one;
 * - a quarantined trajectory is kept and shown, never exported or trained on;
 * - thresholds on a cycle (share of runs quarantined, judge-verifier agreement) halt the loop
 *   with a report.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { JudgedPair } from './tournament.ts';

/** One protected file of a run's environment, by name inside the run's environment folder. */
export interface ProtectedFile {
  name: string;
  content: string;
}

/** File name -> SHA-256 hex of its bytes (`missing` when the file is gone). */
export type EnvironmentHashes = Record<string, string>;

export const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

/**
 * Writes the protected files into `dir` (created) as read-only (0444) and returns their hashes.
 * A file left by an earlier attempt of the same run is made writable and replaced.
 */
export function writeEnvironment(dir: string, files: readonly ProtectedFile[]): EnvironmentHashes {
  mkdirSync(dir, { recursive: true });
  const out: EnvironmentHashes = {};
  for (const f of files) {
    const file = path.join(dir, f.name);
    if (existsSync(file)) chmodSync(file, 0o644);
    writeFileSync(file, f.content);
    chmodSync(file, 0o444);
    out[f.name] = sha256(f.content);
  }
  return out;
}

/** Hashes the named files of `dir` as they are now. */
export function hashEnvironment(dir: string, names: readonly string[]): EnvironmentHashes {
  const out: EnvironmentHashes = {};
  for (const name of names) {
    const file = path.join(dir, name);
    out[name] = existsSync(file) ? sha256(readFileSync(file)) : 'missing';
  }
  return out;
}

/** A claim a workspace makes in a contract field, with what an independent re-check found. */
export interface ContractClaim {
  /** The agent (or `workspace`) that made the claim. */
  agent: string;
  field: string;
  claimed: unknown;
  recheck: unknown;
}

export type QuarantineReason =
  | { code: 'ENV_CHANGED'; file: string; before: string; after: string }
  | { code: 'CONTRACT_MISMATCH'; agent: string; field: string; claimed: unknown; recheck: unknown }
  | { code: 'REPORT_MISMATCH'; reported: number; verified: number };

export interface GuardVerdict {
  quarantined: boolean;
  reasons: QuarantineReason[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The guard's verdict on one run: quarantined when any protected file changed between `before`
 * and `after`, any contract claim disagrees with its re-check, or the score the environment
 * reports differs from the external verifier's (by more than 1e-9).
 */
export function guardRun(input: { before: EnvironmentHashes; after: EnvironmentHashes; claims?: readonly ContractClaim[]; reported?: number; verified: number }): GuardVerdict {
  const reasons: QuarantineReason[] = [];
  for (const file of Object.keys(input.before).sort()) {
    const after = input.after[file] ?? 'missing';
    if (after !== input.before[file]) reasons.push({ code: 'ENV_CHANGED', file, before: input.before[file]!, after });
  }
  for (const c of input.claims ?? []) {
    if (!same(c.claimed, c.recheck)) reasons.push({ code: 'CONTRACT_MISMATCH', agent: c.agent, field: c.field, claimed: c.claimed, recheck: c.recheck });
  }
  if (input.reported !== undefined && Math.abs(input.reported - input.verified) > 1e-9) reasons.push({ code: 'REPORT_MISMATCH', reported: input.reported, verified: input.verified });
  return { quarantined: reasons.length > 0, reasons };
}

/** One line per reason, for tables and reports. */
export function describeReason(r: QuarantineReason): string {
  switch (r.code) {
    case 'ENV_CHANGED':
      return `protected file ${r.file} changed during the run (sha256 ${r.before.slice(0, 12)} -> ${r.after.slice(0, 12)})`;
    case 'CONTRACT_MISMATCH':
      return `${r.agent} claims ${r.field} = ${JSON.stringify(r.claimed)}; the re-check finds ${JSON.stringify(r.recheck)}`;
    case 'REPORT_MISMATCH':
      return `the environment reports score ${r.reported}; the external verifier gives ${r.verified}`;
  }
}

/** How often the self-judge picked the run the external verifier scores higher. */
export interface Agreement {
  /** Pairs whose verified scores differ (the verifier has a preference). */
  decided: number;
  /** Of those, pairs where the judge named the higher-scored run (a judge's tie counts as disagreement). */
  agreed: number;
  /** Pairs the verifier scores equal (left out). */
  verifierTies: number;
  /** agreed / decided; null when nothing was decided. */
  rate: number | null;
}

/** Judge-verifier agreement over judged pairs, given each run's verified score. Runs without a score are left out. */
export function judgeVerifierAgreement(judged: readonly Pick<JudgedPair, 'a' | 'b' | 'winner'>[], verified: ReadonlyMap<string, number>): Agreement {
  let decided = 0;
  let agreed = 0;
  let verifierTies = 0;
  for (const j of judged) {
    const a = verified.get(j.a);
    const b = verified.get(j.b);
    if (a === undefined || b === undefined) continue;
    if (Math.abs(a - b) <= 1e-9) {
      verifierTies++;
      continue;
    }
    decided++;
    if ((a > b && j.winner === 'A') || (b > a && j.winner === 'B')) agreed++;
  }
  return { decided, agreed, verifierTies, rate: decided ? agreed / decided : null };
}

/** The learned-blind-spot guard's settings (blindSpotGuard.ts): what share of the self-judged winners to verify, and the most disagreement a cycle may have. */
export interface BlindSpotThreshold {
  /** Share of each task's self-judged winners the external verifier checks (0..1; 0 = off). */
  sample: number;
  /** Most share of the sampled winners the verifier may reject (0..1); above it the loop halts. */
  maxDisagreement: number;
}

/** When a cycle halts. */
export interface GuardThresholds {
  /** Most share of a cycle's runs that may be quarantined (0..1); above it the loop halts. Default 0.25. */
  maxQuarantinedShare: number;
  /** Least judge-verifier agreement rate (0..1; 0 = off); below it (with at least one decided pair) the loop halts. Default 0. */
  minAgreement: number;
  /** The learned-blind-spot guard (blindSpotGuard.ts): verify a share of the self-judged winners, halt above a disagreement rate. Absent: off. */
  blindSpot?: BlindSpotThreshold;
}

export const DEFAULT_THRESHOLDS: GuardThresholds = { maxQuarantinedShare: 0.25, minAgreement: 0 };

export interface ThresholdCheck {
  halt: boolean;
  /** One sentence per crossed threshold, naming it and the measured value. */
  reasons: string[];
}

/** Checks a cycle's counts against the thresholds. */
export function checkThresholds(m: { runs: number; quarantined: number; agreement: Agreement }, t: GuardThresholds): ThresholdCheck {
  const reasons: string[] = [];
  const share = m.runs ? m.quarantined / m.runs : 0;
  if (share > t.maxQuarantinedShare) reasons.push(`${m.quarantined} of ${m.runs} runs quarantined (${(share * 100).toFixed(1)}%), above the threshold of ${(t.maxQuarantinedShare * 100).toFixed(1)}%`);
  if (t.minAgreement > 0 && m.agreement.rate !== null && m.agreement.rate < t.minAgreement) {
    reasons.push(`judge-verifier agreement ${(m.agreement.rate * 100).toFixed(1)}% (${m.agreement.agreed}/${m.agreement.decided} decided pairs), below the threshold of ${(t.minAgreement * 100).toFixed(1)}%`);
  }
  return { halt: reasons.length > 0, reasons };
}
