import path from 'node:path';
import { startExperiment } from '../../core/experiments/index.ts';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile } from '../../core/workflow/index.ts';
import { resolveModels } from '../../models/resolve.ts';
import { intFlag, parse, UsageError } from '../args.ts';
import { asCli, asCliSync } from '../errors.ts';
import { CARD_RUN_OPTIONS, CARD_RUN_USAGE, cardsConfigFromFlags, cliDeps, EXPERIMENT_FLAGS, modelRequestOf, withStore } from '../flags.ts';
import { formatReport, reportJson } from '../format.ts';
import { processIo, type Io } from '../io.ts';
import { exitOf, progress, settled } from '../progress.ts';

export const RUN_USAGE = `Usage: flowlab run <workflow.yaml> --dataset gsm8k --model <file.gguf> [options]

Runs a workflow on dataset tasks with local GGUF models, storing every node event and model call.

Options:
  --dataset <name>          dataset (known: gsm8k, learn, learn-word, learn-json, learn-tool,
                            learn-team)                                   [required]
  --split <name>            split (gsm8k: test, train, test_socratic)     [default: test]
  --limit <n>               number of tasks                               [default: 10]
  --offset <n>              skip the first n tasks                        [default: 0]
  --model <file.gguf>       model for roles using the "default" reference
  --role-model <role=file>  a different model for one role (repeatable)
  --role-lora <role=adapter.gguf[@scale]>
                            a LoRA adapter (GGUF) on top of the role's model (repeatable; the
                            base model is loaded once, the role gets its own context)
  --role-version <role=version-id>
                            a trained weight version (flowlab train-loop / train) as the role's
                            model file (repeatable; see flowlab versions)
  --seed <n>                experiment seed                               [default: 0]
  --db <file>               SQLite database                               [default: flowlab.db]
  --data-dir <dir>          dataset folder          [default: $FLOWLAB_SHARED/data or ../shared/data]
  --threads <n>             CPU threads per model   [default: 1 for files < 64 MB, else half the cores]
  --context-size <n>        context tokens per model                      [default: 1024]
  --gpu <auto|off>          GPU offload                                   [default: off]
${CARD_RUN_USAGE}  --json                    print one JSON object instead of the table
`;

export async function runCommand(argv: string[], io: Io = processIo): Promise<number> {
  const { values, positionals } = parse(argv, {
    ...EXPERIMENT_FLAGS,
    limit: { type: 'string', default: '10' },
    'role-lora': { type: 'string', multiple: true },
    'role-version': { type: 'string', multiple: true },
    ...CARD_RUN_OPTIONS,
  }, RUN_USAGE);
  if (positionals.length !== 1) throw new UsageError(positionals.length ? `expected one workflow file, got ${positionals.length}` : 'missing <workflow.yaml>', RUN_USAGE);
  if (!values.dataset) throw new UsageError('missing --dataset', RUN_USAGE);
  const limit = intFlag(values.limit, 'limit', RUN_USAGE, { min: 1 })!;
  const offset = intFlag(values.offset, 'offset', RUN_USAGE)!;
  const seed = intFlag(values.seed, 'seed', RUN_USAGE)!;
  const request = modelRequestOf(values, RUN_USAGE);

  const file = path.resolve(positionals[0]!);
  const tools = defaultTools();
  const workflow = loadWorkflowFile(file, { tools });
  // Weight versions are looked up in the database before any dataset or model is read.
  const resolved = asCliSync(() => (request.roleVersions ? withStore(values.db!, (s) => resolveModels(workflow.graph, request, (id) => s.weights.find(id)), false) : resolveModels(workflow.graph, request)), RUN_USAGE);
  const cards = cardsConfigFromFlags(values, workflow.graph, values.db!, RUN_USAGE, io);

  const store = openStore(values.db!);
  try {
    const bar = progress(io, (e) => io.stderr(`Experiment ${e.experimentId}: ${workflow.graph.name} on ${e.total} ${store.getExperiment(e.experimentId).dataset}/${values.split} tasks -> ${store.file}\n`));
    const handle = await asCli(() => startExperiment({
      kind: 'run', workflow: { ...workflow, file }, dataset: values.dataset!, split: values.split!, limit, offset, seed, dataDir: values['data-dir'],
      models: resolved.config, ...(cards && { cards }), ...(request.roleVersions && { roleVersions: request.roleVersions }),
    }, cliDeps(store, tools), { onEvent: bar.onEvent }), RUN_USAGE, { offset });
    const outcome = settled(await bar.follow(handle));
    const report = outcome.report;
    io.stdout(values.json ? reportJson(report) : formatReport(report, `${workflow.graph.name} on ${store.getExperiment(outcome.experimentId).dataset}/${values.split}`));
    return exitOf(outcome);
  } finally {
    store.close();
  }
}
