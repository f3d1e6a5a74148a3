/**
 * One outer loop without training (`flowlab rank`): the champion's runs per task, the ring
 * tournament, Bradley-Terry, the guards, and both arms' SFT exports — or, when a guard threshold
 * is crossed, the halt report and no export.
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
  /** Both arms' exports; empty when the loop halted. */
  exports: Partial<Record<Arm, ArmExport>>;
}

/**
 * Ranks every task (under its champion: `deps.champion`'s, else `o.design`) and exports both arms
 * to `<outDir>/<arm>/`; a crossed threshold is recorded as the loop's halt (`outer-halt` under
 * `o.prefix`, cycle null) and nothing is exported. See the module comment.
 */
export async function runRank(deps: RankDeps, o: OuterOptions & { outDir: string; thresholds: GuardThresholds }): Promise<RankResult> {
  const rankings: TaskRanking[] = [];
  for (const [i, task] of deps.tasks.entries()) {
    const champ = deps.champion?.(task, i);
    rankings.push(await rankTask(task, i, {
      store: deps.store, provider: deps.provider, family: deps.family, envRoot: path.join(o.outDir, 'env'),
      ...(deps.signal && { signal: deps.signal }), ...(deps.onEvent && { onEvent: deps.onEvent }), ...(deps.config && { config: deps.config }), ...(deps.providerFor && { providerFor: deps.providerFor }),
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
  const exports: RankResult['exports'] = {};
  if (check.halt) storeHalt(deps.store, o.prefix, { cycle: null, reasons: check.reasons });
  if (!check.halt) {
    for (const arm of ARMS) {
      exports[arm] = exportArm(deps.store, rankings, arm, path.join(o.outDir, arm), { prefix: o.prefix });
      killPoint('outer-arm-exported');
    }
  }
  return { rankings, runs, quarantined, agreement, tampered: tamperSummary(rankings, o.train), check, exports };
}
