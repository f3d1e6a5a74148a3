/**
 * The flags the experiment-creating commands share (`run`, `blame-eval`, `rollouts`), and their
 * mapping into the inputs of the shared resolvers: a `ModelRequest` (models/resolve.ts) and a
 * `CardsRequest` (core/distill/hooks.ts), plus the service's ports over the local files.
 */
import { existsSync } from 'node:fs';
import { cardsConfigFor, ONLINE_DEFAULTS, type CardsConfig, type CardsRequest } from '../core/distill/index.ts';
import type { CorpusRecord, ServiceDeps } from '../core/experiments/index.ts';
import type { ModelRequest } from '../core/model/index.ts';
import { openStore, type Card, type ExperimentConfig, type Store } from '../core/store/index.ts';
import type { CodeSandbox } from '../core/sandbox/index.ts';
import { getDataset, type Dataset } from '../core/tasks/index.ts';
import { defaultTools, type ToolRegistry } from '../core/tools/index.ts';
import { formatIssue, loadWorkflowFile, type Graph, type LoadedWorkflow } from '../core/workflow/index.ts';
import path from 'node:path';
import { openCorpus } from '../models/corpus/index.ts';
import { fileModelPort } from '../models/factory.ts';
import { clampThreads } from '../models/resolve.ts';
import { PyodideSandbox } from '../models/sandbox/index.ts';
import { Option, type Command } from 'commander';
import { commaList, dbOption, intOption, pairLists, pairRecord, parseLoraValue, LORA_SHAPE, rolePairOption, UsageError } from './args.ts';
import { asCliSync } from './errors.ts';
import type { Io } from './io.ts';

/** The model options: `--model`, `--role-model`, `--threads`, `--context-size`, `--gpu` (and, with `lora` / `versions`, `--role-lora` / `--role-version`). */
export function addModelOptions(cmd: Command, opts: { contextSize?: { min: number; default?: number; help?: string }; lora?: boolean; versions?: boolean; threadsHelp?: string } = {}): Command {
  const ctx = opts.contextSize ?? { min: 256 };
  cmd
    .option('--model <file.gguf>', 'model for roles using the "default" reference: a GGUF file, or a server as openai:<url>#<model> (docs/models.md)')
    .addOption(rolePairOption('--role-model <role=file>', 'a different model for one role (repeatable)', { shape: 'role=value' }));
  if (opts.lora) cmd.addOption(rolePairOption('--role-lora <role=adapter.gguf[@scale]>', 'a LoRA adapter (GGUF) on top of the role\'s model (repeatable; the base model is loaded once, the role gets its own context)', { shape: LORA_SHAPE, value: parseLoraValue }));
  if (opts.versions) cmd.addOption(rolePairOption('--role-version <role=version-id>', 'a trained weight version (flowlab train-loop / train) as the role\'s model file (repeatable; see flowlab versions)', { shape: 'role=<version-id>', once: true }));
  return cmd
    .addOption(intOption('--threads <n>', opts.threadsHelp ?? 'CPU threads per model (default: 1 for files < 64 MB, else half the cores)', { min: 1 }))
    .addOption(intOption('--context-size <n>', ctx.help ?? 'context tokens per model (default: 1024)', { min: ctx.min, ...(ctx.default !== undefined && { default: ctx.default }) }))
    .addOption(intOption('--batch <n>', 'tokens per llama.cpp decode (default: flowlab tune\'s best for the file on this machine, else 512)', { min: 1 }))
    .option('--no-prefix-reuse', 'start every model call from an empty KV cache (default: reuse the evaluated prompt prefix of an earlier call)')
    .addOption(new Option('--gpu <auto|off>', 'GPU offload (default: off)'));
}

/**
 * The options the experiment-creating commands share (`run`, `blame-eval`, `rollouts`): dataset
 * selection, models, seed, database, threads, GPU and JSON output; `limit` is each command's
 * default `--limit`.
 */
export function addExperimentOptions(cmd: Command, limit: number, opts: { lora?: boolean; versions?: boolean } = {}): Command {
  cmd
    .addOption(new Option('--dataset <name>', 'dataset (known: gsm8k, learn, learn-word, learn-json, learn-tool, learn-team, learn-design, bamboogle, bamtwoogle, hotpotqa, musique, 2wikimultihopqa; datawright:<shared|paired|decoy>:<k>:<base> composes k sub-questions)').makeOptionMandatory())
    .option('--split <name>', 'split (gsm8k: test, train, test_socratic)', 'test')
    .addOption(intOption('--limit <n>', 'number of tasks', { min: 1, default: limit }))
    .addOption(intOption('--offset <n>', 'skip the first n tasks', { default: 0 }));
  addModelOptions(cmd, opts);
  return cmd
    .addOption(intOption('--seed <n>', 'experiment seed', { default: 0 }))
    .addOption(dbOption())
    .option('--data-dir <dir>', 'dataset folder (default: $FLOWLAB_SHARED/data or ../shared/data)')
    .option('--json', 'print one JSON object instead of the table');
}

/** The parsed model options (commander's camel-cased names). */
export interface ModelFlagValues {
  model?: string;
  roleModel?: Array<[string, string]>;
  roleLora?: Array<[string, { path: string; scale?: number }]>;
  roleVersion?: Array<[string, string]>;
  threads?: number;
  contextSize?: number;
  gpu?: string;
  batch?: number;
  /** commander's `--no-prefix-reuse`: false when given. */
  prefixReuse?: boolean;
}

/** The parsed experiment options. */
export interface ExperimentFlagValues extends ModelFlagValues {
  dataset: string;
  split: string;
  limit: number;
  offset: number;
  seed: number;
  db: string;
  dataDir?: string;
  json?: boolean;
}

/** `--gpu auto|off` (absent: off). Errors: UsageError. */
export function gpuFlag(value: string | undefined): 'auto' | false {
  if (value === undefined || value === 'off' || value === 'false') return false;
  if (value === 'auto') return 'auto';
  throw new UsageError(`--gpu takes auto or off, got "${value}"`);
}

/**
 * The model flags as the resolver's input. `--threads` above this machine's cores is lowered to
 * them (`clampThreads`, models/resolve.ts), saying so on `io`'s stderr.
 */
export function modelRequestOf(values: ModelFlagValues, io?: Io): ModelRequest {
  const req: ModelRequest = { roles: pairRecord(values.roleModel), gpu: gpuFlag(values.gpu) };
  if (values.model !== undefined) req.default = values.model;
  const loras = pairLists(values.roleLora);
  if (Object.keys(loras).length) req.roleLora = loras;
  if (values.roleVersion?.length) req.roleVersions = pairRecord(values.roleVersion);
  if (values.threads !== undefined) {
    const { threads, note } = clampThreads(values.threads);
    if (note) io?.stderr(`Note: --${note}.\n`);
    req.threads = threads;
  }
  if (values.contextSize !== undefined) req.contextSize = values.contextSize;
  if (values.batch !== undefined) req.batchSize = values.batch;
  if (values.prefixReuse === false) req.prefixReuse = false;
  return req;
}

/** The options `flowlab run` adds for hint cards. */
export function addCardOptions(cmd: Command): Command {
  return cmd
    .option('--cards <all|none|id,id>', 'hint cards injected into their roles\' prompts', 'none')
    .addOption(intOption('--card-budget <tokens>', 'hint tokens per role and prompt (chars/4)', { min: 1, default: 256 }))
    .addOption(intOption('--distill-every <k>', 'online meta-distillation: after every k tasks, distil a card per role from the runs so far; later tasks get it (prompts change mid-experiment)', { min: 1 }))
    .addOption(intOption('--distill-shots <k>', 'exemplars per online card', { min: 1, default: ONLINE_DEFAULTS.shots }))
    .option('--distill-roles <r,r>', 'roles given online cards (default: every role that runs an agent node)')
    .option('--distill-with-failures', 'let online cards learn from failed runs too (default: successes only)');
}

interface CardFlagValues { cards?: string; cardBudget?: number; distillEvery?: number; distillShots?: number; distillRoles?: string; distillWithFailures?: boolean }

/**
 * The experiment's hint-card configuration from `run`'s flags (cardsConfigFor over the library
 * of `dbFile`), or undefined when no card is used. Notes what was chosen on stderr.
 * Errors: UsageError (bad numbers, unknown card ids or roles).
 */
export function cardsConfigFromFlags(values: CardFlagValues, graph: Graph, dbFile: string, io: Io): CardsConfig | undefined {
  const sel = (values.cards ?? 'none').trim();
  const budgetTokens = values.cardBudget ?? 256;
  const every = values.distillEvery;
  if (sel === 'none' && every === undefined) return undefined;
  if (!sel) throw new UsageError('--cards takes all, none or card ids separated by commas');
  const req: CardsRequest = { selection: sel === 'all' || sel === 'none' ? sel : commaList(sel)!, budgetTokens };
  if (every !== undefined) {
    const shots = values.distillShots ?? ONLINE_DEFAULTS.shots;
    const roles = values.distillRoles ? commaList(values.distillRoles) : undefined;
    req.distill = { every, shots, ...(roles && { roles }), withFailures: Boolean(values.distillWithFailures) };
  }
  // No database yet: an empty library.
  const library: Card[] = sel !== 'none' && existsSync(dbFile) ? withStore(dbFile, (s) => s.improve.listCards()) : [];
  const { config, chosen, foreign } = asCliSync(() => cardsConfigFor(req, graph, library), { db: dbFile });
  for (const c of foreign) io.stderr(`Note: card ${c.id} is for role "${c.role}", which ${graph.name} does not have; it will not be injected.\n`);
  if (sel !== 'none') {
    const sim = chosen.filter((c) => c.simulated).length;
    io.stderr(`Hint cards: ${chosen.length} chosen (${sel === 'all' ? 'all in the library' : sel})${sim ? `, ${sim} SIMULATED` : ''}; budget ${budgetTokens} tokens per role and prompt.\n`);
  }
  const d = config?.distill;
  if (d) {
    if (d.shots === 1) io.stderr('Note: --distill-shots 1: FloWright found 1-exemplar distillation scored below none at all; 5 helped most.\n');
    io.stderr(`Online meta-distillation: a card per role (${d.roles.join(', ')}) after every ${d.every} tasks, from ${d.onlySuccesses ? 'successful runs only' : 'the best runs'}; prompts change mid-experiment (each run's cards are recorded).\n`);
  }
  return config;
}

/** Runs `fn` on the store of `file` (which must exist unless `mustExist` is false), closing it after. */
export function withStore<T>(file: string, fn: (store: Store) => T, mustExist = true): T {
  const store = openStore(file, { mustExist });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

let sandbox: PyodideSandbox | undefined;

/**
 * The command's code sandbox (models/sandbox: Pyodide in permission-restricted processes), one
 * per CLI process, made on first use; it starts no interpreter until code runs (HumanEval and
 * MBPP grading, the `code_runner` tool). Its workers exit with the CLI (they leave when the IPC
 * channel closes); `closeCliSandbox` stops them sooner.
 */
export function cliSandbox(): CodeSandbox {
  sandbox ??= new PyodideSandbox();
  return sandbox;
}

/** Closes the command's code sandbox if one was made. */
export async function closeCliSandbox(): Promise<void> {
  const s = sandbox;
  sandbox = undefined;
  await s?.close();
}

/** A dataset by name for the experiment service, with the command's code sandbox for code datasets. */
export function cliDatasets(name: string, dataDir?: string): Dataset {
  return getDataset(name, { dataDir, sandbox: cliSandbox() });
}

/** The experiment service's ports for a command: the open store, node-llama-cpp over local files, the default tools (with `code_runner`), datasets with the code sandbox. */
export function cliDeps(store: Store, tools = defaultTools({ sandbox: cliSandbox() })): ServiceDeps {
  return { store, models: fileModelPort(), tools, datasets: cliDatasets };
}

/**
 * The `<workflow.yaml>` argument of an experiment command: the absolute file, the tools (`tools`,
 * default: the built-in ones) and the workflow loaded and validated against them; its warnings
 * (a YAML number that loses what was written, a schema keyword checked only after decoding) go to
 * `io`'s stderr, one located line each. Errors: SpecError (file, line, column of every issue) or the file error
 * naming the path.
 */
export function loadWorkflowArg(workflowFile: string, io?: Io, tools: ToolRegistry = defaultTools({ sandbox: cliSandbox() })): { file: string; tools: ToolRegistry; workflow: LoadedWorkflow } {
  const file = path.resolve(workflowFile);
  const workflow = loadWorkflowFile(file, { tools });
  for (const w of workflow.warnings) io?.stderr(`Warning: ${formatIssue(w)}\n`);
  return { file, tools, workflow };
}

/** `--corpus <dir>`: the folder the `retrieve` tool searches (`run`, `rollouts`, `train-loop`). */
export function addCorpusOption(cmd: Command): Command {
  return cmd.option('--corpus <dir>', "a folder of .txt, .md and .jsonl files the 'retrieve' tool searches (BM25; indexed once, cached in flowlab-cache/ beside the database)");
}

/**
 * The default tools, with `retrieve` over the `--corpus` folder when one is given (models/corpus:
 * indexed once, cached in `flowlab-cache/corpus/` beside the database `db`), and the corpus as the
 * experiment records it; notes the corpus on stderr. Errors: CorpusError (folder missing, bad
 * JSONL line, empty, too large).
 */
export function toolsWithCorpus(corpus: string | undefined, db: string, io: Io): { tools: ToolRegistry; corpus?: CorpusRecord } {
  if (corpus === undefined) return { tools: defaultTools({ sandbox: cliSandbox() }) };
  const cacheDir = path.join(db === ':memory:' ? process.cwd() : path.dirname(path.resolve(db)), 'flowlab-cache', 'corpus');
  const opened = openCorpus(corpus, { cacheDir });
  const how = opened.from === 'built' ? `indexed in ${Math.round(opened.ms)} ms` : `from the ${opened.from === 'disk' ? 'cache' : 'memory'} in ${Math.round(opened.ms)} ms`;
  io.stderr(`Corpus ${opened.root}: ${opened.passages} passages from ${opened.files} files (${how})${opened.skipped.length ? `; skipped links leaving the folder: ${opened.skipped.join(', ')}` : ''}\n`);
  return { tools: defaultTools({ corpus: opened.index, sandbox: cliSandbox() }), corpus: { dir: opened.root, signature: opened.signature, passages: opened.passages } };
}

/**
 * The tools of a stored experiment (`resume`, `replay`): with `retrieve` over the corpus its
 * config recorded (`config.corpus`), opened again; a note on stderr when the folder's files
 * changed since (its retrieve results may differ). Errors: CorpusError when the folder is gone.
 */
export function toolsOfExperiment(config: ExperimentConfig | null, db: string, io: Io): ToolRegistry {
  const recorded = config?.corpus;
  if (!recorded) return defaultTools({ sandbox: cliSandbox() });
  const { tools, corpus } = toolsWithCorpus(recorded.dir, db, io);
  if (corpus?.signature !== recorded.signature) io.stderr(`Note: the corpus ${recorded.dir} changed since the experiment started (files, sizes or times); retrieve may answer differently.\n`);
  return tools;
}

/** Where training writes weight versions by default: `flowlab-versions/` beside the database (the working folder for `:memory:`). */
export function defaultVersionsDir(store: Store): string {
  return path.join(store.file === ':memory:' ? process.cwd() : path.dirname(path.resolve(store.file)), 'flowlab-versions');
}
