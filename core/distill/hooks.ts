/**
 * Hint cards of an experiment, the part every face shares: turning a card request (`--cards`,
 * `--distill-every` or the lab's `cards`, `distillEvery`) into the stored `CardsConfig`, the
 * executePending hooks that inject the cards and distil online, the resume check that the cards
 * are still there, and the replay hint text rebuilt from recorded card uses.
 */
import { FlowlabError } from '../errors.ts';
import type { RoleName } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import { StoreError } from '../store/errors.ts';
import { storedCards } from '../store/config.ts';
import type { Card, ExperimentRow, Store } from '../store/index.ts';
import type { Graph } from '../workflow/graph.ts';
import { cardHints, newestFirst } from './inject.ts';
import { agentRoles, cardSession, ONLINE_DEFAULTS, type CardsConfig } from './session.ts';

/** What a face asks for. `selection`: `all`, `none` or card ids. */
export interface CardsRequest {
  selection: 'all' | 'none' | readonly string[];
  /** Hint tokens per role and prompt. Default 256. */
  budgetTokens?: number;
  /** Online meta-distillation: after every `every` tasks; absent = off. */
  distill?: { every: number; shots?: number; roles?: readonly string[]; withFailures?: boolean };
}

export type CardsRequestErrorCode = 'UNKNOWN_CARD' | 'UNKNOWN_ROLE';

/** A card request that names cards the library lacks (`ids`) or roles the workflow lacks (`roles`). */
export class CardsRequestError extends FlowlabError<CardsRequestErrorCode> {
  override readonly name = 'CardsRequestError';
  constructor(code: CardsRequestErrorCode, readonly field: 'cards' | 'distillRoles', message: string, readonly detail: { ids?: string[]; roles?: string[]; workflowRoles?: string[] }) {
    super(code, message, { field });
  }
}

/** Hint tokens per role and prompt when the request gives none. */
export const DEFAULT_CARD_BUDGET = 256;

/**
 * The experiment's hint-card configuration, or undefined when no card is used (selection `none`
 * and no online distillation: the config stays as without cards). `all` and id lists resolve to
 * card ids of `library` now, so a resume injects exactly these. Also returns the chosen cards and
 * those chosen for a role the workflow lacks (never injected), for the face to report.
 * Errors: CardsRequestError (UNKNOWN_CARD field `cards`, UNKNOWN_ROLE field `distillRoles`).
 */
export function cardsConfigFor(req: CardsRequest, graph: Graph, library: readonly Card[]): { config?: CardsConfig; chosen: Card[]; foreign: Card[] } {
  const budgetTokens = req.budgetTokens ?? DEFAULT_CARD_BUDGET;
  const sel = req.selection;
  if (sel === 'none' && !req.distill) return { chosen: [], foreign: [] };
  const roles = new Set<string>(graph.roles.keys());
  let ids: string[] = [];
  let foreign: Card[] = [];
  if (sel === 'all') ids = library.filter((c) => roles.has(c.role)).map((c) => c.id);
  else if (sel !== 'none') {
    ids = [...new Set(sel)];
    const unknown = ids.filter((id) => !library.some((c) => c.id === id));
    if (unknown.length) throw new CardsRequestError('UNKNOWN_CARD', 'cards', `no card ${unknown.join(', ')} in the library`, { ids: unknown });
    foreign = library.filter((c) => ids.includes(c.id) && !roles.has(c.role));
  }
  const chosen = library.filter((c) => ids.includes(c.id));
  const config: CardsConfig = { selection: sel === 'all' || sel === 'none' ? sel : ids, ids, budgetTokens };
  if (req.distill) {
    const dRoles = req.distill.roles?.length ? [...req.distill.roles] : agentRoles(graph);
    const bad = dRoles.filter((r) => !roles.has(r));
    if (bad.length) throw new CardsRequestError('UNKNOWN_ROLE', 'distillRoles', `distill roles ${bad.join(', ')}: the workflow does not have them (roles: ${[...roles].join(', ')})`, { roles: bad, workflowRoles: [...roles] });
    config.distill = {
      every: req.distill.every,
      shots: req.distill.shots ?? ONLINE_DEFAULTS.shots,
      roles: dRoles,
      onlySuccesses: !req.distill.withFailures,
      budgetTokens: ONLINE_DEFAULTS.budgetTokens,
      maxTokens: ONLINE_DEFAULTS.maxTokens,
    };
  }
  return { config, chosen, foreign };
}

/** The stored hint-card configuration of an experiment, if it has one. */
export function cardsConfigOf(exp: ExperimentRow): CardsConfig | undefined {
  return storedCards(exp);
}

/**
 * The hooks that inject an experiment's cards (from its stored config) and distil online
 * (cardSession); undefined when the experiment uses no cards. Errors: a configured card is gone.
 */
export function cardHooksFor(store: Store, exp: ExperimentRow, graph: Graph, provider: ModelProvider, modelFor: (role: RoleName) => string, log: (line: string) => void) {
  const config = cardsConfigOf(exp);
  if (!config) return undefined;
  return cardSession({ store, experimentId: exp.id, graph, config, provider, seed: exp.seed, modelFor, log }).hooks;
}

/** Checks that every card an experiment was configured with is still in the library (before loading models). */
export function assertCardsAvailable(store: Store, exp: ExperimentRow): void {
  const config = cardsConfigOf(exp);
  if (!config) return;
  const have = new Set(store.improve.listCards().map((c) => c.id));
  const gone = config.ids.filter((id) => !have.has(id));
  if (gone.length) throw new StoreError('NOT_FOUND', `hint card(s) ${gone.join(', ')}, chosen for experiment ${exp.id}, are no longer in the library of ${store.file}; import them again (\`flowlab cards import\`) to resume with the same prompts`, exp.id);
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
