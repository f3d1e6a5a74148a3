import type { Command } from 'commander';
import { startExperiment } from '../../core/experiments/index.ts';
import { buildExperimentSpec } from '../../core/jobs/index.ts';
import { parseMode } from '../../core/rollouts/index.ts';
import { openStore, storedRollouts } from '../../core/store/index.ts';
import { resolveModels } from '../../models/resolve.ts';
import { act, intOption, UsageError, type CommandContext } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { addExperimentOptions, modelRequestOf, addCorpusOption, type ExperimentFlagValues } from '../flags.ts';
import { cliDeps, loadWorkflowArg, toolsWithCorpus } from '../wiring.ts';
import { formatRollouts } from '../formatExperiments.ts';
import type { Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';
import { repeatabilityLine } from '../repeatability.ts';

interface RolloutsFlags extends ExperimentFlagValues {
  group: number;
  temperature: string;
  mode: string;
  recordTokens?: boolean;
  corpus?: string;
}

/** `flowlab rollouts <workflow.yaml>`. */
export function define(cmd: Command, ctx: CommandContext): void {
  cmd
    .usage('<workflow.yaml> --dataset gsm8k --model <file.gguf> --group G [options]')
    .description([
      'Runs G rollouts per task with distinct recorded seeds, in flight together (each decode holds one',
      'sequence, so a seeded group repeats bit for bit), then computes each role\'s group-relative advantage:',
      "A = (h - mean) / (std + 1e-6) of the role's ladder reward h within the task's group (population",
      "std; zero spread gives zero advantage and is reported), and Flow-GRPO's trajectory-level outcome",
      'advantage broadcast to every turn. Sampling is on-policy: temperature T, topK 0, topP 1, minP 0.',
    ].join('\n'))
    .argument('<workflow.yaml>', 'the workflow file')
    .addOption(intOption('--group <G>', 'rollouts per task', { min: 1, max: 64 }).makeOptionMandatory())
    .option('--temperature <T>', 'sampling temperature for every agent node', '0.8')
    .option('--mode <mode>', 'who learns: single:<role>, upstream-downstream, agent-skill, multi-agent', 'multi-agent')
    .option('--record-tokens', "record each call's token ids (for `flowlab train`)");
  addExperimentOptions(cmd, 5);
  addCorpusOption(cmd);
  cmd.action(act(ctx, (file: string, o: RolloutsFlags) => rolloutsCommand(file, o, ctx.io)));
}

async function rolloutsCommand(workflowFile: string, values: RolloutsFlags, io: Io): Promise<number> {
  const { limit, offset, seed, group: G } = values;
  const temperature = Number(values.temperature);
  if (!(temperature >= 0 && temperature <= 5)) throw new UsageError(`--temperature must be between 0 and 5, got "${values.temperature}"`);
  try {
    parseMode(values.mode);
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const request = modelRequestOf(values, io);

  const withCorpus = toolsWithCorpus(values.corpus, values.db, io);
  const { file, tools, workflow } = loadWorkflowArg(workflowFile, io, withCorpus.tools);
  const { config: models } = asCliSync(() => resolveModels(workflow.graph, request));
  const store = openStore(values.db);
  try {
    const bar = progress(io, (e) => {
      const ro = storedRollouts({ id: e.experimentId, config: e.config }) ?? { learningRoles: [], mode: '?' };
      io.stderr(`Rollouts ${e.experimentId}: ${e.total / G} tasks x G=${G} at temperature ${temperature}, learning roles ${ro.learningRoles.join(', ')} (${ro.mode})\n`);
    });
    const handle = await asCli(() => startExperiment(buildExperimentSpec({
      kind: 'rollouts', workflow: { ...workflow, file }, dataset: values.dataset, split: values.split, limit, offset, seed, dataDir: values.dataDir, corpus: withCorpus.corpus, models,
      group: G, temperature, mode: values.mode, recordTokens: Boolean(values.recordTokens),
    }), cliDeps(store, tools), { onEvent: bar.onEvent }), { offset });
    const outcome = settled(await bar.follow(handle));
    const { summary, config: ro } = outcome.rollouts!;
    const id = outcome.experimentId;
    io.stdout(values.json ? JSON.stringify({ experimentId: id, ...summary, mode: ro.mode, group: G, temperature, accuracy: outcome.report.accuracy, wallSeconds: outcome.report.wallSeconds }) + '\n' : formatRollouts(id, summary, ro, outcome.report.wallSeconds) + repeatabilityLine(store, id));
    return exitOf(outcome);
  } finally {
    store.close();
  }
}
