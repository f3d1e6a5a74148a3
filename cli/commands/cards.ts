import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import Table from 'cli-table3';
import {
  agentRoles,
  cardHints,
  newestFirst,
  cardSession,
  exportCards,
  importCards,
  ONLINE_DEFAULTS,
  parseCardsDocument,
  type CardsConfig,
} from '../../core/distill/index.ts';
import type { ExecuteOptions } from '../../core/experiments/index.ts';
import type { RoleName } from '../../core/ids.ts';
import type { ModelProvider } from '../../core/model/index.ts';
import { openStore, type Card, type ExperimentRow, type Store } from '../../core/store/index.ts';
import type { Graph } from '../../core/workflow/index.ts';
import { intFlag, parse, UsageError } from '../args.ts';
import type { ModelConfig } from '../compose.ts';
import { processIo, type Io } from './common.ts';

export const CARDS_USAGE = `Usage: flowlab cards <list|show|rm|export|import> [options]

The prior library of hint cards (test-time distillation; see docs/hint-cards.md).

  cards list [--role R] [--json]             every card: id, role, title, teacher, shots, uses
  cards show <id> [--json]                   one card with its provenance and the runs that used it
  cards rm <id>                              remove a card (its use records go with it)
  cards export [--out file.json] [ids...]    a versioned JSON document (all cards when no ids; stdout when no --out)
  cards import <file.json>                   add the cards of an exported document; refuses ids already present

Options:
  --db <file>    SQLite database    [default: flowlab.db]
Cards distilled from simulated trajectories, or by a simulated teacher, are marked SIMULATED.
`;

const db = () => ({ type: 'string' as const, default: process.env.FLOWLAB_DB ?? 'flowlab.db' });

export async function cardsCommand(argv: string[], io: Io = processIo): Promise<number> {
  const [sub, ...rest] = argv;
  switch (sub) {
    case 'list': {
      const { values, positionals } = parse(rest, { db: db(), role: { type: 'string' }, json: { type: 'boolean', default: false } }, CARDS_USAGE);
      if (positionals.length) throw new UsageError(`cards list takes no positional arguments, got ${positionals.join(' ')}`, CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        const cards = store.improve.listCards({ role: values.role });
        io.stdout(values.json ? JSON.stringify(cards) + '\n' : formatCardList(cards));
        return 0;
      });
    }
    case 'show': {
      const { values, positionals } = parse(rest, { db: db(), json: { type: 'boolean', default: false } }, CARDS_USAGE);
      if (positionals.length !== 1) throw new UsageError('cards show takes one <card-id>', CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        const card = store.improve.getCard(positionals[0]!);
        const usedBy = store.improve.usesOf(card.id);
        io.stdout(values.json ? JSON.stringify({ ...card, usedBy }) + '\n' : formatCard(card, usedBy));
        return 0;
      });
    }
    case 'rm': {
      const { values, positionals } = parse(rest, { db: db() }, CARDS_USAGE);
      if (positionals.length !== 1) throw new UsageError('cards rm takes one <card-id>', CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        if (!store.improve.deleteCard(positionals[0]!)) throw new Error(`${store.file}: no card ${positionals[0]}`);
        io.stderr(`Removed card ${positionals[0]}.\n`);
        return 0;
      });
    }
    case 'export': {
      const { values, positionals } = parse(rest, { db: db(), out: { type: 'string' } }, CARDS_USAGE);
      return withStore(values.db!, true, (store) => {
        const all = store.improve.listCards();
        const missing = positionals.filter((id) => !all.some((c) => c.id === id));
        if (missing.length) throw new Error(`${store.file}: no card(s) ${missing.join(', ')}`);
        const cards = positionals.length ? positionals.map((id) => all.find((c) => c.id === id)!) : all;
        const text = JSON.stringify(exportCards(cards), null, 2) + '\n';
        if (values.out) {
          writeFileSync(values.out, text);
          io.stderr(`Exported ${cards.length} card(s) to ${values.out}.\n`);
        } else io.stdout(text);
        return 0;
      });
    }
    case 'import': {
      const { values, positionals } = parse(rest, { db: db() }, CARDS_USAGE);
      if (positionals.length !== 1) throw new UsageError('cards import takes one <file.json>', CARDS_USAGE);
      const file = positionals[0]!;
      let value: unknown;
      try {
        value = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw new Error(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : `not JSON: ${(e as Error).message}`}`);
      }
      const doc = parseCardsDocument(value, file);
      return withStore(values.db!, false, (store) => {
        const cards = importCards(store, doc);
        const sim = cards.filter((c) => c.simulated).length;
        io.stderr(`Imported ${cards.length} card(s) into ${store.file}${sim ? ` (${sim} SIMULATED)` : ''}.\n`);
        return 0;
      });
    }
    default:
      throw new UsageError(sub ? `unknown cards command "${sub}"` : 'missing a cards command (list, show, rm, export, import)', CARDS_USAGE);
  }
}

function withStore<T>(file: string, mustExist: boolean, fn: (store: Store) => T): T {
  const store = openStore(file, { mustExist });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

const SIM = 'SIMULATED';

/** One card, as `cards show` and `distill` print it. */
export function formatCard(card: Card & { uses?: number }, usedBy?: readonly string[]): string {
  const prov = card.meta?.provenance as { requestedShots?: number } | undefined;
  const online = card.meta?.online as { afterTasks?: number } | undefined;
  const asked = prov?.requestedShots !== undefined && prov.requestedShots !== card.shots ? ` (asked for ${prov.requestedShots})` : '';
  return [
    `${card.id}${card.simulated ? `  ${SIM} (distilled from simulated trajectories or by a simulated teacher)` : ''}`,
    `  role           ${card.role}`,
    `  title          ${card.title}`,
    `  applies when   ${card.appliesWhen}`,
    `  advice         ${card.advice}`,
    `  teacher        ${card.teacher}`,
    `  shots          ${card.shots}${asked}${card.onlySuccesses ? ', successful runs only' : ', best runs by ladder reward'}`,
    `  source runs    ${card.sourceRuns.join(', ') || '-'}`,
    ...(card.experimentId ? [`  experiment     ${card.experimentId}${online?.afterTasks !== undefined ? ` (online, after ${online.afterTasks} tasks)` : ''}`] : []),
    `  created        ${new Date(card.createdAt).toISOString()}`,
    ...(card.uses !== undefined ? [`  uses           ${card.uses}${usedBy?.length ? ` (${usedBy.slice(0, 10).join(', ')}${usedBy.length > 10 ? ', …' : ''})` : ''}`] : []),
  ].join('\n') + '\n';
}

export function formatCardList(cards: ReadonlyArray<Card & { uses: number }>): string {
  if (!cards.length) return 'No hint cards (distil one with `flowlab distill`, or `flowlab cards import`).\n';
  const t = new Table({ head: ['id', 'role', 'title', 'teacher', 'shots', 'uses', ''], style: { head: [], border: [], compact: true } });
  for (const c of cards) t.push([c.id, c.role, c.title.length > 40 ? c.title.slice(0, 39) + '…' : c.title, c.teacher, String(c.shots), String(c.uses), c.simulated ? SIM : '']);
  return t.toString() + '\n';
}

// ---------- run / resume: --cards, --distill-every ----------

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
 * The experiment's hint-card configuration from `run`'s flags, or undefined when no card is
 * used (`--cards none` and no `--distill-every`: the config stays as before). `all` and id lists
 * resolve to card ids now, so `resume` injects exactly these. Reads the library of `dbFile`.
 * Errors: UsageError (bad numbers, unknown card ids or roles).
 */
export function cardsConfigFromFlags(values: CardFlagValues, graph: Graph, dbFile: string, usage: string, io: Io): CardsConfig | undefined {
  const sel = (values.cards ?? 'none').trim();
  const budgetTokens = intFlag(values['card-budget'], 'card-budget', usage, { min: 1 }) ?? 256;
  const every = intFlag(values['distill-every'], 'distill-every', usage, { min: 1 });
  if (sel === 'none' && every === undefined) return undefined;
  let ids: string[] = [];
  if (sel !== 'none') {
    if (!sel) throw new UsageError('--cards takes all, none or card ids separated by commas', usage);
    // No database yet: an empty library.
    const library: Card[] = existsSync(dbFile) ? withStore(dbFile, true, (s) => s.improve.listCards()) : [];
    const roles = new Set<string>(graph.roles.keys());
    if (sel === 'all') ids = library.filter((c) => roles.has(c.role)).map((c) => c.id);
    else {
      ids = [...new Set(sel.split(',').map((s) => s.trim()).filter(Boolean))];
      const unknown = ids.filter((id) => !library.some((c) => c.id === id));
      if (unknown.length) throw new UsageError(`--cards: no card ${unknown.join(', ')} in ${dbFile} (see \`flowlab cards list\`)`, usage);
      for (const c of library.filter((c) => ids.includes(c.id) && !roles.has(c.role))) io.stderr(`Note: card ${c.id} is for role "${c.role}", which ${graph.name} does not have; it will not be injected.\n`);
    }
    const chosen = library.filter((c) => ids.includes(c.id));
    const sim = chosen.filter((c) => c.simulated).length;
    io.stderr(`Hint cards: ${chosen.length} chosen (${sel === 'all' ? 'all in the library' : sel})${sim ? `, ${sim} SIMULATED` : ''}; budget ${budgetTokens} tokens per role and prompt.\n`);
  }
  const config: CardsConfig = { selection: sel === 'all' || sel === 'none' ? sel : ids, ids, budgetTokens };
  if (every !== undefined) {
    const shots = intFlag(values['distill-shots'], 'distill-shots', usage, { min: 1 }) ?? ONLINE_DEFAULTS.shots;
    const roles = values['distill-roles'] ? values['distill-roles'].split(',').map((s) => s.trim()).filter(Boolean) : agentRoles(graph);
    const bad = roles.filter((r) => !graph.roles.has(r as RoleName));
    if (bad.length) throw new UsageError(`--distill-roles names role(s) ${bad.join(', ')}, which the workflow does not have (roles: ${[...graph.roles.keys()].join(', ')})`, usage);
    if (shots === 1) io.stderr('Note: --distill-shots 1: FloWright found 1-exemplar distillation scored below none at all; 5 helped most.\n');
    const onlySuccesses = !values['distill-with-failures'];
    config.distill = { every, shots, roles, onlySuccesses, budgetTokens: ONLINE_DEFAULTS.budgetTokens, maxTokens: ONLINE_DEFAULTS.maxTokens };
    io.stderr(`Online meta-distillation: a card per role (${roles.join(', ')}) after every ${every} tasks, from ${onlySuccesses ? 'successful runs only' : 'the best runs'}; prompts change mid-experiment (each run's cards are recorded).\n`);
  }
  return config;
}

export type CardHooks = Pick<ExecuteOptions, 'hints' | 'cardsUsed' | 'afterRun'>;

/** The stored hint-card configuration of an experiment, if it has one. */
export function cardsConfigOf(exp: ExperimentRow): CardsConfig | undefined {
  return (exp.config as { cards?: CardsConfig } | null)?.cards;
}

/**
 * The executePending hooks that inject an experiment's cards (from its stored config) and distil
 * online; undefined when the experiment uses no cards. Errors: a configured card is gone.
 */
export function cardHooksFor(store: Store, exp: ExperimentRow, graph: Graph, provider: ModelProvider, models: ModelConfig, io: Io): CardHooks | undefined {
  const config = cardsConfigOf(exp);
  if (!config) return undefined;
  return cardSession({
    store, experimentId: exp.id, graph, config, provider, seed: exp.seed,
    modelFor: (role) => models.roleModels[role] ?? 'default',
    log: (line) => io.stderr(line),
  }).hooks;
}

/** Checks that every card an experiment was configured with is still in the library (before loading models). */
export function assertCardsAvailable(store: Store, exp: ExperimentRow): void {
  const config = cardsConfigOf(exp);
  if (!config) return;
  const have = new Set(store.improve.listCards().map((c) => c.id));
  const gone = config.ids.filter((id) => !have.has(id));
  if (gone.length) throw new Error(`hint card(s) ${gone.join(', ')}, chosen for experiment ${exp.id}, are no longer in the library of ${store.file}; import them again (\`flowlab cards import\`) to resume with the same prompts`);
}

/**
 * For `replay`: the hint text each recorded run carried, rebuilt from its recorded card uses with
 * the experiment's budget (the same cards in the same order give the same text), so prompts match
 * the recording. Undefined when the experiment used no cards.
 */
export function replayHintsFor(store: Store, exp: ExperimentRow, graph: Graph): ((role: RoleName, runId: string) => string) | undefined {
  const config = cardsConfigOf(exp);
  if (!config) return undefined;
  const byRun = new Map<string, Card[]>();
  for (const { uses: _uses, ...card } of store.improve.listCards()) {
    for (const runId of store.improve.usesOf(card.id)) {
      if (!byRun.has(runId)) byRun.set(runId, []);
      byRun.get(runId)!.push(card);
    }
  }
  const maxCardsFor = (role: string) => graph.roles.get(role as RoleName)?.hintSlots || undefined;
  return (role, runId) => cardHints(newestFirst((byRun.get(runId) ?? []).filter((c) => c.role === role)), { budgetTokens: config.budgetTokens, maxCards: maxCardsFor(role) }).text;
}
