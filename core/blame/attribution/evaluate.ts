import { firstWorkerRecord, hybridRecord, majorityAgent, majorityRecord, STRUCTURAL_OPTIONS } from './baselines.ts';
import { setMaxListeners } from 'node:events';
import { runOrdered, Scheduler } from '../../schedule/index.ts';
import { judgeRecord, LLM_JUDGE_METHODS, type JudgeCall, type LlmJudgeMethod, type JudgeOptions } from './judge.ts';
import { AttributionError } from './errors.ts';
import { scoreAttribution, scoreOfficial } from './score.ts';
import { surfacedRecord, type SurfacingOptions } from './surfaced.ts';
import type { AttributionRecord, AttributionScore, OfficialScore, UnscorableLog, WhoAndWhenLog } from './types.ts';

/**
 * The attribution methods:
 * - `surfaced`: structure-aware credit over the failures a log surfaces itself (options: the
 *   harness-crash class, the authorship; default here: crash = the speaker's execution failure,
 *   speaker authorship);
 * - `structural`: `surfaced` with team authorship and the crash rule (`STRUCTURAL_OPTIONS`);
 * - `hybrid`: `structural`, and where it blames no agent the first-worker prior;
 * - `first-worker`, `majority`: the label-free prior and the majority class (core/blame/attribution/baselines.ts);
 * - the LLM judges: the paper's three and `narrowed-judge`.
 */
export type AttributionMethod = 'surfaced' | 'structural' | 'hybrid' | 'first-worker' | 'majority' | LlmJudgeMethod;
export const MODEL_FREE_METHODS: readonly AttributionMethod[] = ['surfaced', 'structural', 'hybrid', 'first-worker', 'majority'];
export const ATTRIBUTION_METHODS: readonly AttributionMethod[] = [...MODEL_FREE_METHODS, ...LLM_JUDGE_METHODS];

/** True for the methods that need a model (`opts.judge`). */
export const isJudgeMethod = (m: AttributionMethod): m is LlmJudgeMethod => (LLM_JUDGE_METHODS as readonly string[]).includes(m);

/**
 * The crash class every evaluation uses unless told otherwise: the end-of-run crash block of a
 * Magentic-One log (`HARNESS_CRASH_RULE`) is the speaking agent's execution failure. On the
 * Hand-Crafted logs 26 end in one, and the label names its speaker in 20 of them.
 */
export const DEFAULT_HARNESS_CRASH = 'execution' as const;

/**
 * Reference numbers from the Who&When paper (Zhang, Yin et al., ICML 2025): the best LLM method's
 * agent-level accuracy (54–55%) and the best step-level accuracy (at most 25.5%). For context only.
 */
export const PAPER_REFERENCE = {
  source: 'Who&When, Zhang et al., ICML 2025',
  agentAccuracy: { low: 0.54, high: 0.55 },
  stepAccuracyAtMost: 0.255,
} as const;

/** What `evaluateAttribution` returns. */
export interface AttributionEvaluation {
  /** One record per scorable log, in order (`prediction` null = not covered). */
  records: AttributionRecord[];
  /** Strict scores (`scoreAttribution`): agents normalised and case-insensitive, steps equal as integers. */
  score: AttributionScore;
  /** The official scorer's substring matching (`scoreOfficial`), same records. */
  official: OfficialScore;
  /** Logs left out because their label cannot be scored (`WhoAndWhenLog.unscorable`). */
  unscorable: UnscorableLog[];
}

/**
 * Runs one method over logs, in order, and scores the records. A judge method with
 * `opts.parallel` n > 1 judges n logs at once (`judgeInFlight`); the records, their order and the
 * calls `opts.judge.onCall` sees are the same as one log at a time. Logs marked `unscorable` are not
 * run: they are listed in `unscorable` and left out of every accuracy.
 * @param opts.judge required for the judge methods (the provider and prompt budget).
 * @param opts.surfaced options of `surfaced` (default `{harnessCrash: DEFAULT_HARNESS_CRASH}`);
 *   `structural` and `hybrid` take them over `STRUCTURAL_OPTIONS`.
 * @param opts.onRecord called after each log (progress), in log order.
 * @param opts.parallel judge methods: logs judged at once (default 1).
 * @throws AttributionError `JUDGE_NEEDS_MODEL` for a judge method without `opts.judge`.
 */
export async function evaluateAttribution(
  logs: readonly WhoAndWhenLog[],
  method: AttributionMethod,
  opts: { judge?: JudgeOptions; surfaced?: SurfacingOptions; onRecord?: (record: AttributionRecord, done: number, total: number) => void; parallel?: number } = {},
): Promise<AttributionEvaluation> {
  const unscorable: UnscorableLog[] = [];
  const scorable: WhoAndWhenLog[] = [];
  for (const l of logs) {
    if (l.unscorable !== undefined) unscorable.push({ logId: l.id, file: l.file, reason: l.unscorable });
    else scorable.push(l);
  }
  if (isJudgeMethod(method) && !opts.judge) throw new AttributionError('JUDGE_NEEDS_MODEL', `method ${method} needs a model (judge options with a provider)`);
  const surfaced = { harnessCrash: DEFAULT_HARNESS_CRASH, ...opts.surfaced };
  const majority = method === 'majority' ? majorityAgent(scorable) : null;
  const records: AttributionRecord[] = [];
  if (isJudgeMethod(method) && (opts.parallel ?? 1) > 1) {
    await judgeInFlight(scorable, method, opts.judge!, opts.parallel!, (rec) => {
      records.push(rec);
      opts.onRecord?.(rec, records.length, scorable.length);
    });
    return { records, score: scoreAttribution(records), official: scoreOfficial(records), unscorable };
  }
  for (const log of scorable) {
    let rec: AttributionRecord;
    if (method === 'surfaced') rec = surfacedRecord(log, surfaced);
    else if (method === 'structural') rec = surfacedRecord(log, { ...STRUCTURAL_OPTIONS, ...opts.surfaced });
    else if (method === 'hybrid') rec = hybridRecord(log, opts.surfaced);
    else if (method === 'first-worker') rec = firstWorkerRecord(log, opts.surfaced);
    else if (method === 'majority') rec = majorityRecord(log, majority);
    else rec = await judgeRecord(log, method, opts.judge!);
    records.push(rec);
    opts.onRecord?.(rec, records.length, scorable.length);
  }
  return { records, score: scoreAttribution(records), official: scoreOfficial(records), unscorable };
}

/**
 * The judge over `logs`, `parallel` logs at once (issue 26). A log's calls are its own (seeds
 * `seed + i` from its own call count, keys by log id), so logs are independent; they go through
 * core/schedule `runOrdered` on a lane `parallel` wide, and each log's calls (`onCall`, e.g.
 * `--record-calls`) and its record are handed on in log order, once every log before it is done:
 * the records, the recording and the tables are the same at any `parallel`.
 */
async function judgeInFlight(logs: readonly WhoAndWhenLog[], method: LlmJudgeMethod, judge: JudgeOptions, parallel: number, onRecord: (rec: AttributionRecord) => void): Promise<void> {
  const width = Math.max(1, Math.min(parallel, logs.length));
  if (judge.signal && width > 1) setMaxListeners(16 * width, judge.signal);
  const lane = new Scheduler({ capacity: width }).lane(`attribution ${method}`, width);
  try {
    await runOrdered({
      items: logs, lane,
      run: async (log) => {
        const calls: JudgeCall[] = [];
        const rec = await judgeRecord(log, method, { ...judge, onCall: (c) => void calls.push(c) });
        return { rec, calls };
      },
      commit: ({ rec, calls }) => {
        for (const c of calls) judge.onCall?.(c);
        onRecord(rec);
      },
    });
  } finally {
    lane.close();
  }
}
