import path from 'node:path';
import { Command } from 'commander';
import { harden, type CommandContext, UsageError } from './args.ts';
import { processIo, type Io } from './io.ts';
import { defaultDatabase, ensureDataFolder, userDataFolder } from '../host/dataFolder.ts';

export { installProcessGuards } from './guard.ts';

/** What a command module exports: `define` adds its arguments, options, help text and action to its commander command. */
export interface CommandModule {
  define(cmd: Command, ctx: CommandContext): void;
}

interface Entry {
  /** The term in the top-level help. */
  term: string;
  summary: string;
  load: () => Promise<CommandModule>;
}

/**
 * The commands, each with its help line and its module, imported only when that command runs,
 * so `flowlab --help` and light commands (replay, show) never load the workflow compiler, the
 * model runtimes or the trainer.
 */
const COMMANDS: Record<string, Entry> = {
  run: { term: 'run <workflow.yaml>', summary: 'run a workflow on dataset tasks with local GGUF models', load: () => import('./commands/run.ts') },
  resume: { term: 'resume <experiment-or-loop-id>', summary: 'finish an interrupted experiment or train loop without redoing finished work', load: () => import('./commands/resume.ts') },
  verify: { term: 'verify <id>', summary: 're-run an experiment, train loop or study into a scratch database: identical, or the first difference', load: () => import('./commands/verify.ts') },
  repeat: { term: 'repeat <experiment-id>', summary: "re-run a sample of an experiment's tasks and report the fraction identical", load: () => import('./commands/repeat.ts') },
  replay: { term: 'replay <experiment-id>', summary: 're-run an experiment offline from recorded calls and compare outputs', load: () => import('./commands/replay.ts') },
  show: { term: 'show <run-or-experiment-id>', summary: "print a run's trace as a tree with root failures, cascades and the ladder; or an experiment's summary", load: () => import('./commands/show.ts') },
  ls: { term: 'ls [experiment-id]', summary: 'find experiments and runs: filters (kind, grade, failure, blamed role, group, date...) and full-text search', load: () => import('./commands/ls.ts') },
  'blame-eval': { term: 'blame-eval <workflow>', summary: 'inject SIMULATED faults and score structural blame against ground truth', load: () => import('./commands/blameEval.ts') },
  'attribution-eval': { term: 'attribution-eval', summary: 'score failure attribution on Who&When logs (which agent, which step)', load: () => import('./commands/attributionEval.ts') },
  export: { term: 'export <experiment-id>', summary: 'TRL-ready JSONL of rollouts; or traces as OTLP/JSON, OTLP/HTTP, CSV, JSONL', load: () => import('./commands/export.ts') },
  import: { term: 'import <file.json>', summary: 'OTLP/JSON traces (Flowlab, LangGraph, OpenAI Agents) as runs with blame', load: () => import('./commands/import.ts') },
  annotate: { term: 'annotate <run-id>', summary: 'score, tag or note a run or one of its nodes (stored beside it; ls --tag finds it, export writes it)', load: () => import('./commands/annotate.ts') },
  annotations: { term: 'annotations [id]', summary: "list annotations of an experiment's runs, a run, a node or a tag; annotations rm <id> removes one", load: async () => ({ define: (await import('./commands/annotate.ts')).defineList }) },
  diff: { term: 'diff <run-a> <run-b>', summary: 'align two runs node by node and name the first diverging node (or a run and its replay)', load: () => import('./commands/diff.ts') },
  job: { term: 'job <kinds|start|resume>', summary: 'jobs of any registered kind: list the kinds, start one from a JSON spec, resume one', load: () => import('./commands/job.ts') },
  fork: { term: 'fork <run-id> --node <id>', summary: 'fork a run at a node run with one intervention: upstream from the recording, the rest live', load: () => import('./commands/fork.ts') },
  counterfactual: { term: 'counterfactual <experiment-id>', summary: 'counterfactual blame: fork failed and silent runs at nodes with a corrected output; agreement with structure', load: () => import('./commands/counterfactual.ts') },
  compare: { term: 'compare <exp-a> <exp-b>', summary: 'paired sign test and bootstrap CI of accuracy and per-role ladder deltas', load: () => import('./commands/compare.ts') },
  rollouts: { term: 'rollouts <workflow>', summary: 'G rollouts per task, decoded together; per-role GRPO and Flow-GRPO advantages', load: () => import('./commands/rollouts.ts') },
  distill: { term: 'distill --experiment <id>', summary: 'distil a hint card for a role from its best trajectories (prior library)', load: () => import('./commands/distill.ts') },
  cards: { term: 'cards <list|show|rm|export|import>', summary: 'the prior library of hint cards', load: () => import('./commands/cards.ts') },
  serve: { term: 'serve', summary: 'serve the lab in a browser (renderer + API, token-protected, 127.0.0.1)', load: () => import('./commands/serve.ts') },
  'train-loop': { term: 'train-loop <workflow>', summary: 'laptop RL: rollouts -> ladder -> per-role policy step -> new GGUF version, repeated', load: () => import('./commands/trainLoop.ts') },
  train: { term: 'train --mode sft|grpo', summary: 'one offline training step set for a role from a stored experiment', load: () => import('./commands/train.ts') },
  study: { term: 'study <plan.yaml>', summary: 'a study: conditions x zones x seeds x models -> table with bootstrap CIs, paired deltas, CSV, HTML', load: () => import('./commands/study.ts') },
  evolve: { term: 'evolve <dataset>', summary: 'MASS inner loop: evolve a text workflow with the model as judge and optimizer (resumable, replayable)', load: () => import('./commands/evolve.ts') },
  'train-optimizer': { term: 'train-optimizer <dataset>', summary: 'MASS: train the edit optimizer on its own proposals that the grader says helped (rejection-sampling fine-tuning)', load: () => import('./commands/trainOptimizer.ts') },
  versions: { term: 'versions', summary: 'the weight versions training wrote, per role, with their lineage', load: async () => ({ define: (await import('./commands/train.ts')).defineVersions }) },
  'judge-audit': { term: 'judge-audit <experiment-id>', summary: "audit a judge's verdicts on learn-judge pairs: position consistency, kappa with the grader, the blind spot", load: () => import('./commands/judgeAudit.ts') },
  rank: { term: 'rank', summary: "MASS outer loop: champion runs, ring tournament, Bradley-Terry, guards, SFT export (no training)", load: () => import('./commands/rank.ts') },
  workshop: { term: 'workshop <scenario.yaml>', summary: 'a room exercise: rehearse once, then presenter + attendee pages (QR code, predictions, reveal, report)', load: () => import('./commands/workshop.ts') },
  datasets: { term: 'datasets <list|fetch>', summary: 'which datasets are ready; fetch the public ones into the data folder (sha256-checked)', load: () => import('./commands/datasets.ts') },
  models: { term: 'models <list|download>', summary: 'GGUF files with their metadata; download from hf: or a URL (resumed, sha256-checked)', load: () => import('./commands/models.ts') },
  tune: { term: 'tune --model <file>', summary: "measure tokens/s over threads and batch sizes; store the best for the file on this machine", load: () => import('./commands/tune.ts') },
  rsi: { term: 'rsi', summary: 'MASS whole cycles: outer loop -> SFT per arm (self-judge | verifier) -> new version, held-out paired test', load: () => import('./commands/rsi.ts') },
  'serve-model': { term: 'serve-model <file.gguf...>', summary: 'serve local GGUF files over the OpenAI-compatible API (json_schema, seed, usage, streaming; loopback)', load: () => import('./commands/serveModel.ts') },
  generate: { term: 'generate --model <file> --prompt <text>', summary: "one generation streamed to stdout: the Models view's playground (sampling settings, seed, JSON schema, rendered prompt, tokens/s)", load: () => import('./commands/generate.ts') },
  probe: { term: 'probe <endpoint>', summary: 'check what an OpenAI-compatible server really does: schema enforced or ignored, seeds, usage', load: () => import('./commands/probe.ts') },
};

/** The `flowlab` program, hardened (cli/args.ts); its subcommands are listed for the help only. */
function program(io: Io): Command {
  const p = harden(new Command('flowlab'), io).usage('<command> [options]');
  p.configureHelp({ subcommandTerm: (c) => COMMANDS[c.name()]?.term ?? c.name(), helpWidth: 120 });
  return p;
}

/** The top-level help: every command with its line (commander's layout). */
export function usage(io: Io = processIo): string {
  const p = program(io);
  for (const [name, e] of Object.entries(COMMANDS)) p.command(name).description(e.summary);
  return (
    p.helpInformation() +
    `\nGlobal option: --data <dir>  the data folder, where the database (flowlab.db) and what is written beside it live\n` +
    `  (workflows, weight versions, studies, workshop reports); default $FLOWLAB_DATA, else ${userDataFolder()}.\n` +
    "\nRun `flowlab <command> --help` for a command's options.\n"
  );
}

/**
 * Takes the global `--data <dir>` (or `--data=<dir>`) out of `argv` and sets `$FLOWLAB_DATA` to it
 * for this process, so every default under the data folder (host/dataFolder.ts) follows it.
 * Errors: UsageError when it has no value.
 */
export function takeDataFlag(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (a === '--data' || a.startsWith('--data=')) {
      const value = a === '--data' ? argv[++i] : a.slice('--data='.length);
      if (!value || value.startsWith('-')) throw new UsageError('--data needs a folder: --data <dir>');
      env['FLOWLAB_DATA'] = path.resolve(value);
      continue;
    }
    out.push(a);
  }
  return out;
}

/** The subcommand `argv` names (`cards list ...`: list), or `cmd` itself. */
function subcommandOf(cmd: Command, argv: readonly string[]): Command {
  const first = argv.find((a) => !a.startsWith('-'));
  return cmd.commands.find((c) => c.name() === first) ?? cmd;
}

/**
 * The CLI entry: returns the exit code. 0 ok; 1 a failure the message explains (bad workflow,
 * dataset, model file, database); 2 bad arguments (usage printed); 130 cancelled.
 * Arguments are parsed by commander (each command module defines its own); nothing is written
 * to the process streams except through `io`.
 */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  try {
    argv = takeDataFlag(argv);
  } catch (e) {
    io.stderr(`flowlab: ${(e as Error).message}\n\n${usage(io)}`);
    return 2;
  }
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage(io));
    return name ? 0 : 2;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.stderr(`flowlab: unknown command "${name}"\n\n${usage(io)}`);
    return 2;
  }
  const mod = await entry.load();
  const ctx: CommandContext = { io };
  const cmd = harden(program(io).command(name), io);
  mod.define(cmd, ctx);
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(subcommandOf(cmd, rest).helpInformation());
    return 0;
  }
  try {
    // The default database's folder (the user's data folder) is made on first use.
    if (!rest.some((a) => a === '--db' || a.startsWith('--db=')) && cmd.options.some((o) => o.long === '--db')) ensureDataFolder(defaultDatabase());
    await cmd.parseAsync(rest, { from: 'user' });
    return ctx.status ?? 0;
  } catch (e) {
    // The error table imports the typed errors of every area: loaded only when one is thrown.
    const { exitStatusFor, formatCliError } = await import('./errors.ts');
    io.stderr(formatCliError(e, name, cmd.helpInformation()));
    if (process.env.FLOWLAB_DEBUG && !(e instanceof UsageError)) io.stderr(`${(e as Error).stack}\n`);
    return exitStatusFor(e);
  }
}
