import type { Command } from 'commander';
import { trainLoopOf } from '../../core/experiments/index.ts';
import { decodeStored, openStore, type SqliteStore } from '../../core/store/index.ts';
import { PlanSchema, studyCells, type StudyPlan, type StudyState } from '../../core/studies/index.ts';
import { act, dbOption, type CommandContext } from '../args.ts';
import { CommandError } from '../errors.ts';
import type { Io } from '../io.ts';
import { notRerunnable, rerunExperiment, rerunTrainLoop, scratchStore, type ExperimentRerun, type LoopRerun } from '../reproRerun.ts';

interface VerifyFlags {
  db: string;
  keep?: string;
  json?: boolean;
}

/** `flowlab verify <experiment-or-loop-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-loop-or-study-id> [--db file] [--keep dir] [--json]')
    .description([
      'Re-runs a stored experiment (every task) or train loop (every iteration) into a scratch database',
      'with the same workflow text, tasks, models, seeds and settings, and prints "identical" or the first',
      "difference: for runs, diff's first diverging node of the lowest task that differs; for a train loop,",
      'the first version file (role, iteration) whose sha256 differs. Also names what changed in the',
      'reproducibility fingerprint (code commit, library versions, model files) since the original ran.',
      'A study (st-...) re-runs its train loops and then its cells. Exit 0 when identical, 1 when not.',
    ].join('\n'))
    .argument('<id>', 'an experiment id, a train loop id (tl-...) or a study id (st-...)')
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
    const study = src.studies.find(id);
    if (study) return await verifyStudy(src, scratch, study.id, decodeStored(PlanSchema, study.plan, `study ${study.id}`, 'plan'), study.state as StudyState, flags, io);
    if (!src.findExperiment(id) && src.repro.find(id)?.kind === 'evolution') {
      throw new CommandError('WRONG_KIND', `${id} is a MASS evolution: verify re-runs experiments, train loops and studies; check an evolution against its recorded calls with flowlab evolve --replay ${id}`);
    }
    const exp = src.findExperiment(id);
    if (!exp) throw new CommandError('NOT_FOUND', `no experiment, train loop or study "${id}" in ${flags.db}`);
    if (exp.status !== 'completed' && exp.status !== 'failed' && notRerunnable(exp.kind, exp.config?.mass !== undefined) === null) {
      const stored = src.listRuns(id).length;
      throw new CommandError('INCOMPLETE', `${id} is ${exp.status} (${stored} of ${src.listTasks(id).length} task(s) stored): verify compares a finished experiment with a re-run of it; finish it first with flowlab resume ${id}`);
    }
    const r = await rerunExperiment(src, scratch.store, id, flags.db, io);
    io.stdout(flags.json ? JSON.stringify({ kind: 'experiment', ...r, identical: isSame(r) }) + '\n' : formatExperimentVerify(r));
    return isSame(r) ? 0 : 1;
  } finally {
    scratch.dispose();
    src.close();
  }
}

/**
 * A study: each of its train loops re-run from its plan (version hashes compared), then each
 * cell's experiment re-run (runs compared); identical when every part is. The cells re-run on the
 * original loops' version files, which the loop re-runs have just shown to be the same bytes.
 */
async function verifyStudy(src: SqliteStore, scratch: ReturnType<typeof scratchStore>, studyId: string, plan: StudyPlan, state: StudyState, flags: VerifyFlags, io: Io): Promise<number> {
  const loops: LoopRerun[] = [];
  for (const unit of Object.values(state.units ?? {})) loops.push(await rerunTrainLoop(src, scratch, src.trainLoops.get(unit.loopId), io));
  const cells: ExperimentRerun[] = [];
  for (const cell of studyCells(plan, studyId, new Set(state.skippedZones ?? []))) {
    if (src.findExperiment(cell.experimentId)) cells.push(await rerunExperiment(src, scratch.store, cell.experimentId, flags.db, io));
  }
  const same = loops.every(isSame) && cells.every(isSame);
  if (flags.json) {
    io.stdout(JSON.stringify({ kind: 'study', studyId, identical: same, loops: loops.map((r) => ({ ...r, identical: isSame(r) })), cells: cells.map((r) => ({ ...r, identical: isSame(r) })) }) + '\n');
  } else {
    const lines = [`flowlab verify ${studyId}: ${same ? 'identical' : 'DIFFERENT'} (${loops.filter(isSame).length}/${loops.length} train loops, ${cells.filter(isSame).length}/${cells.length} cells identical)`];
    for (const r of loops) lines.push(...formatLoopVerify(r).trimEnd().split('\n').map((l) => `  ${l}`));
    for (const r of cells) lines.push(...formatExperimentVerify(r).trimEnd().split('\n').map((l) => `  ${l}`));
    io.stdout(lines.join('\n') + '\n');
  }
  return same ? 0 : 1;
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
