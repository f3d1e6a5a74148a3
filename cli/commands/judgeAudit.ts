/**
 * `flowlab judge-audit <experiment-id>`: the judge audit of a judge run on `learn-judge` pairs
 * (core/mass/pairAudit.ts; issue 25, part 3) — for the ordinary mistakes and the blind spot
 * apart: verdicts, position consistency over the pairs judged in both orders, agreement and
 * Cohen's kappa with the grader, with 95% intervals; whether it clears issue 25's bar and whether
 * the blind spot sits at chance. The experiment is any `flowlab run` (or a train-loop's held-out
 * evaluation) of a judge workflow such as examples/judge-learn.yaml on a learn-judge split.
 */
import type { Command } from 'commander';
import { formatJudgeAudit } from '../../core/guards/index.ts';
import { JUDGE_BAR, auditJudgePairs, judgedPairTasks, type PairAuditReport } from '../../core/mass/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';

export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-id> [--db file] [--json]')
    .description([
      "Audits a judge's verdicts on learn-judge pairs (each pair judged in both orders): the ordinary",
      'mistakes and the blind spot apart; position consistency, agreement and Cohen\'s kappa with the',
      `grader, 95% intervals; the bar (position consistency >= ${JUDGE_BAR.minPositionConsistency}, kappa >= ${JUDGE_BAR.minKappa}).`,
    ].join('\n'))
    .argument('<experiment-id>', 'a judge run on a learn-judge split')
    .addOption(dbOption())
    .option('--json', 'print one JSON object')
    .action(act(ctx, (id: string, o: { db: string; json?: boolean }) => judgeAuditCommand(id, o, ctx.io)));
}

async function judgeAuditCommand(id: string, values: { db: string; json?: boolean }, io: Io): Promise<number> {
  const store = openStore(values.db, { mustExist: true });
  try {
    const exp = store.getExperiment(id);
    const { tasks, skipped } = judgedPairTasks(store.listTasks(exp.id), store.listRuns(exp.id));
    if (!tasks.length) throw new CommandError('NO_DATA', `experiment ${exp.id} (dataset ${exp.dataset}) has no judged learn-judge task: run a judge workflow on learn-judge first`);
    const report = auditJudgePairs(`judge of ${exp.id}`, tasks);
    io.stdout(values.json ? JSON.stringify({ experiment: exp.id, dataset: exp.dataset, tasks: tasks.length, skipped, ...report }) + '\n' : formatPairAudit(report, exp.id, exp.dataset, tasks.length, skipped));
    return 0;
  } finally {
    store.close();
  }
}

const f3 = (x: number) => x.toFixed(3);

/** The report as printed: both audits, agreement per kind of wrong answer, the bar and the blind spot's verdict. */
export function formatPairAudit(r: PairAuditReport, experiment: string, dataset: string, n: number, skipped: number): string {
  const lines = [`Judge audit of ${experiment} (${dataset}): ${n} judged tasks${skipped ? `, ${skipped} left out (no run or not a learn-judge task)` : ''}${r.unread ? `, ${r.unread} verdicts unread` : ''}`, ''];
  lines.push(formatJudgeAudit(r.ordinary), formatJudgeAudit(r.blind));
  lines.push('Agreement with the grader per kind of wrong answer:');
  for (const [kind, p] of Object.entries(r.byMistake)) lines.push(`  ${kind}: ${p.rate === null ? 'n/a' : `${f3(p.rate)} [${f3(p.ci![0])}, ${f3(p.ci![1])}] (${p.k}/${p.n})`}`);
  const pc = r.ordinary.positionConsistency.rate;
  const kappa = r.ordinary.kappa.value;
  lines.push('', `Bar (ordinary mistakes: position consistency >= ${JUDGE_BAR.minPositionConsistency}, kappa >= ${JUDGE_BAR.minKappa}): ${r.passesBar ? 'PASSED' : 'NOT PASSED'} (position consistency ${pc === null ? 'n/a' : f3(pc)}, kappa ${kappa === null ? 'n/a' : f3(kappa)})`);
  const b = r.blind.agreement;
  lines.push(`Blind spot: ${r.blindAtChance === null ? 'no blind-spot pair judged' : `agreement ${f3(b.rate!)} [${f3(b.ci![0])}, ${f3(b.ci![1])}] ${r.blindAtChance ? `holds 0.5: at chance ${r.passesBar ? '(a judge that judges the ordinary mistakes and shares the blind spot)' : '(read with the ordinary mistakes: this judge does not clear the bar there either)'}` : 'excludes 0.5: not at chance (the judge sees some of the blind spot)'}`}`);
  return lines.join('\n') + '\n';
}
