/**
 * The judge audit (issue 24): every pairwise judge the lab uses — MASS's self-judge and external
 * judges (`evolve`, `rank`, `rsi`) — is audited on the pairs it judged before its figures are
 * shown as results:
 *
 * - **verdict distribution**: how often it said A, B and tie;
 * - **position consistency**: on a seeded sample of pairs judged again with A and B swapped, the
 *   share whose second verdict mirrors the first (A↔B, tie↔tie) — the position-bias check of
 *   LLM-as-a-judge (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and Chatbot Arena",
 *   §3.3 "position bias", swap-and-compare);
 * - **agreement with the grader** on the pairs the grader decides (one side scores higher);
 * - **Cohen's kappa** between the judge's verdict and the grader's (A, B, tie) over every pair
 *   with a grader verdict (Cohen 1960, κ = (pₒ − pₑ)/(1 − pₑ)), with the large-sample standard
 *   error SE = √(pₒ(1 − pₒ) / (n(1 − pₑ)²)) (Cohen 1960, eq. 9) and a 95% interval κ ± 1.96·SE.
 *
 * Proportions carry Wilson score intervals (Wilson 1927). A judge is `UNRELIABLE JUDGE` when any
 * documented threshold (`DEFAULT_JUDGE_THRESHOLDS`, docs/mass.md "The judge audit") is crossed:
 * position consistency below `minPositionConsistency` (0.6; a judge answering at random among
 * three verdicts mirrors itself 1/3 of the time), kappa no better than chance (its 95% interval
 * reaches 0), one position (A or B) in at least `maxPositionShare` (0.95) of the pairs shown in
 * a seeded random orientation, or fewer than `minPairs` (8) judged pairs (too few to audit;
 * the kappa and position tests need that many). Pure.
 */

/** A pairwise verdict: A (shown first) wins, B wins, or a tie. */
export type PairVerdict3 = 'A' | 'B' | 'tie';

/** One judged pair: the judge's verdict and, where a grader exists, the grader's verdict in the same orientation. */
export interface AuditedPair {
  winner: PairVerdict3;
  gold?: PairVerdict3 | undefined;
}

/** One pair judged twice: as scheduled (`first`) and with A and B swapped (`swapped`). */
export interface SwappedPair {
  first: PairVerdict3;
  swapped: PairVerdict3;
}

export interface JudgeThresholds {
  /** Least share of swapped pairs whose verdict mirrors the first (0..1). */
  minPositionConsistency: number;
  /** Most share of pairs one position (A or B) may take (0..1). */
  maxPositionShare: number;
  /** Least judged pairs for an audit: fewer is itself a reason (too few to audit); the kappa and position-share tests need this many. */
  minPairs: number;
}

/** The documented thresholds (docs/mass.md "The judge audit"). */
export const DEFAULT_JUDGE_THRESHOLDS: JudgeThresholds = { minPositionConsistency: 0.6, maxPositionShare: 0.95, minPairs: 8 };

/** A proportion with its 95% Wilson score interval (null with no trial). */
export interface Proportion {
  n: number;
  k: number;
  rate: number | null;
  ci: [number, number] | null;
}

export interface JudgeAudit {
  /** Who judged, e.g. `self-judge (stories260K.gguf)`. */
  judge: string;
  pairs: number;
  verdicts: Record<PairVerdict3, number>;
  /** Mirrored verdicts over the swapped sample. */
  positionConsistency: Proportion;
  /** Judge = grader over the pairs the grader decides (A or B). */
  agreement: Proportion;
  /** Cohen's kappa judge vs grader over pairs with a grader verdict; null value when undefined (pₑ = 1, the grader gave one verdict, or no pair); null ci where pₒ is 0 or 1 (standard error 0). */
  kappa: { n: number; value: number | null; ci: [number, number] | null };
  /** True when a threshold is crossed; `reasons` names each, with the measured value. */
  unreliable: boolean;
  reasons: string[];
}

const Z = 1.959963984540054;

/** The 95% Wilson score interval of k successes in n trials (Wilson 1927); null for n = 0. */
export function wilsonInterval(k: number, n: number): [number, number] | null {
  if (n <= 0) return null;
  const p = k / n;
  const z2 = Z * Z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (Z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

const proportion = (k: number, n: number): Proportion => ({ n, k, rate: n ? k / n : null, ci: wilsonInterval(k, n) });

const CATS: readonly PairVerdict3[] = ['A', 'B', 'tie'];
const mirror = (v: PairVerdict3): PairVerdict3 => (v === 'A' ? 'B' : v === 'B' ? 'A' : 'tie');

/** Cohen's kappa of two raters over the same items, with its 95% interval (see the module doc). */
export function cohensKappa(pairs: ReadonlyArray<[PairVerdict3, PairVerdict3]>): { n: number; value: number | null; ci: [number, number] | null } {
  const n = pairs.length;
  if (!n) return { n, value: null, ci: null };
  // The grader is the reference: when it gives every pair one verdict (all ties, say), kappa is 0
  // whatever the judge says (pₒ = pₑ), so it measures nothing: undefined, like pₑ = 1.
  if (new Set(pairs.map(([, y]) => y)).size === 1) return { n, value: null, ci: null };
  const po = pairs.filter(([x, y]) => x === y).length / n;
  const pe = CATS.reduce((s, c) => s + (pairs.filter(([x]) => x === c).length / n) * (pairs.filter(([, y]) => y === c).length / n), 0);
  if (1 - pe <= 1e-12) return { n, value: null, ci: null };
  const value = (po - pe) / (1 - pe);
  const se = Math.sqrt((po * (1 - po)) / (n * (1 - pe) ** 2));
  // pₒ of 0 or 1 gives a standard error of 0: the large-sample interval says nothing there (null).
  return { n, value, ci: se > 0 ? [value - Z * se, value + Z * se] : null };
}

/** The grader's verdict on a pair from the two sides' scores (A higher: A; equal within 1e-9: tie). */
export function graderVerdict(a: number, b: number): PairVerdict3 {
  return Math.abs(a - b) <= 1e-9 ? 'tie' : a > b ? 'A' : 'B';
}

/**
 * Audits a judge on the pairs it judged (`pairs`, with the grader's verdicts where there is a
 * grader) and a swapped sample (`swaps`); see the module doc for the figures and thresholds.
 */
export function auditJudge(judge: string, pairs: readonly AuditedPair[], swaps: readonly SwappedPair[], t: JudgeThresholds = DEFAULT_JUDGE_THRESHOLDS): JudgeAudit {
  const verdicts: Record<PairVerdict3, number> = { A: 0, B: 0, tie: 0 };
  for (const p of pairs) verdicts[p.winner]++;
  const positionConsistency = proportion(swaps.filter((s) => s.swapped === mirror(s.first)).length, swaps.length);
  const decided = pairs.filter((p) => p.gold === 'A' || p.gold === 'B');
  const agreement = proportion(decided.filter((p) => p.winner === p.gold).length, decided.length);
  const kappa = cohensKappa(pairs.filter((p) => p.gold !== undefined).map((p) => [p.winner, p.gold!]));
  const reasons: string[] = [];
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  if (positionConsistency.rate !== null && positionConsistency.rate < t.minPositionConsistency) {
    reasons.push(`position consistency ${pct(positionConsistency.rate)} (${positionConsistency.k}/${positionConsistency.n} swapped pairs mirrored), below ${pct(t.minPositionConsistency)}`);
  }
  if (pairs.length > 0 && pairs.length < t.minPairs) reasons.push(`only ${pairs.length} pair${pairs.length === 1 ? '' : 's'} judged, fewer than ${t.minPairs}: too few to audit the judge`);
  if (kappa.ci && kappa.n >= t.minPairs && kappa.ci[0] <= 0) reasons.push(`kappa vs the grader ${kappa.value!.toFixed(3)} [${kappa.ci[0].toFixed(3)}, ${kappa.ci[1].toFixed(3)}] over ${kappa.n} pairs: no better than chance`);
  for (const side of ['A', 'B'] as const) {
    if (pairs.length >= t.minPairs && verdicts[side] / pairs.length >= t.maxPositionShare) reasons.push(`answered "${side}" on ${verdicts[side]} of ${pairs.length} pairs (${pct(verdicts[side] / pairs.length)}), at or above ${pct(t.maxPositionShare)}: a position, not a judgment`);
  }
  return { judge, pairs: pairs.length, verdicts, positionConsistency, agreement, kappa, unreliable: reasons.length > 0, reasons };
}

const f3 = (x: number) => x.toFixed(3);
const propText = (p: Proportion) => (p.rate === null ? 'n/a (no pair)' : `${f3(p.rate)} [${f3(p.ci![0])}, ${f3(p.ci![1])}] (${p.k}/${p.n})`);

/** The audit as printed (CLI, reports): one block, `UNRELIABLE JUDGE` and the reasons when a threshold is crossed, `not audited` when no pair was judged. */
export function formatJudgeAudit(a: JudgeAudit): string {
  const lines = [
    `Judge audit: ${a.judge}, ${a.pairs} ${a.pairs === 1 ? 'pair' : 'pairs'} judged`,
    `  verdicts: A ${a.verdicts.A}, B ${a.verdicts.B}, tie ${a.verdicts.tie}`,
    `  position consistency (pairs judged in both orders): ${propText(a.positionConsistency)}`,
    `  agreement with the grader (pairs it decides): ${propText(a.agreement)}`,
    `  Cohen's kappa vs the grader: ${a.kappa.value === null ? `n/a (${a.kappa.n ? 'the grader gave every pair one verdict' : 'no grader verdict'})` : `${f3(a.kappa.value)} ${a.kappa.ci ? `[${f3(a.kappa.ci[0])}, ${f3(a.kappa.ci[1])}]` : '(no interval: agreement is 0 or 1)'} (${a.kappa.n} pairs)`}`,
  ];
  lines.push(a.unreliable ? `  UNRELIABLE JUDGE: ${a.reasons.join('; ')}` : a.pairs === 0 ? '  not audited: no pair judged' : '  reliable: no threshold crossed');
  return lines.join('\n') + '\n';
}
