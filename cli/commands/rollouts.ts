import path from 'node:path';
import { startExperiment } from '../../core/experiments/index.ts';
import { parseMode } from '../../core/rollouts/index.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile } from '../../core/workflow/index.ts';
import { resolveModels } from '../../models/resolve.ts';
import { intFlag, parse, UsageError } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { cliDeps, EXPERIMENT_FLAGS, modelRequestOf } from '../flags.ts';
import { formatRollouts } from '../formatExperiments.ts';
import { processIo, type Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';

export const ROLLOUTS_USAGE = `Usage: flowlab rollouts <workflow.yaml> --dataset gsm8k --model <file.gguf> --group G [options]

Runs G rollouts per task with distinct recorded seeds, decoded together (the G trajectories of a
group share the model's decode batches), then computes each role's group-relative advantage:
A = (h - mean) / (std + 1e-6) of the role's ladder reward h within the task's group (population
std; zero spread gives zero advantage and is reported), and Flow-GRPO's trajectory-level outcome
advantage broadcast to every turn. Sampling is on-policy: temperature T, topK 0, topP 1, minP 0.

Options:
  --group <G>               rollouts per task                              [required]
  --temperature <T>         sampling temperature for every agent node      [default: 0.8]
  --mode <mode>             who learns: single:<role>, upstream-downstream, agent-skill,
                            multi-agent                                     [default: multi-agent]
  --dataset, --split, --limit, --offset, --model, --role-model, --seed, --db, --data-dir,
  --threads, --context-size, --gpu   as in \`flowlab run\`
  --record-tokens           record each call's token ids (for \`flowlab train\`)
  --json                    print one JSON object
`;

export async function rolloutsCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...EXPERIMENT_FLAGS,
    limit: { type: 'string', default: '5' },
    group: { type: 'string' },
    temperature: { type: 'string', default: '0.8' },
    mode: { type: 'string', default: 'multi-agent' },
    'record-tokens': { type: 'boolean', default: false },
  }, ROLLOUTS_USAGE);
  if (positionals.length !== 1) throw new UsageError('missing <workflow.yaml>', ROLLOUTS_USAGE);
  if (!values.dataset) throw new UsageError('missing --dataset', ROLLOUTS_USAGE);
  if (!values.group) throw new UsageError('missing --group G', ROLLOUTS_USAGE);
  const G = intFlag(values.group, 'group', ROLLOUTS_USAGE, { min: 1 })!;
  if (G > 64) throw new UsageError('--group must be at most 64', ROLLOUTS_USAGE);
  const limit = intFlag(values.limit, 'limit', ROLLOUTS_USAGE, { min: 1 })!;
  const offset = intFlag(values.offset, 'offset', ROLLOUTS_USAGE)!;
  const seed = intFlag(values.seed, 'seed', ROLLOUTS_USAGE)!;
  const temperature = Number(values.temperature);
  if (!(temperature >= 0 && temperature <= 5)) throw new UsageError(`--temperature must be between 0 and 5, got "${values.temperature}"`, ROLLOUTS_USAGE);
  try {
    parseMode(values.mode!);
  } catch (e) {
    throw new UsageError((e as Error).message, ROLLOUTS_USAGE);
  }
  const request = modelRequestOf(values, ROLLOUTS_USAGE);

  const file = path.resolve(positionals[0]!);
  const tools = defaultTools();
  const workflow = loadWorkflowFile(file, { tools });
  const { config: models } = asCliSync(() => resolveModels(workflow.graph, request), ROLLOUTS_USAGE);
  const store = openStore(values.db!);
  try {
    const bar = progress(io, (e) => {
      const ro = (e.config as { rollouts: { learningRoles: string[]; mode: string } }).rollouts;
      io.stderr(`Rollouts ${e.experimentId}: ${e.total / G} tasks x G=${G} at temperature ${temperature}, learning roles ${ro.learningRoles.join(', ')} (${ro.mode})\n`);
    });
    const handle = await asCli(() => startExperiment({
      kind: 'rollouts', workflow: { ...workflow, file }, dataset: values.dataset!, split: values.split!, limit, offset, seed, dataDir: values['data-dir'], models,
      group: G, temperature, mode: values.mode!, recordTokens: values['record-tokens'],
    }, cliDeps(store, tools), { onEvent: bar.onEvent }), ROLLOUTS_USAGE, { offset });
    const outcome = settled(await bar.follow(handle));
    const { summary, config: ro } = outcome.rollouts!;
    const id = outcome.experimentId;
    io.stdout(values.json ? JSON.stringify({ experimentId: id, ...summary, mode: ro.mode, group: G, temperature, accuracy: outcome.report.accuracy, wallSeconds: outcome.report.wallSeconds }) + '\n' : formatRollouts(id, summary, ro, outcome.report.wallSeconds));
    return exitOf(outcome);
  } finally {
    store.close();
  }
}
