import type { Command } from 'commander';
import { trainLoopOf } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';
import { rerunExperiment, rerunTrainLoop, scratchStore, type ExperimentRerun, type LoopRerun } from '../reproRerun.ts';

interface VerifyFlags {
  db: string;
  keep?: string;
  json?: boolean;
}

/** `flowlab verify <experiment-or-loop-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-or-loop-id> [--db file] [--keep dir] [--json]')
    .description([
      'Re-runs a stored experiment (every task) or train loop (every iteration) into a scratch database',
      'with the same workflow text, tasks, models, seeds and settings, and prints "identical" or the first',
      "difference: for runs, diff's first diverging node of the lowest task that differs; for a train loop,",
      'the first version file (role, iteration) whose sha256 differs. Also names what changed in the',
      'reproducibility fingerprint (code commit, library versions, model files) since the original ran.',
      'Exit 0 when identical, 1 when not. A study cell is an experiment: verify it by its id.',
    ].join('\n'))
    .argument('<id>', 'an experiment id, or a train loop id (tl-...)')
    .addOption(dbOption())
    .option('--keep <dir>', 'write the scratch database (and versions) to this folder and keep it')
    .option('--json', 'print one JSON object')
    .action(act(ctx, (id: string, o: VerifyFlags) => verifyCommand(id, o, ctx.io)));
}

async function verifyCommand(id: string, flags: VerifyFlags, io: Io): Promise<number> {
  const src = openStore(flags.db, { mustExist: true });
  const scratch = scratchStore(flags.keep);
  try {
    const loop = src.trainLoops.find(id) ?? (src.findExperiment(id) ? undefined : trainLoopOf(src, id));
    if (loop) {
      const r = await rerunTrainLoop(src, scratch, loop, io);
      io.stdout(flags.json ? JSON.stringify({ kind: 'train-loop', ...r, identical: isSame(r) }) + '\n' : formatLoopVerify(r));
      return isSame(r) ? 0 : 1;
    }
    if (!src.findExperiment(id)) throw new CommandError('NOT_FOUND', `no experiment or train loop "${id}" in ${flags.db}`);
    const r = await rerunExperiment(src, scratch.store, id, flags.db, io);
    io.stdout(flags.json ? JSON.stringify({ kind: 'experiment', ...r, identical: isSame(r) }) + '\n' : formatExperimentVerify(r));
    return isSame(r) ? 0 : 1;
  } finally {
    scratch.dispose();
    src.close();
  }
}

/** Identical: every run (version) the same and the output digests equal. */
export function isSame(r: ExperimentRerun | LoopRerun): boolean {
  const c = r.comparison as { identical: number; tasks?: number; versions?: number };
  return c.identical === (c.tasks ?? c.versions) && r.digest.original === r.digest.rerun;
}

const short = (s: string | undefined, n = 80) => (s === undefined ? '(none)' : JSON.stringify(s.length > n ? `${s.slice(0, n)}...` : s));

/** The verdict on an experiment re-run, as `flowlab verify` prints it. */
export function formatExperimentVerify(r: ExperimentRerun): string {
  const c = r.comparison;
  const lines = [`flowlab verify ${r.experimentId}: ${isSame(r) ? 'identical' : 'DIFFERENT'} (${c.identical}/${c.tasks} runs identical; repeatability: ${r.repeatability})`];
  lines.push(`  output digest   original ${r.digest.original.slice(0, 16)}   re-run ${r.digest.rerun.slice(0, 16)}${r.storedDigest ? `   stored ${r.storedDigest.slice(0, 16)}` : ''}`);
  if (c.first) {
    const f = c.first;
    lines.push(`  first difference: task ${f.taskIndex}${f.nodeId ? `, node ${f.nodeId} (attempt ${f.attempt})` : ''}: ${f.what}`);
    if (f.a !== undefined || f.b !== undefined) lines.push(`    original ${short(f.a)}`, `    re-run   ${short(f.b)}`);
  }
  if (r.fingerprintChanges.length) lines.push(`  changed since the original ran: ${r.fingerprintChanges.join(', ')}`);
  return lines.join('\n') + '\n';
}

/** The verdict on a train-loop re-run. */
export function formatLoopVerify(r: LoopRerun): string {
  const c = r.comparison;
  const lines = [`flowlab verify ${r.loopId}: ${isSame(r) ? 'identical' : 'DIFFERENT'} (${c.identical}/${c.versions} version files byte-identical; repeatability: ${r.repeatability})`];
  lines.push(`  versions digest original ${r.digest.original.slice(0, 16)}   re-run ${r.digest.rerun.slice(0, 16)}`);
  if (c.first) lines.push(`  first difference: ${c.first.role} iteration ${c.first.iteration}: sha256 ${c.first.a?.slice(0, 16) ?? '(none)'} vs ${c.first.b?.slice(0, 16) ?? '(none)'}`);
  if (r.fingerprintChanges.length) lines.push(`  changed since the original ran: ${r.fingerprintChanges.join(', ')}`);
  return lines.join('\n') + '\n';
}
