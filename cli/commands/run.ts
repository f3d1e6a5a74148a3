import path from 'node:path';
import { openStore } from '../../core/store/index.ts';
import { defaultTools } from '../../core/tools/index.ts';
import { loadWorkflowFile } from '../../core/workflow/index.ts';
import { intFlag, pairs, parse, UsageError } from '../args.ts';
import { resolveModels, resolveRoleVersions, withFingerprints, loadedLlamaProvider } from '../compose.ts';
import { formatReport } from '../format.ts';
import { processIo, reportJson, runPending, type Io, loadTasks, EXPERIMENT_FLAGS, createWorkflowExperiment } from './common.ts';
import { CARD_RUN_OPTIONS, CARD_RUN_USAGE, cardHooksFor, cardsConfigFromFlags } from './cards.ts';

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
  const threads = intFlag(values.threads, 'threads', RUN_USAGE, { min: 1 });
  const contextSize = intFlag(values['context-size'], 'context-size', RUN_USAGE, { min: 256 });
  const roleModel = pairs(values['role-model'], 'role-model', RUN_USAGE);
  const roleVersions = values['role-version']?.length ? versionsFor(values['role-version'], values.db!) : undefined;

  const file = path.resolve(positionals[0]!);
  const tools = defaultTools();
  const workflow = loadWorkflowFile(file, { tools });
  if (roleVersions) {
    for (const [role, v] of Object.entries(roleVersions(workflow.graph))) {
      if (roleModel[role]) throw new UsageError(`role "${role}" has both --role-model and --role-version`, RUN_USAGE);
      roleModel[role] = v.path;
    }
  }
  // Argument-level checks (cards exist, distill flags) before reading any dataset or model.
  const cards = cardsConfigFromFlags(values, workflow.graph, values.db!, RUN_USAGE, io);
  const { dataset, tasks } = loadTasks(values.dataset, { dataDir: values['data-dir'], split: values.split!, limit, offset }, io);
  const models = resolveModels(workflow.graph, { model: values.model, roleModel, threads, contextSize, gpu: values.gpu, roleLora: values['role-lora'] }, RUN_USAGE);
  const provider = await loadedLlamaProvider(models);

  const store = openStore(values.db!);
  try {
    const exp = createWorkflowExperiment(store, {
      kind: 'run',
      workflow: workflow,
      dataset: dataset.name,
      split: values.split!,
      limit,
      seed,
      config: { workflowFile: file, offset, dataDir: values['data-dir'], models: withFingerprints(models), ...(cards && { cards }), ...(values['role-version']?.length && { roleVersions: values['role-version'] }) },
      tasks: tasks.map((t) => ({ taskIndex: t.index - offset, taskId: t.id, input: t.input, expected: t.expected })),
    });
    io.stderr(`Experiment ${exp.id}: ${workflow.graph.name} on ${tasks.length} ${dataset.name}/${values.split} tasks -> ${store.file}\n`);
    const report = await runPending({ store, experimentId: exp.id, graph: workflow.graph, grader: dataset.grader, provider, tools, seed, models, io, cards: cardHooksFor(store, exp, workflow.graph, provider, models, io) });
    io.stdout(values.json ? reportJson(report) : formatReport(report, `${workflow.graph.name} on ${dataset.name}/${values.split}`));
    return report.status === 'completed' ? 0 : 130;
  } finally {
    store.close();
  }
}

/** `--role-version` lookups against the database (read once, before the run starts). */
function versionsFor(values: string[], db: string) {
  return (graph: Parameters<typeof resolveRoleVersions>[0]) => {
    const store = openStore(db);
    try {
      return resolveRoleVersions(graph, values, (id) => store.weights.find(id), RUN_USAGE);
    } finally {
      store.close();
    }
  };
}
