/**
 * The judge audit on `learn-judge` pairs (issue 25, part 3): the judge's verdicts on the held-out
 * pairs, each pair judged in both orders (tasks 2k and 2k+1, core/tasks/learnJudge.ts), audited
 * with core/guards `auditJudge` separately for the **ordinary mistakes** and the **blind spot**
 * (the plausible wrong unit): verdict distribution, position consistency (the pair's two verdicts
 * mirror each other), agreement with the grader and Cohen's kappa against it, with 95% Wilson and
 * Cohen-SE intervals. Plus the bar issue 25 sets for a judge that judges (`JUDGE_BAR`: position
 * consistency ≥ 0.9 and kappa ≥ 0.6 on the ordinary mistakes) and, for the blind spot, whether its
 * agreement is at chance (the Wilson interval holds 0.5). Pure.
 */
import { readJudgeVerdict, type JudgeTaskMeta } from '../tasks/index.ts';
import { auditJudge, wilsonInterval, type JudgeAudit, type PairVerdict3, type Proportion, type SwappedPair } from '../guards/index.ts';

/** One judged learn-judge task: which pair and order it showed, its wrong answer's kind, the right side, and the verdict read (null: none). */
export interface JudgedPairTask {
  pair: number;
  order: 0 | 1;
  blind: boolean;
  mistake: string;
  gold: 'A' | 'B';
  verdict: 'A' | 'B' | null;
}

/** Issue 25's bar for a self-judge that judges (on the ordinary mistakes). */
export const JUDGE_BAR = { minPositionConsistency: 0.9, minKappa: 0.6 } as const;

export interface PairAuditReport {
  judge: string;
  ordinary: JudgeAudit;
  blind: JudgeAudit;
  /** Agreement with the grader per kind of wrong answer. */
  byMistake: Record<string, Proportion>;
  /** Tasks whose verdict could not be read (counted as a tie, and as inconsistent in the swap test). */
  unread: number;
  /** Ordinary mistakes: position consistency ≥ 0.9 and kappa ≥ 0.6 (point values). */
  passesBar: boolean;
  /** Blind spot: the agreement's 95% Wilson interval holds 0.5 (null with no blind pair). */
  blindAtChance: boolean | null;
}

const prop = (k: number, n: number): Proportion => ({ n, k, rate: n ? k / n : null, ci: wilsonInterval(k, n) });

function auditOf(judge: string, tasks: readonly JudgedPairTask[]): JudgeAudit {
  const pairs = tasks.map((t) => ({ winner: (t.verdict ?? 'tie') as PairVerdict3, gold: t.gold as PairVerdict3 }));
  const byPair = new Map<number, JudgedPairTask[]>();
  for (const t of tasks) byPair.set(t.pair, [...(byPair.get(t.pair) ?? []), t]);
  const swaps: SwappedPair[] = [];
  for (const [, ts] of [...byPair].sort((a, b) => a[0] - b[0])) {
    const first = ts.find((t) => t.order === 0);
    const second = ts.find((t) => t.order === 1);
    if (!first || !second) continue;
    // An unread verdict cannot mirror anything: it counts as inconsistent.
    swaps.push(first.verdict && second.verdict ? { first: first.verdict, swapped: second.verdict } : { first: 'tie', swapped: 'A' });
  }
  return auditJudge(judge, pairs, swaps);
}

/**
 * Audits `judge` on judged learn-judge tasks (see the module doc). A pair counts in the swap test
 * only when both its orders are among `tasks`.
 */
export function auditJudgePairs(judge: string, tasks: readonly JudgedPairTask[]): PairAuditReport {
  const ordinary = auditOf(`${judge}, ordinary mistakes`, tasks.filter((t) => !t.blind));
  const blind = auditOf(`${judge}, blind spot`, tasks.filter((t) => t.blind));
  const byMistake: Record<string, Proportion> = {};
  for (const kind of [...new Set(tasks.map((t) => t.mistake))].sort()) {
    const ts = tasks.filter((t) => t.mistake === kind);
    byMistake[kind] = prop(ts.filter((t) => t.verdict === t.gold).length, ts.length);
  }
  const pc = ordinary.positionConsistency.rate;
  const kappa = ordinary.kappa.value;
  const ci = blind.agreement.ci;
  return {
    judge, ordinary, blind, byMistake,
    unread: tasks.filter((t) => t.verdict === null).length,
    passesBar: pc !== null && kappa !== null && pc >= JUDGE_BAR.minPositionConsistency && kappa >= JUDGE_BAR.minKappa,
    blindAtChance: ci ? ci[0] <= 0.5 && ci[1] >= 0.5 : null,
  };
}

/**
 * The judged learn-judge tasks of a stored experiment: each planned task's `meta` (pair, order,
 * blind, mistake, class; core/tasks/learnJudge.ts) joined with its run's answer (read with
 * `readJudgeVerdict`) by task index. Tasks without a run or without learn-judge meta are left
 * out; `skipped` counts them.
 */
export function judgedPairTasks(planned: ReadonlyArray<{ taskIndex: number; meta?: Record<string, unknown> }>, runs: ReadonlyArray<{ taskIndex: number; answer?: string; status: string }>): { tasks: JudgedPairTask[]; skipped: number } {
  const byIndex = new Map(runs.map((r) => [r.taskIndex, r]));
  const tasks: JudgedPairTask[] = [];
  let skipped = 0;
  for (const p of planned) {
    const m = p.meta as Partial<JudgeTaskMeta> | undefined;
    const run = byIndex.get(p.taskIndex);
    if (!run || !m || typeof m.pair !== 'number' || (m.order !== 0 && m.order !== 1) || (m.class !== 'A' && m.class !== 'B') || typeof m.blind !== 'boolean') {
      skipped++;
      continue;
    }
    tasks.push({ pair: m.pair, order: m.order, blind: m.blind, mistake: String(m.mistake), gold: m.class, verdict: run.status === 'completed' ? readJudgeVerdict(run.answer) : null });
  }
  return { tasks, skipped };
}
