import type { Command } from 'commander';
import { startExperiment } from '../../core/experiments/index.ts';
import { buildExperimentSpec } from '../../core/jobs/index.ts';
import { openStore } from '../../core/store/index.ts';
import { resolveModels } from '../../models/resolve.ts';
import { act, type CommandContext } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { addCardOptions, addExperimentOptions, cardsConfigFromFlags, modelRequestOf, addCorpusOption, type ExperimentFlagValues } from '../flags.ts';
import { cliDeps, closeCliSandbox, loadWorkflowArg, toolsWithCorpus, withStore } from '../wiring.ts';
import { formatReport, reportJson } from '../format.ts';
import type { Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';
import { repeatabilityLine } from '../repeatability.ts';
import { addParallelOption, parallelOf } from '../parallel.ts';

/** Flags of `flowlab run`. */
interface RunFlags extends ExperimentFlagValues {
  cards?: string;
  cardBudget?: number;
  distillEvery?: number;
  distillShots?: number;
  distillRoles?: string;
  distillWithFailures?: boolean;
  corpus?: string;
  parallel?: number;
}

/** `flowlab run <workflow.yaml>`: its options, then the experiment service with a progress bar. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<workflow.yaml> --dataset gsm8k --model <file.gguf> [options]')
    .description('Runs a workflow on dataset tasks with local GGUF models, storing every node event and model call.')
    .argument('<workflow.yaml>', 'the workflow file');
  addExperimentOptions(cmd, 10, { lora: true, versions: true });
  addCardOptions(cmd);
  addCorpusOption(cmd);
  addParallelOption(cmd);
  cmd.action(act(ctx, (file: string, o: RunFlags) => runCommand(file, o, ctx.io)));
}

async function runCommand(workflowFile: string, values: RunFlags, io: Io): Promise<number> {
  const { limit, offset, seed } = values;
  const request = modelRequestOf(values, io);

  const withCorpus = toolsWithCorpus(values.corpus, values.db, io);
  const { file, tools, workflow } = loadWorkflowArg(workflowFile, io, withCorpus.tools);
  // Weight versions are looked up in the database before any dataset or model is read.
  const resolved = asCliSync(() => (request.roleVersions ? withStore(values.db, (s) => resolveModels(workflow.graph, request, (id) => s.weights.find(id)), false) : resolveModels(workflow.graph, request)));
  const cards = cardsConfigFromFlags(values, workflow.graph, values.db, io);

  const store = openStore(values.db);
  try {
    const bar = progress(io, (e) => io.stderr(`Experiment ${e.experimentId}: ${workflow.graph.name} on ${e.total} ${store.getExperiment(e.experimentId).dataset}/${values.split} tasks -> ${store.file}\n`));
    const handle = await asCli(() => startExperiment(buildExperimentSpec({
      kind: 'run', workflow: { ...workflow, file }, dataset: values.dataset, split: values.split, limit, offset, seed, dataDir: values.dataDir, corpus: withCorpus.corpus,
      models: resolved.config, cards, roleVersions: request.roleVersions, ...parallelOf(values),
    }), cliDeps(store, tools), { onEvent: bar.onEvent }), { offset });
    const outcome = settled(await bar.follow(handle));
    const report = outcome.report;
    io.stdout(values.json ? reportJson(report) : formatReport(report, `${workflow.graph.name} on ${store.getExperiment(outcome.experimentId).dataset}/${values.split}`) + repeatabilityLine(store, outcome.experimentId));
    return exitOf(outcome);
  } finally {
    store.close();
    await closeCliSandbox();
  }
}
