import path from 'node:path';
import type { Command } from 'commander';
import { massFamily, runRank } from '../../core/mass/index.ts';
import { openStore } from '../../core/store/index.ts';
import { getDataset } from '../../core/tasks/index.ts';
import { act, UsageError, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';
import { addOuterOptions, providerMaker, rsiOptionsOf, type RsiCommandDeps, type RsiFlags } from './rsi.ts';
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
      'JSONL with the workflow stripped. A crossed threshold halts with the report instead. Resumable: same --loop-id.',
    ].join('\n'));
  addOuterOptions(cmd).action(act(ctx, (o: RsiFlags) => rankCommand(o, ctx.io, deps)));
}

async function rankCommand(v: RsiFlags, io: Io, deps: RsiCommandDeps): Promise<number> {
  const family = massFamily(v.dataset);
  if (v.champions) throw new UsageError('rank runs one design for every task (--design); --champions is for rsi');
  const o = rsiOptionsOf({ ...v, loopId: v.loopId ?? `rank-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}` }, family, v.db);
  const store = openStore(v.db);
  const provider = await providerMaker(v, deps)(o.baseModel);
  try {
    const res = await runRank({
      store, provider, family, tasks: getDataset(family.dataset).load({ split: 'train', limit: v.tasks }), config: { mass: { loopId: o.loopId } },
      onEvent: (e) => e.done === e.total && io.stderr(`${e.taskId}: ${e.total} ${e.type}s done\n`),
    }, { ...o.outer, prefix: o.loopId, design: o.design, ...(o.tamperer && { tamperer: o.tamperer }), outDir: o.outDir, thresholds: o.thresholds });
    if (v.json) {
      io.stdout(JSON.stringify({ ...res, rankings: res.rankings.map(({ workspaces: _w, ...r }) => r), exports: Object.fromEntries(Object.entries(res.exports).map(([k, e]) => [k, { dir: e.dir, train: e.train.length, validation: e.validation.length }])) }) + '\n');
    } else {
      io.stdout(formatRank(res.rankings, Object.fromEntries(Object.entries(res.exports).map(([k, e]) => [k, `${e.dir} (${e.train.length} train, ${e.validation.length} validation conversations)`]))));
      if (res.tampered) io.stdout(formatTamper(res.tampered) + '\n');
      if (res.check.halt) io.stdout(formatHalt({ cycle: 1, prefix: o.loopId, reasons: res.check.reasons, tampered: res.tampered, file: path.join(o.outDir, 'env'), quarantine: res.rankings.flatMap((r) => r.runs.filter((x) => x.quarantined).map((x) => ({ runId: x.runId, taskId: x.taskId, rank: x.rank, tampered: !!x.tampered, reasons: x.guard.reasons.map((q) => q.code) }))) }));
    }
    return res.check.halt ? 3 : 0;
  } finally {
    await provider.dispose();
    store.close();
  }
}
