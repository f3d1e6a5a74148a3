/**
 * One outer loop without training (`flowlab rank`): the champion's runs per task, the ring
 * tournament, Bradley-Terry, the guards, the self-judge's audit (core/guards judgeAudit), and
 * both arms' SFT exports — or, when a guard threshold is crossed, the halt report and no export.
 * An UNRELIABLE JUDGE's arm (`self`) is not exported unless `allowUnreliableJudge`, and then its
 * manifest carries `unreliableJudge` with the audit's reasons.
 */
import path from 'node:path';
import { killPoint } from '../killPoint.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { Store } from '../store/index.ts';
import type { Task } from '../tasks/types.ts';
import { checkThresholds, type Agreement, type GuardThresholds, type ThresholdCheck } from './guards.ts';
import { rankTask, type OuterEvent, type OuterOptions, type TaskRanking } from './outer.ts';
import { ARMS, exportArm, tamperSummary, type Arm, type ArmExport, type TamperSummary } from './rsi.ts';
import type { MassDesign, MassFamily } from './types.ts';
import { storeHalt, storeRankings } from './outerRecords.ts';
import { rankingsAudit, storeJudgeAudit } from './judgeAudit.ts';
import type { JudgeAudit } from '../guards/index.ts';

export interface RankDeps {
  store: Store;
  provider: ModelProvider;
  family: MassFamily;
  tasks: readonly Task[];
  signal?: AbortSignal;
  onEvent?: (e: OuterEvent) => void;
  config?: Record<string, unknown>;
  /** Replay: the provider serving one step's recorded calls (core/mass/outerReplay.ts). */
  providerFor?: (experimentId: string) => ModelProvider;
  /** Runs and judge pairs in flight at once (core/mass/inFlight.ts; default 1); the records do not depend on it. */
  parallel?: number;
  /** Each task's champion (per-task champions, e.g. a stored inner loop's); absent: `design` for every task. */
  champion?: (task: Task, taskIndex: number) => { design: MassDesign | null; version: number | null };
}

export interface RankResult {
  rankings: TaskRanking[];
  runs: number;
  quarantined: number;
  agreement: Agreement;
  tampered: TamperSummary | null;
  check: ThresholdCheck;
  /** The self-judge's audit over every judged pair and the swapped sample (core/guards judgeAudit; stored as `judge-audit`). */
  judgeAudit: JudgeAudit;
  /** Both arms' exports; empty when the loop halted; no `self` when the judge is unreliable and `allowUnreliableJudge` is off. */
  exports: Partial<Record<Arm, ArmExport>>;
  /** Set when the self-judge arm's export was refused: why (the audit's reasons). */
  refused?: { arm: 'self'; reasons: string[] };
}

/**
 * Ranks every task (under its champion: `deps.champion`'s, else `o.design`) and exports both arms
 * to `<outDir>/<arm>/`; a crossed threshold is recorded as the loop's halt (`outer-halt` under
 * `o.prefix`, cycle null) and nothing is exported. See the module comment.
 */
export async function runRank(deps: RankDeps, o: OuterOptions & { outDir: string; thresholds: GuardThresholds; judge?: string; allowUnreliableJudge?: boolean }): Promise<RankResult> {
  const rankings: TaskRanking[] = [];
  for (const [i, task] of deps.tasks.entries()) {
    const champ = deps.champion?.(task, i);
    rankings.push(await rankTask(task, i, {
      store: deps.store, provider: deps.provider, family: deps.family, envRoot: path.join(o.outDir, 'env'),
      ...(deps.signal && { signal: deps.signal }), ...(deps.onEvent && { onEvent: deps.onEvent }), ...(deps.config && { config: deps.config }), ...(deps.providerFor && { providerFor: deps.providerFor }),
      ...(deps.parallel !== undefined && { parallel: deps.parallel }),
    }, champ ? { ...o, design: champ.design, version: champ.version } : o));
  }
  storeRankings(deps.store, o.prefix, o.prefix, null, rankings, { train: o.train, validation: o.validation });
  killPoint('outer-rankings-stored');
  const runs = rankings.reduce((s, r) => s + r.runs.length, 0);
  const quarantined = rankings.reduce((s, r) => s + r.runs.filter((x) => x.quarantined).length, 0);
  const decided = rankings.reduce((s, r) => s + r.agreement.decided, 0);
  const agreed = rankings.reduce((s, r) => s + r.agreement.agreed, 0);
  const agreement: Agreement = { decided, agreed, verifierTies: rankings.reduce((s, r) => s + r.agreement.verifierTies, 0), rate: decided ? agreed / decided : null };
  const check = checkThresholds({ runs, quarantined, agreement }, o.thresholds);
  const judgeAudit = rankingsAudit(o.judge ?? 'self-judge', rankings);
  storeJudgeAudit(deps.store, o.prefix, o.prefix, judgeAudit);
  const exports: RankResult['exports'] = {};
  let refused: RankResult['refused'];
  if (check.halt) storeHalt(deps.store, o.prefix, { cycle: null, reasons: check.reasons });
  if (!check.halt) {
    for (const arm of ARMS) {
      // The self-judge arm's cut is the judge's ranking: an unreliable judge's is refused unless allowed, then marked.
      if (arm === 'self' && judgeAudit.unreliable && !o.allowUnreliableJudge) {
        refused = { arm, reasons: judgeAudit.reasons };
        continue;
      }
      const mark = arm === 'self' && judgeAudit.unreliable ? { unreliableJudge: { judge: judgeAudit.judge, reasons: judgeAudit.reasons, allowedBy: '--allow-unreliable-judge' } } : {};
      exports[arm] = exportArm(deps.store, rankings, arm, path.join(o.outDir, arm), { prefix: o.prefix, ...mark });
      killPoint('outer-arm-exported');
    }
  }
  return { rankings, runs, quarantined, agreement, tampered: tamperSummary(rankings, o.train), check, judgeAudit, exports, ...(refused && { refused }) };
}
