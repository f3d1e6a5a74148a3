import { UsageError } from './args.ts';
import { exitStatusFor, formatCliError } from './errors.ts';
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

interface Command { run: (argv: string[], io: Io) => Promise<number>; usage: string }

/**
 * Each command's module, imported only when that command runs, so `flowlab --help` and light
 * commands (replay, show) never load the workflow compiler, the model runtimes or the trainer.
 */
const COMMANDS: Record<string, () => Promise<Command>> = {
  run: async () => { const m = await import('./commands/run.ts'); return { run: m.runCommand, usage: m.RUN_USAGE }; },
  resume: async () => { const m = await import('./commands/resume.ts'); return { run: m.resumeCommand, usage: m.RESUME_USAGE }; },
  replay: async () => { const m = await import('./commands/replay.ts'); return { run: m.replayCommand, usage: m.REPLAY_USAGE }; },
  'blame-eval': async () => { const m = await import('./commands/blameEval.ts'); return { run: m.blameEvalCommand, usage: m.BLAME_EVAL_USAGE }; },
  show: async () => { const m = await import('./commands/show.ts'); return { run: m.showCommand, usage: m.SHOW_USAGE }; },
  'attribution-eval': async () => { const m = await import('./commands/attributionEval.ts'); return { run: m.attributionEvalCommand, usage: m.ATTRIBUTION_EVAL_USAGE }; },
  serve: async () => { const m = await import('./commands/serve.ts'); return { run: m.serveCommand, usage: m.SERVE_USAGE }; },
  rollouts: async () => { const m = await import('./commands/rollouts.ts'); return { run: m.rolloutsCommand, usage: m.ROLLOUTS_USAGE }; },
  export: async () => { const m = await import('./commands/export.ts'); return { run: m.exportCommand, usage: m.EXPORT_USAGE }; },
  compare: async () => { const m = await import('./commands/compare.ts'); return { run: m.compareCommand, usage: m.COMPARE_USAGE }; },
  distill: async () => { const m = await import('./commands/distill.ts'); return { run: m.distillCommand, usage: m.DISTILL_USAGE }; },
  cards: async () => { const m = await import('./commands/cards.ts'); return { run: m.cardsCommand, usage: m.CARDS_USAGE }; },
  'train-loop': async () => { const m = await import('./commands/trainLoop.ts'); return { run: m.trainLoopCommand, usage: m.TRAIN_LOOP_USAGE }; },
  train: async () => { const m = await import('./commands/train.ts'); return { run: m.trainCommand, usage: m.TRAIN_USAGE }; },
  versions: async () => { const m = await import('./commands/train.ts'); return { run: m.versionsCommand, usage: m.VERSIONS_USAGE }; },
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
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    io.stderr(`flowlab: unknown command "${name}"\n\n${USAGE}`);
    return 2;
  }
  const cmd = await load();
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
