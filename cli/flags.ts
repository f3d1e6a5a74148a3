/**
 * The flags the experiment-creating commands share (`run`, `blame-eval`, `rollouts`, `train-loop`,
 * ...), and their mapping into the inputs of the shared resolvers: a `ModelRequest`
 * (models/resolve.ts) and a `CardsRequest` (core/distill/hooks.ts). What the commands run on
 * (store, sandbox, datasets, service ports, tools): wiring.ts.
 */
import { existsSync } from 'node:fs';
import { cardsConfigFor, ONLINE_DEFAULTS, type CardsConfig, type CardsRequest } from '../core/distill/index.ts';
import type { ModelRequest } from '../core/model/index.ts';
import type { Card } from '../core/store/index.ts';
import type { Graph } from '../core/workflow/index.ts';
import { clampThreads } from '../models/resolve.ts';
import { Option, type Command } from 'commander';
import { commaList, dbOption, intOption, pairLists, pairRecord, parseLoraValue, LORA_SHAPE, rolePairOption, UsageError } from './args.ts';
import { asCliSync } from './errors.ts';
import type { Io } from './io.ts';
import { withStore } from './wiring.ts';

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

/** `--corpus <dir>`: the folder the `retrieve` tool searches (`run`, `rollouts`, `train-loop`). */
export function addCorpusOption(cmd: Command): Command {
  return cmd.option('--corpus <dir>', "a folder of .txt, .md and .jsonl files the 'retrieve' tool searches (BM25; indexed once, cached in flowlab-cache/ beside the database)");
}
