import path from 'node:path';
import type { Command } from 'commander';
import { startExperiment, trainLoopOf, type ExperimentOutcome } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, dbOption, pairRecord, rolePairOption, type CommandContext } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { cliDeps, toolsOfExperiment } from '../wiring.ts';
import { formatReport, reportJson } from '../format.ts';
import { formatBlame, formatRollouts } from '../formatExperiments.ts';
import type { Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';
import { addParallelOption, parallelOf } from '../parallel.ts';

export interface ResumeFlags {
  db: string;
  model?: string;
  roleModel?: Array<[string, string]>;
  force?: boolean;
  json?: boolean;
  parallel?: number;
}

/** `flowlab resume <experiment-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-id | loop-id> [--db file] [--model file] [--role-model role=file] [--force] [--parallel n] [--json]')
    .description([
      'A train loop (its loop id, or the id of any of its experiments) is continued from its last',
      'complete iteration with the same loop id, lineage, iteration numbers, tasks and seeds; an',
      "iteration whose rollouts are stored is trained from them, not sampled again (docs/laptop-rl.md).",
      'Finishes an interrupted, cancelled or halted experiment: runs only the tasks with no stored run,',
      'with the same workflow text, models, seeds (and, for blame-eval, the same SIMULATED faults).',
      'Finished runs are never redone or duplicated. Model files are checked against the fingerprint',
      'taken when the experiment started; a moved file can be given again with --model / --role-model',
      '(it must be the same file). --force takes over an experiment whose recorded process id belongs',
      'to a live process (a reused pid after a crash). LoRA adapters (--role-lora) are applied again',
      'from the stored config, and must be the same files.',
    ].join('\n'))
    .argument('<experiment-id>', 'the experiment to finish, or the train loop to continue')
    .addOption(dbOption())
    .option('--model <file.gguf>', 'the "default" model file again, if it moved')
    .addOption(rolePairOption('--role-model <role=file>', "a role's model file again, if it moved (repeatable)"))
    .option('--force', 'take over an experiment whose recorded process id belongs to a live process')
    .option('--json', 'print one JSON object');
  addParallelOption(cmd);
  cmd.action(act(ctx, (id: string, o: ResumeFlags) => resumeCommand(id, o, ctx.io)));
}

/**
 * Resumes experiment or train loop `experimentId` (what `flowlab resume` and `flowlab job resume
 * <run|blame-eval|rollouts|train-loop> <id>` run). Exit codes as the experiment's command.
 */
export async function resumeCommand(experimentId: string, values: ResumeFlags, io: Io): Promise<number> {
  const roles = Object.fromEntries(Object.entries(pairRecord(values.roleModel)).map(([r, f]) => [r, path.resolve(f)]));
  const store = openStore(values.db, { mustExist: true, write: true });
  try {
    if (trainLoopOf(store, experimentId)) {
      const { resumeTrainLoopCommand } = await import('./resumeTrainLoop.ts');
      return await resumeTrainLoopCommand(store, experimentId, { models: { ...(values.model && { default: path.resolve(values.model) }), roles }, force: Boolean(values.force), json: Boolean(values.json) }, io);
    }
    let started = false;
    const bar = progress(io, (e) => io.stderr(`Resuming ${e.experimentId}: ${e.total - e.done} task(s) left.\n`));
    const tools = asCliSync(() => toolsOfExperiment(store.getExperiment(experimentId).config, values.db, io));
    const handle = await asCli(() => startExperiment({
      kind: 'resume', experimentId, force: Boolean(values.force), ...parallelOf(values), models: { ...(values.model && { default: path.resolve(values.model) }), roles },
    }, cliDeps(store, tools), { onEvent: (e) => { started ||= e.type === 'started'; bar.onEvent(e); } }));
    if (!started) {
      // Nothing pending: nothing was started, the outcome is there already.
      const o = await handle.done;
      return nothingToResume(o, Boolean(values.json), io, store.getExperiment(o.experimentId).status);
    }
    const outcome = settled(await bar.follow(handle));
    const id = outcome.experimentId;
    if (outcome.blame) {
      const { inject, report: blame } = outcome.blame;
      io.stdout(values.json ? JSON.stringify({ experimentId: id, simulated: true, inject, ...blame }) + '\n' : formatBlame(blame, id, inject, outcome.report.accuracy));
    } else if (outcome.rollouts) {
      const { config: ro, summary } = outcome.rollouts;
      io.stdout(values.json ? JSON.stringify({ experimentId: id, ...summary, mode: ro.mode, group: ro.group, temperature: ro.temperature, accuracy: outcome.report.accuracy, wallSeconds: outcome.report.wallSeconds }) + '\n' : formatRollouts(id, summary, ro, outcome.report.wallSeconds));
    } else {
      const exp = store.getExperiment(id);
      io.stdout(values.json ? reportJson(outcome.report) : formatReport(outcome.report, `${exp.workflowName} on ${exp.dataset}/${exp.split} (resumed)`));
    }
    return exitOf(outcome);
  } finally {
    store.close();
  }
}

/** An experiment with every task stored: says so (a blame evaluation prints its blame again). */
function nothingToResume(o: ExperimentOutcome, json: boolean, io: Io, status: string): number {
  io.stderr(`Nothing to resume: ${o.experimentId} has every task stored (${status}).\n`);
  if (o.blame) io.stdout(json ? JSON.stringify({ experimentId: o.experimentId, simulated: true, ...o.blame.report }) + '\n' : formatBlame(o.blame.report, o.experimentId, o.blame.inject, 0));
  return 0;
}
