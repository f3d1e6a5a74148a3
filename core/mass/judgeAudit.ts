/**
 * The MASS self-judge's audit (core/guards judgeAudit) over an outer loop's rankings: every
 * judged pair of the ring tournaments against the external verifier's verdict on the same pair
 * (the run with the higher verified score wins; equal scores tie), and the swapped sample each
 * task judged again (`TaskRanking.swaps`). Stored as the MASS record `judge-audit` (key: the
 * loop's step prefix), shown by `flowlab rank` / `rsi` and the MASS view. Pure but for `storeJudgeAudit`.
 */
import { auditJudge, graderVerdict, type JudgeAudit, type JudgeThresholds } from '../guards/index.ts';
import type { Store } from '../store/index.ts';
import type { TaskRanking } from './outer.ts';

export const JUDGE_AUDIT = 'judge-audit';

/** The audit of the judge that judged `rankings` (named `judge`, e.g. `self-judge (stories260K.gguf)`). */
export function rankingsAudit(judge: string, rankings: readonly Pick<TaskRanking, 'pairs' | 'swaps' | 'runs'>[], thresholds?: JudgeThresholds): JudgeAudit {
  const pairs = rankings.flatMap((r) => {
    const verified = new Map(r.runs.map((x) => [x.runId, x.verified]));
    return r.pairs.map((p) => {
      const a = verified.get(p.a);
      const b = verified.get(p.b);
      return { winner: p.winner, gold: a === undefined || b === undefined ? undefined : graderVerdict(a, b) };
    });
  });
  return auditJudge(judge, pairs, rankings.flatMap((r) => r.swaps ?? []), thresholds);
}

/** Stores an audit under `loopId` (key `prefix`), once: a resumed loop keeps the first. */
export function storeJudgeAudit(store: Store, loopId: string, prefix: string, audit: JudgeAudit): void {
  if (!store.mass.get(loopId, JUDGE_AUDIT, prefix)) store.mass.put({ evolutionId: loopId, kind: JUDGE_AUDIT, key: prefix, value: audit });
}

/** The audits stored under a loop or evolution, by key. */
export function storedJudgeAudits(store: Store, loopId: string): Array<{ key: string; audit: JudgeAudit }> {
  return store.mass.list(loopId, JUDGE_AUDIT).map((r) => ({ key: r.key, audit: r.value as JudgeAudit }));
}

/**
 * The inner loop's self-judge audited from an evolution's records (`flowlab evolve`, no judge
 * call): each stored verdict against the external grader's verdict on the same two workspaces
 * (their stored scores), and position consistency over the verdicts judged again with A and B
 * swapped (records `verdict-swap`, the inner loop's `auditSwaps`; none: n/a).
 */
export function evolutionAudit(judge: string, records: ReadonlyArray<{ kind: string; value: unknown }>): JudgeAudit {
  const score = new Map<string, number>();
  for (const r of records) {
    const w = r.value as { runId?: unknown; score?: unknown };
    if (r.kind === 'workspace' && typeof w.runId === 'string' && typeof w.score === 'number') score.set(w.runId, w.score);
  }
  // A verdict the judge was not asked for (`asked: false`: two answers that read the same, a tie by rule) says nothing about the judge.
  const pairs = records.filter((r) => r.kind === 'verdict' && (r.value as { asked?: unknown }).asked !== false).map((r) => {
    const v = r.value as { a: string; b: string; winner: 'A' | 'B' | 'tie' };
    const [a, b] = [score.get(v.a), score.get(v.b)];
    return { winner: v.winner, gold: a === undefined || b === undefined ? undefined : graderVerdict(a, b) };
  });
  const swaps = records.filter((r) => r.kind === 'verdict-swap').map((r) => {
    const v = r.value as { first: 'A' | 'B' | 'tie'; swapped: 'A' | 'B' | 'tie' };
    return { first: v.first, swapped: v.swapped };
  });
  return auditJudge(judge, pairs, swaps);
}
