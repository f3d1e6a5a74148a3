import type { Command } from 'commander';
import { startExperiment } from '../../core/experiments/index.ts';
import { buildExperimentSpec } from '../../core/jobs/index.ts';
import { openStore } from '../../core/store/index.ts';
import { resolveModels } from '../../models/resolve.ts';
import { act, intOption, rolePairOption, type CommandContext } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { addExperimentOptions, modelRequestOf, type ExperimentFlagValues } from '../flags.ts';
import { cliDeps, loadWorkflowArg } from '../wiring.ts';
import { formatBlame } from '../formatExperiments.ts';
import type { Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';
import { addParallelOption, parallelOf } from '../parallel.ts';

interface BlameEvalFlags extends ExperimentFlagValues {
  inject: Array<[string, string]>;
  runs?: number;
  parallel?: number;
}

/** `flowlab blame-eval <workflow.yaml>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<workflow.yaml> --dataset gsm8k --model <file.gguf> --inject role=kind@rate [...] [options]')
    .description([
      'Runs the workflow with SIMULATED faults injected into chosen roles (or nodes: node:<id>=kind@rate)',
      'and scores structural blame against the injected ground truth: precision and recall per role and',
      'per fault kind, faults structure cannot see, cascades correctly not blamed. Failures the model',
      'makes by itself are counted apart. Kinds: malformed, contract, error, timeout, wrong, dropped;',
      'for the design role of a designed workflow also the wiring kinds dangling_edge, unknown_tool,',
      'missing_port, unbounded_loop (put into its designs; blamed on the designer).',
    ].join('\n'))
    .argument('<workflow.yaml>', 'the workflow file')
    .addOption(rolePairOption('--inject <role=kind@rate>', 'a fault to inject (repeatable; rate 0..1, default 1)', { shape: 'role=kind@rate' }).makeOptionMandatory())
    .addOption(intOption('--runs <n>', 'injected runs (tasks are cycled) (default: --limit)', { min: 1 }));
  addExperimentOptions(cmd, 10);
  addParallelOption(cmd, 'injected runs');
  cmd.action(act(ctx, (file: string, o: BlameEvalFlags) => blameEvalCommand(file, o, ctx.io)));
}

async function blameEvalCommand(workflowFile: string, values: BlameEvalFlags, io: Io): Promise<number> {
  const { limit, offset, seed } = values;
  const runs = values.runs ?? limit;
  const request = modelRequestOf(values, io);
  const inject = values.inject.map(([role, fault]) => `${role}=${fault}`);

  const { file, tools, workflow } = loadWorkflowArg(workflowFile, io);
  const { config: models } = asCliSync(() => resolveModels(workflow.graph, request));

  const store = openStore(values.db);
  try {
    const bar = progress(io, (e) => io.stderr(`Blame evaluation ${e.experimentId}: ${e.total} runs of ${workflow.graph.name} with SIMULATED faults ${inject.join(', ')}\n`));
    const handle = await asCli(() => startExperiment(buildExperimentSpec({
      kind: 'blame-eval', workflow: { ...workflow, file }, dataset: values.dataset, split: values.split, limit, offset, seed, dataDir: values.dataDir, models, inject, runs, ...parallelOf(values),
    }), cliDeps(store, tools), { onEvent: bar.onEvent }), { offset });
    const outcome = settled(await bar.follow(handle));
    const blame = outcome.blame!.report;
    if (values.json) io.stdout(JSON.stringify({ experimentId: outcome.experimentId, simulated: true, inject, ...blame }) + '\n');
    else io.stdout(formatBlame(blame, outcome.experimentId, inject, outcome.report.accuracy));
    return exitOf(outcome);
  } finally {
    store.close();
  }
}
