import path from 'node:path';
import { startExperiment } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile } from '../../core/workflow/index.ts';
import { resolveModels } from '../../models/resolve.ts';
import { intFlag, parse, UsageError } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { cliDeps, EXPERIMENT_FLAGS, modelRequestOf } from '../flags.ts';
import { formatBlame } from '../formatExperiments.ts';
import { processIo, type Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';

export const BLAME_EVAL_USAGE = `Usage: flowlab blame-eval <workflow.yaml> --dataset gsm8k --model <file.gguf> --inject role=kind@rate [...] [options]

Runs the workflow with SIMULATED faults injected into chosen roles (or nodes: node:<id>=kind@rate)
and scores structural blame against the injected ground truth: precision and recall per role and
per fault kind, faults structure cannot see, cascades correctly not blamed. Failures the model
makes by itself are counted apart. Kinds: malformed, contract, error, timeout, wrong, dropped.

Options:
  --inject <role=kind@rate>  a fault to inject (repeatable; rate 0..1, default 1)  [required]
  --runs <n>                 injected runs (tasks are cycled)          [default: --limit]
  --dataset, --split, --limit, --offset, --model, --role-model, --seed, --db, --data-dir,
  --threads, --context-size, --gpu   as in \`flowlab run\`
  --json                     print one JSON object
`;

export async function blameEvalCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...EXPERIMENT_FLAGS,
    limit: { type: 'string', default: '10' },
    runs: { type: 'string' },
    inject: { type: 'string', multiple: true },
  }, BLAME_EVAL_USAGE);
  if (positionals.length !== 1) throw new UsageError('missing <workflow.yaml>', BLAME_EVAL_USAGE);
  if (!values.dataset) throw new UsageError('missing --dataset', BLAME_EVAL_USAGE);
  if (!values.inject?.length) throw new UsageError('missing --inject role=kind@rate', BLAME_EVAL_USAGE);
  const limit = intFlag(values.limit, 'limit', BLAME_EVAL_USAGE, { min: 1 })!;
  const offset = intFlag(values.offset, 'offset', BLAME_EVAL_USAGE)!;
  const runs = intFlag(values.runs, 'runs', BLAME_EVAL_USAGE, { min: 1 }) ?? limit;
  const seed = intFlag(values.seed, 'seed', BLAME_EVAL_USAGE)!;
  const request = modelRequestOf(values, BLAME_EVAL_USAGE);
  const inject = values.inject;

  const file = path.resolve(positionals[0]!);
  const tools = defaultTools();
  const workflow = loadWorkflowFile(file, { tools });
  const { config: models } = asCliSync(() => resolveModels(workflow.graph, request), BLAME_EVAL_USAGE);

  const store = openStore(values.db!);
  try {
    const bar = progress(io, (e) => io.stderr(`Blame evaluation ${e.experimentId}: ${e.total} runs of ${workflow.graph.name} with SIMULATED faults ${inject.join(', ')}\n`));
    const handle = await asCli(() => startExperiment({
      kind: 'blame-eval', workflow: { ...workflow, file }, dataset: values.dataset!, split: values.split!, limit, offset, seed, dataDir: values['data-dir'], models, inject, runs,
    }, cliDeps(store, tools), { onEvent: bar.onEvent }), BLAME_EVAL_USAGE, { offset });
    const outcome = settled(await bar.follow(handle));
    const blame = outcome.blame!.report;
    if (values.json) io.stdout(JSON.stringify({ experimentId: outcome.experimentId, simulated: true, inject, ...blame }) + '\n');
    else io.stdout(formatBlame(blame, outcome.experimentId, inject, outcome.report.accuracy));
    return exitOf(outcome);
  } finally {
    store.close();
  }
}
