import { judgeRecord, JUDGE_METHODS, type JudgeMethod, type JudgeOptions } from './judge.ts';
import { AttributionError } from './errors.ts';
import { scoreAttribution } from './score.ts';
import { surfacedRecord, type SurfacingOptions } from './surfaced.ts';
import type { AttributionRecord, AttributionScore, WhoAndWhenLog } from './types.ts';

/** The attribution methods: Flowlab's model-free `surfaced` method and the paper's three LLM judges. */
export type AttributionMethod = 'surfaced' | JudgeMethod;
export const ATTRIBUTION_METHODS: readonly AttributionMethod[] = ['surfaced', ...JUDGE_METHODS];

/**
 * Reference numbers from the Who&When paper (Zhang, Yin et al., ICML 2025): the best LLM method's
 * agent-level accuracy (54–55%) and the best step-level accuracy (at most 25.5%). For context only.
 */
export const PAPER_REFERENCE = {
  source: 'Who&When, Zhang et al., ICML 2025',
  agentAccuracy: { low: 0.54, high: 0.55 },
  stepAccuracyAtMost: 0.255,
} as const;

/**
 * Runs one method over logs, in order, and scores the records.
 * @param opts.judge required for the judge methods (the provider and prompt budget).
 * @param opts.surfaced options of the `surfaced` method.
 * @param opts.onRecord called after each log (progress).
 * @returns `{records, score}`: one record per log (`prediction` null = not covered) and `scoreAttribution(records)`.
 */
export async function evaluateAttribution(
  logs: readonly WhoAndWhenLog[],
  method: AttributionMethod,
  opts: { judge?: JudgeOptions; surfaced?: SurfacingOptions; onRecord?: (record: AttributionRecord, done: number, total: number) => void } = {},
): Promise<{ records: AttributionRecord[]; score: AttributionScore }> {
  const records: AttributionRecord[] = [];
  for (const log of logs) {
    let rec: AttributionRecord;
    if (method === 'surfaced') rec = surfacedRecord(log, opts.surfaced);
    else {
      if (!opts.judge) throw new AttributionError('JUDGE_NEEDS_MODEL', `method ${method} needs a model (judge options with a provider)`);
      rec = await judgeRecord(log, method, opts.judge);
    }
    records.push(rec);
    opts.onRecord?.(rec, records.length, logs.length);
  }
  return { records, score: scoreAttribution(records) };
}
