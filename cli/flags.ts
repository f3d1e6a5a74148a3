/**
 * The flags the experiment-creating commands share (`run`, `blame-eval`, `rollouts`), and their
 * mapping into the inputs of the shared resolvers: a `ModelRequest` (models/resolve.ts) and a
 * `CardsRequest` (core/distill/hooks.ts), plus the service's ports over the local files.
 */
import { existsSync } from 'node:fs';
import { cardsConfigFor, ONLINE_DEFAULTS, type CardsConfig, type CardsRequest } from '../core/distill/index.ts';
import type { ServiceDeps } from '../core/experiments/index.ts';
import type { ModelRequest } from '../core/model/index.ts';
import { openStore, type Card, type Store } from '../core/store/index.ts';
import { defaultTools } from '../core/tools/index.ts';
import type { Graph } from '../core/workflow/index.ts';
import { fileModelPort } from '../models/factory.ts';
import { intFlag, pairs, parseRoleLoras, rolePairs, UsageError } from './args.ts';
import { asCliSync } from './errors.ts';
import type { Io } from './io.ts';

/**
 * Dataset selection, models, seed, database, threads, GPU and JSON output. `--limit` is left to
 * each command (their defaults differ).
 */
export const EXPERIMENT_FLAGS = {
  dataset: { type: 'string' },
  split: { type: 'string', default: 'test' },
  offset: { type: 'string', default: '0' },
  model: { type: 'string' },
  'role-model': { type: 'string', multiple: true },
  seed: { type: 'string', default: '0' },
  db: { type: 'string', default: process.env.FLOWLAB_DB ?? 'flowlab.db' },
  'data-dir': { type: 'string' },
  threads: { type: 'string' },
  'context-size': { type: 'string' },
  gpu: { type: 'string' },
  json: { type: 'boolean', default: false },
} as const;

type ModelFlagValues = { model?: string; 'role-model'?: string[]; 'role-lora'?: string[]; 'role-version'?: string[]; threads?: string; 'context-size'?: string; gpu?: string };

/** `--gpu auto|off` (absent: off). */
export function gpuFlag(value: string | undefined, usage: string): 'auto' | false {
  if (value === undefined || value === 'off' || value === 'false') return false;
  if (value === 'auto') return 'auto';
  throw new UsageError(`--gpu takes auto or off, got "${value}"`, usage);
}

/** The model flags as the resolver's input. `minContext`: the smallest `--context-size` accepted. */
export function modelRequestOf(values: ModelFlagValues, usage: string, minContext = 256): ModelRequest {
  const req: ModelRequest = { roles: pairs(values['role-model'], 'role-model', usage), gpu: gpuFlag(values.gpu, usage) };
  if (values.model !== undefined) req.default = values.model;
  const loras = parseRoleLoras(values['role-lora'], usage);
  if (Object.keys(loras).length) req.roleLora = loras;
  const versions = rolePairs(values['role-version'], 'role-version', usage, { shape: 'role=<version-id>', once: true });
  if (versions.length) req.roleVersions = Object.fromEntries(versions);
  const threads = intFlag(values.threads, 'threads', usage, { min: 1 });
  if (threads !== undefined) req.threads = threads;
  const contextSize = intFlag(values['context-size'], 'context-size', usage, { min: minContext });
  if (contextSize !== undefined) req.contextSize = contextSize;
  return req;
}

/** The parse options `flowlab run` adds for hint cards. */
export const CARD_RUN_OPTIONS = {
  cards: { type: 'string', default: 'none' },
  'card-budget': { type: 'string', default: '256' },
  'distill-every': { type: 'string' },
  'distill-shots': { type: 'string', default: String(ONLINE_DEFAULTS.shots) },
  'distill-roles': { type: 'string' },
  'distill-with-failures': { type: 'boolean', default: false },
} as const;

export const CARD_RUN_USAGE = `  --cards <all|none|id,id>  hint cards injected into their roles' prompts [default: none]
  --card-budget <tokens>    hint tokens per role and prompt (chars/4)     [default: 256]
  --distill-every <k>       online meta-distillation: after every k tasks, distil a card per role
                            from the runs so far; later tasks get it (prompts change mid-experiment)
  --distill-shots <k>       exemplars per online card                     [default: 5]
  --distill-roles <r,r>     roles given online cards (default: every role that runs an agent node)
  --distill-with-failures   let online cards learn from failed runs too (default: successes only)
`;

type CardFlagValues = { cards?: string; 'card-budget'?: string; 'distill-every'?: string; 'distill-shots'?: string; 'distill-roles'?: string; 'distill-with-failures'?: boolean };

/**
 * The experiment's hint-card configuration from `run`'s flags (cardsConfigFor over the library
 * of `dbFile`), or undefined when no card is used. Notes what was chosen on stderr.
 * Errors: UsageError (bad numbers, unknown card ids or roles).
 */
export function cardsConfigFromFlags(values: CardFlagValues, graph: Graph, dbFile: string, usage: string, io: Io): CardsConfig | undefined {
  const sel = (values.cards ?? 'none').trim();
  const budgetTokens = intFlag(values['card-budget'], 'card-budget', usage, { min: 1 }) ?? 256;
  const every = intFlag(values['distill-every'], 'distill-every', usage, { min: 1 });
  if (sel === 'none' && every === undefined) return undefined;
  if (!sel) throw new UsageError('--cards takes all, none or card ids separated by commas', usage);
  const req: CardsRequest = { selection: sel === 'all' || sel === 'none' ? sel : sel.split(',').map((s) => s.trim()).filter(Boolean), budgetTokens };
  if (every !== undefined) {
    const shots = intFlag(values['distill-shots'], 'distill-shots', usage, { min: 1 }) ?? ONLINE_DEFAULTS.shots;
    const roles = values['distill-roles'] ? values['distill-roles'].split(',').map((s) => s.trim()).filter(Boolean) : undefined;
    req.distill = { every, shots, ...(roles && { roles }), withFailures: Boolean(values['distill-with-failures']) };
  }
  // No database yet: an empty library.
  const library: Card[] = sel !== 'none' && existsSync(dbFile) ? withStore(dbFile, (s) => s.improve.listCards()) : [];
  const { config, chosen, foreign } = asCliSync(() => cardsConfigFor(req, graph, library), usage, { db: dbFile });
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

/** The experiment service's ports for a command: the open store, node-llama-cpp over local files, the default tools. */
export function cliDeps(store: Store, tools = defaultTools()): ServiceDeps {
  return { store, models: fileModelPort(), tools };
}
