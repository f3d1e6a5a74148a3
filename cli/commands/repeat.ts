import type { Command } from 'commander';
import { sampleTaskIndices } from '../../core/repro/index.ts';
import { openStore } from '../../core/store/index.ts';
import { act, dbOption, intOption, type CommandContext } from '../args.ts';
import type { Io } from '../io.ts';
import { rerunExperiment, scratchStore } from '../reproRerun.ts';

interface RepeatFlags {
  db: string;
  tasks: number;
  seed: number;
  json?: boolean;
}

/** `flowlab repeat <experiment-id>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<experiment-id> [--tasks N] [--seed S] [--db file] [--json]')
    .description([
      "Measures repeatability: re-runs a seeded sample of an experiment's tasks into a scratch database",
      'with the same workflow, models, seeds and settings, and reports the fraction whose runs are',
      'identical (every node run the same, as `diff` compares them). Meant for experiments that cannot',
      'be exact (a model on a server batching other clients: "repeatability not guaranteed"); a local',
      'experiment should read 1.00.',
    ].join('\n'))
    .argument('<experiment-id>', 'the experiment')
    .addOption(dbOption())
    .addOption(intOption('--tasks <N>', 'how many of its tasks to re-run', { min: 1, max: 10_000, default: 8 }))
    .addOption(intOption('--seed <S>', 'seed of the task sample', { min: 0, max: 2 ** 31 - 1, default: 0 }))
    .option('--json', 'print one JSON object')
    .action(act(ctx, (id: string, o: RepeatFlags) => repeatCommand(id, o, ctx.io)));
}

async function repeatCommand(id: string, flags: RepeatFlags, io: Io): Promise<number> {
  const src = openStore(flags.db, { mustExist: true });
  const scratch = scratchStore();
  try {
    const stored = src.listRuns(id).map((r) => r.taskIndex);
    const only = new Set(sampleTaskIndices(stored, flags.tasks, flags.seed));
    const r = await rerunExperiment(src, scratch.store, id, flags.db, io, only);
    const c = r.comparison;
    const fraction = c.tasks ? c.identical / c.tasks : 0;
    if (flags.json) {
      io.stdout(JSON.stringify({ experimentId: id, tasks: [...only], identical: c.identical, fraction, repeatability: r.repeatability, ...(c.first && { first: c.first }) }) + '\n');
    } else {
      const lines = [`flowlab repeat ${id}: ${c.identical}/${c.tasks} re-run tasks identical (fraction ${fraction.toFixed(2)}; tasks ${[...only].join(', ')}; repeatability: ${r.repeatability})`];
      if (c.first) lines.push(`  first difference: task ${c.first.taskIndex}${c.first.nodeId ? `, node ${c.first.nodeId}` : ''}: ${c.first.what}`);
      io.stdout(lines.join('\n') + '\n');
    }
    return 0;
  } finally {
    scratch.dispose();
    src.close();
  }
}
