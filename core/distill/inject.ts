import type { Card } from '../store/improve.ts';
import { estimateTokens, type TokenCounter } from './prompt.ts';

/** A card as it appears in a prompt: its title line, when it applies, the advice. */
export function renderCard(card: Pick<Card, 'title' | 'appliesWhen' | 'advice'>): string {
  return `- ${card.title} (when: ${card.appliesWhen}) ${card.advice}\n`;
}

/** Newest first (created time, then id, descending): the order cards compete for the budget. */
export function newestFirst<C extends Pick<Card, 'createdAt' | 'id'>>(cards: readonly C[]): C[] {
  return [...cards].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

export interface HintBudget {
  /** Most tokens the hint text may take (by `countTokens`). */
  budgetTokens: number;
  /** Default {@link estimateTokens}: ceil(characters / 4). Pass the model's tokenizer where one is at hand. */
  countTokens?: TokenCounter;
  /** Most cards (a role's `hint_slots` when it sets one). */
  maxCards?: number;
}

/**
 * The hint text of a role from `cards` (already the role's, in priority order: pass them
 * through {@link newestFirst} for newest first), within a token budget. Each card costs
 * `countTokens(renderCard(card))`; cards are taken in order, a card that does not fit the rest
 * of the budget is skipped (a later, shorter one may still fit), up to `maxCards`.
 * Returns the text (the rendered cards, concatenated) and the ids of the cards in it. Pure.
 */
export function cardHints(cards: readonly Card[], budget: HintBudget): { text: string; ids: string[] } {
  const count = budget.countTokens ?? estimateTokens;
  const max = budget.maxCards ?? Infinity;
  let left = budget.budgetTokens;
  let text = '';
  const ids: string[] = [];
  for (const card of cards) {
    if (ids.length >= max) break;
    const block = renderCard(card);
    const cost = count(block);
    if (cost > left) continue;
    left -= cost;
    text += block;
    ids.push(card.id);
  }
  return { text, ids };
}

/**
 * Hands each run's prompts the hint cards of their role and remembers which cards each run saw.
 * The card set of a run is frozen at its first prompt, so cards added mid-experiment (online
 * meta-distillation) reach only runs that start afterwards and a run never mixes card sets.
 * Plug `hints` and `cardsUsed` into `executePending`.
 */
export class CardInjector {
  private cards: Card[];
  private readonly perRun = new Map<string, { cards: Card[]; byRole: Map<string, { text: string; ids: string[] }> }>();

  constructor(
    cards: readonly Card[],
    private readonly budget: Omit<HintBudget, 'maxCards'> & { maxCardsFor?: (role: string) => number | undefined },
  ) {
    this.cards = [...cards];
  }

  /** Cards that runs starting from now may receive. */
  get library(): readonly Card[] {
    return this.cards;
  }

  add(card: Card): void {
    if (!this.cards.some((c) => c.id === card.id)) this.cards.push(card);
  }

  /** The hint text for one role in one run ('' when no card of the role fits). */
  hints(role: string, runId: string): string {
    let run = this.perRun.get(runId);
    if (!run) this.perRun.set(runId, (run = { cards: [...this.cards], byRole: new Map() }));
    let h = run.byRole.get(role);
    if (!h) {
      const mine = newestFirst(run.cards.filter((c) => c.role === role));
      h = cardHints(mine, { budgetTokens: this.budget.budgetTokens, countTokens: this.budget.countTokens, maxCards: this.budget.maxCardsFor?.(role) });
      run.byRole.set(role, h);
    }
    return h.text;
  }

  /** Ids of the cards whose text reached at least one prompt of the run; forgets the run. */
  cardsUsed(runId: string): string[] {
    const run = this.perRun.get(runId);
    this.perRun.delete(runId);
    return run ? [...run.byRole.values()].flatMap((h) => h.ids) : [];
  }
}
