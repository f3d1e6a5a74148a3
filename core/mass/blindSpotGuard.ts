/**
 * The guard for a learned blind spot (issue 25, part 5). A self-judge trained on the same data as
 * the solver shares its blind spot (core/tasks/learnJudge.ts: a plausible wrong unit it accepts),
 * so the runs it ranks into the self arm's training cut can be wrong in a way no audit of its
 * position bias shows. The guard spot-checks them: per task, a seeded sample of `sample` (0..1)
 * of the self-judged winners (the runs in the self arm's training cut, by Bradley-Terry rank) is
 * scored by the **external verifier** (the task's grader on the pristine task, `RankedRun.verified`);
 * a sampled winner the verifier scores below the loop's `verifierMin` is a **disagreement**. The
 * disagreement rate (with its 95% Wilson interval) is reported per cycle; above
 * `maxDisagreement` the loop halts with a report before anything of that generation is exported
 * or trained (core/mass/rsi.ts). The sample is drawn per task by a seeded partial Fisher-Yates
 * (mulberry32 over `deriveSeed(seed, 'blind-spot-sample', taskId)`), ⌈sample·n⌉ of the n winners,
 * in rank order; it depends on the seed and the ranking only. Pure.
 */
import { wilsonInterval } from '../guards/index.ts';
import { deriveSeed, mulberry32 } from '../random.ts';
import type { BlindSpotThreshold } from './guards.ts';
import type { RankedRun, TaskRanking } from './outer.ts';

export type { BlindSpotThreshold };

/** One cycle's spot check. */
export interface BlindSpotCheck {
  /** Winners checked, and of them the verifier rejected. */
  sampled: number;
  disagreed: number;
  /** disagreed / sampled, with its 95% Wilson interval; null with no winner sampled. */
  rate: number | null;
  ci: [number, number] | null;
  threshold: BlindSpotThreshold;
  /** Each sampled winner: its run, task, Bradley-Terry rank and verified score, and whether the verifier rejected it. */
  checked: Array<{ runId: string; taskId: string; rank: number; verified: number; disagreed: boolean }>;
  /** True when the rate is above `maxDisagreement`. */
  halt: boolean;
  /** The sentence a halt report carries (set when `halt`). */
  reason?: string;
}

/** The sampled winners of one task (see the module doc). */
export function sampleWinners(winners: readonly RankedRun[], share: number, seed: number, taskId: string): RankedRun[] {
  const n = winners.length;
  const k = Math.min(n, Math.ceil(share * n - 1e-9));
  if (k <= 0) return [];
  const idx = winners.map((_, i) => i);
  const rand = mulberry32(deriveSeed(seed, 'blind-spot-sample', taskId));
  for (let i = 0; i < k; i++) {
    const j = i + Math.floor(rand() * (n - i));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx.slice(0, k).sort((a, b) => a - b).map((i) => winners[i]!);
}

/**
 * The spot check of a cycle's self-judged winners (`rankings[].self.train`) against the external
 * verifier; `verifierMin` is the score a right run reaches (the loop's `--verifier-min`). Errors:
 * RangeError for a share or threshold outside 0..1.
 */
export function checkBlindSpot(rankings: ReadonlyArray<Pick<TaskRanking, 'taskId' | 'self'>>, t: BlindSpotThreshold, verifierMin: number, seed: number): BlindSpotCheck {
  if (!(t.sample >= 0 && t.sample <= 1)) throw new RangeError(`blind-spot sample share must be from 0 to 1, got ${String(t.sample)}`);
  if (!(t.maxDisagreement >= 0 && t.maxDisagreement <= 1)) throw new RangeError(`blind-spot disagreement threshold must be from 0 to 1, got ${String(t.maxDisagreement)}`);
  const checked = rankings.flatMap((r) => sampleWinners(r.self.train, t.sample, seed, r.taskId).map((x) => ({ runId: x.runId, taskId: r.taskId, rank: x.rank, verified: x.verified, disagreed: x.verified < verifierMin - 1e-9 })));
  const disagreed = checked.filter((c) => c.disagreed).length;
  const rate = checked.length ? disagreed / checked.length : null;
  const halt = rate !== null && rate > t.maxDisagreement + 1e-12;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return {
    // The threshold rebuilt in one key order: a replay reads it back from stored settings with sorted keys, and halt.json must match byte for byte.
    sampled: checked.length, disagreed, rate, ci: wilsonInterval(disagreed, checked.length), threshold: { sample: t.sample, maxDisagreement: t.maxDisagreement }, checked, halt,
    ...(halt && { reason: `blind-spot guard: the external verifier rejects ${disagreed} of ${checked.length} sampled self-judged winners (${pct(rate!)}), above the threshold of ${pct(t.maxDisagreement)}` }),
  };
}

/** One line for reports: the check's counts, rate and interval. */
export function describeBlindSpot(c: BlindSpotCheck): string {
  if (c.rate === null) return `blind-spot guard: no self-judged winner sampled (sample ${c.threshold.sample})`;
  return `blind-spot guard: verifier rejects ${c.disagreed}/${c.sampled} sampled self-judged winners, ${(100 * c.rate).toFixed(1)}% [${(100 * c.ci![0]).toFixed(1)}, ${(100 * c.ci![1]).toFixed(1)}] (halts above ${(100 * c.threshold.maxDisagreement).toFixed(1)}%)`;
}
