import path from 'node:path';
import type { Command } from 'commander';
import { massFamily, startRank, type RankResult } from '../../core/mass/index.ts';
import { formatJudgeAudit } from '../../core/guards/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';
import { parallelOf } from '../parallel.ts';
import { addOuterOptions, providerMaker, refuseTaskCounts, replayOuterCommand, rsiOptionsOf, settingsOf, type RsiCommandDeps, type RsiFlags } from './rsi.ts';
import { formatHalt, formatRank, formatTamper } from './rsiFormat.ts';

/** `flowlab rank --model <file.gguf>`: one outer loop (runs, ring tournament, Bradley-Terry, guards, export), no training. */
export function define(cmd: Command, ctx: CommandContext, deps: RsiCommandDeps = {}): void {
  cmd
    .usage('--model <file.gguf> [options]')
    .description([
      "MASS's outer loop without training: the champion (--design, or the bare task) runs N times per task in",
      'protected environments; the self-judge judges a seeded ring tournament (each run against its next k);',
      'Bradley-Terry (MM, 0.5 prior) ranks the runs; the guards quarantine changed environments and claims the',
      "re-check refutes; both arms' cuts (self-judge ranks 1..k, external verifier's top k) are exported as TRL",
      'JSONL with the workflow stripped. A crossed threshold halts with the report instead (recorded as halted).',
      'Resumable: same --loop-id. --champions <evolution-id> runs each task\'s own champion; --replay re-derives a loop without the model.',
    ].join('\n'));
  addOuterOptions(cmd, 'rank').action(act(ctx, (o: RsiFlags) => rankCommand(o, ctx.io, deps)));
}

async function rankCommand(v: RsiFlags, io: Io, deps: RsiCommandDeps): Promise<number> {
  if (v.replay) return replayOuterCommand(v, io, (r) => rankText(r.rank!, r.replay.loopId, r.outDir, v));
  const family = massFamily(v.dataset);
  const o = rsiOptionsOf({ ...v, loopId: v.loopId ?? `rank-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}` }, family, v.db);
  refuseTaskCounts(settingsOf('rank', v, o));
  const store = openStore(v.db);
  const provider = await providerMaker(v, deps)(o.baseModel);
  try {
    const res = await startRank({
      store, provider, ...parallelOf(v),
      onEvent: (e) => e.done === e.total && io.stderr(`${e.taskId}: ${e.total} ${e.type}s done\n`),
    }, settingsOf('rank', v, o));
    io.stdout(rankText(res, o.loopId, o.outDir, v));
    return res.check.halt || res.refused ? 3 : 0;
  } finally {
    await provider.dispose();
    store.close();
  }
}

/** What `rank` prints (its replay prints the same). */
function rankText(res: RankResult, loopId: string, outDir: string, v: Pick<RsiFlags, 'json'>): string {
  if (v.json) return JSON.stringify({ ...res, rankings: res.rankings.map(({ workspaces: _w, ...r }) => r), exports: Object.fromEntries(Object.entries(res.exports).map(([k, e]) => [k, { dir: e.dir, train: e.train.length, validation: e.validation.length }])) }) + '\n';
  const audit = res.judgeAudit;
  // Before anything the judge decided: whether its figures are findings at all (core/guards judgeAudit).
  let text = audit.unreliable ? `UNRELIABLE JUDGE: the ranks, the judge-verifier agreement and the self-judge arm below come from ${audit.judge}, which fails its audit (${audit.reasons.join('; ')}).\n` : '';
  text += formatRank(res.rankings, Object.fromEntries(Object.entries(res.exports).map(([k, e]) => [k, `${e.dir} (${e.train.length} train, ${e.validation.length} validation conversations)${k === 'self' && audit.unreliable ? ' — UNRELIABLE JUDGE, exported by --allow-unreliable-judge (marked in its manifest)' : ''}`])));
  text += formatJudgeAudit(audit);
  if (res.refused) text += `SFT export of the self-judge arm refused: UNRELIABLE JUDGE. Pass --allow-unreliable-judge to export it anyway (its manifest is then marked).\n`;
  if (res.tampered) text += formatTamper(res.tampered) + '\n';
  if (res.check.halt) text += formatHalt({ cycle: 1, prefix: loopId, reasons: res.check.reasons, tampered: res.tampered, file: path.join(outDir, 'env'), quarantine: res.rankings.flatMap((r) => r.runs.filter((x) => x.quarantined).map((x) => ({ runId: x.runId, taskId: x.taskId, rank: x.rank, tampered: !!x.tampered, reasons: x.guard.reasons.map((q) => q.code) }))) });
  return text;
}
