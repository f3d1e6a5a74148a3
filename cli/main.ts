import { UsageError } from './args.ts';
import { exitStatusFor, formatCliError } from './errors.ts';
import { replayCommand, REPLAY_USAGE } from './commands/replay.ts';
import { resumeCommand, RESUME_USAGE } from './commands/resume.ts';
import { runCommand, RUN_USAGE } from './commands/run.ts';
import { blameEvalCommand, BLAME_EVAL_USAGE } from './commands/blameEval.ts';
import { showCommand, SHOW_USAGE } from './commands/show.ts';
import { attributionEvalCommand, ATTRIBUTION_EVAL_USAGE } from './commands/attributionEval.ts';
import { serveCommand, SERVE_USAGE } from './commands/serve.ts';
import { rolloutsCommand, ROLLOUTS_USAGE } from './commands/rollouts.ts';
import { exportCommand, EXPORT_USAGE } from './commands/export.ts';
import { compareCommand, COMPARE_USAGE } from './commands/compare.ts';
import { distillCommand, DISTILL_USAGE } from './commands/distill.ts';
import { cardsCommand, CARDS_USAGE } from './commands/cards.ts';
import { trainLoopCommand, TRAIN_LOOP_USAGE } from './commands/trainLoop.ts';
import { trainCommand, TRAIN_USAGE, versionsCommand, VERSIONS_USAGE } from './commands/train.ts';
import { processIo, type Io } from './io.ts';

export const USAGE = `Usage: flowlab <command> [options]

Commands:
  run <workflow.yaml>       run a workflow on dataset tasks with local GGUF models
  resume <experiment-id>    finish an interrupted experiment without redoing finished tasks
  replay <experiment-id>    re-run an experiment offline from recorded calls and compare outputs
  show <run-id>             print a run's trace as a tree with root failures, cascades and the ladder
  blame-eval <workflow>     inject SIMULATED faults and score structural blame against ground truth
  attribution-eval          score failure attribution on Who&When logs (which agent, which step)
  export <experiment-id>    write a rollouts experiment as TRL-ready JSONL (GRPO/KTO and SFT) + manifest
  compare <exp-a> <exp-b>   paired sign test and bootstrap CI of accuracy and per-role ladder deltas
  rollouts <workflow>       G rollouts per task, decoded together; per-role GRPO and Flow-GRPO advantages
  distill --experiment <id> distil a hint card for a role from its best trajectories (prior library)
  cards <list|show|rm|export|import>  the prior library of hint cards
  serve                     serve the lab in a browser (renderer + API, token-protected, 127.0.0.1)
  train-loop <workflow>     laptop RL: rollouts -> ladder -> per-role policy step -> new GGUF version, repeated
  train --mode sft|grpo     one offline training step set for a role from a stored experiment
  versions                  the weight versions training wrote, per role, with their lineage

Run \`flowlab <command> --help\` for a command's options.
`;

const COMMANDS: Record<string, { run: (argv: string[], io: Io) => Promise<number>; usage: string }> = {
  run: { run: runCommand, usage: RUN_USAGE },
  resume: { run: resumeCommand, usage: RESUME_USAGE },
  replay: { run: replayCommand, usage: REPLAY_USAGE },
  'blame-eval': { run: blameEvalCommand, usage: BLAME_EVAL_USAGE },
  show: { run: showCommand, usage: SHOW_USAGE },
  'attribution-eval': { run: attributionEvalCommand, usage: ATTRIBUTION_EVAL_USAGE },
  serve: { run: serveCommand, usage: SERVE_USAGE },
  rollouts: { run: rolloutsCommand, usage: ROLLOUTS_USAGE },
  export: { run: exportCommand, usage: EXPORT_USAGE },
  compare: { run: compareCommand, usage: COMPARE_USAGE },
  distill: { run: distillCommand, usage: DISTILL_USAGE },
  cards: { run: cardsCommand, usage: CARDS_USAGE },
  'train-loop': { run: trainLoopCommand, usage: TRAIN_LOOP_USAGE },
  train: { run: trainCommand, usage: TRAIN_USAGE },
  versions: { run: versionsCommand, usage: VERSIONS_USAGE },
};

/**
 * The CLI entry: returns the exit code. 0 ok; 1 a failure the message explains (bad workflow,
 * dataset, model file, database); 2 bad arguments (usage printed); 130 cancelled.
 */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(USAGE);
    return name ? 0 : 2;
  }
  const cmd = COMMANDS[name];
  if (!cmd) {
    io.stderr(`flowlab: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(cmd.usage);
    return 0;
  }
  try {
    return await cmd.run(rest, io);
  } catch (e) {
    io.stderr(formatCliError(e, name, cmd.usage));
    if (process.env.FLOWLAB_DEBUG && !(e instanceof UsageError)) io.stderr(`${(e as Error).stack}\n`);
    return exitStatusFor(e);
  }
}
