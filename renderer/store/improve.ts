/**
 * The Rollouts and Prior library views' state: a rollouts experiment's groups (Rollouts) and the prior library of hint cards
 * with each card's measured effect (Prior library). A late answer for an experiment the user
 * left, or an older library load, is dropped.
 */
import type { CardEffectView, LibraryCard, RolloutsView } from '../../core/api/client.ts';
import { IDLE, load, LOADING, type Loadable } from './loadable.ts';
import type { SliceContext } from './types.ts';

export interface ImproveSlice {
  /** The rollouts experiment shown in the Rollouts view. */
  rolloutsExperimentId: string | null;
  rollouts: Loadable<RolloutsView>;
  /** The group shown (its `index`), or null for the first. */
  rolloutGroup: number | null;
  /** Shows a rollouts experiment (null: none); keeps the group when it is the same experiment. */
  selectRolloutsExperiment(id: string | null): Promise<void>;
  selectRolloutGroup(index: number): void;
  /** Opens a run in the Trace view (its experiment selected, then the run). */
  openRunTrace(experimentId: string, runId: string): Promise<void>;

  /** The prior library (all roles). */
  cards: Loadable<LibraryCard[]>;
  /** Role filter of the library view ('' = every role). */
  cardRole: string;
  /** Measured effects by card id (fetched for cards that were used). */
  cardEffects: Record<string, Loadable<CardEffectView>>;
  /** Loads the library, then the effect of every used card. */
  loadCards(): Promise<void>;
  setCardRole(role: string): void;
  loadCardEffect(cardId: string): Promise<void>;
}

/** Adds this slice to the lab state (store/types.ts). */
declare module './types.ts' {
  interface LabState extends ImproveSlice {}
}

export function createImproveSlice({ api, set, get }: SliceContext): ImproveSlice {
  let cardsTicket = 0;
  return {
    rolloutsExperimentId: null,
    rollouts: IDLE,
    rolloutGroup: null,
    cards: IDLE,
    cardRole: '',
    cardEffects: {},

    async selectRolloutsExperiment(id) {
      const same = id === get().rolloutsExperimentId;
      set({
        rolloutsExperimentId: id,
        rollouts: id ? (same && get().rollouts.status === 'ready' ? get().rollouts : LOADING) : IDLE,
        ...(same ? {} : { rolloutGroup: null }),
      });
      if (!id) return;
      const rollouts = await load(() => api.getRollouts({ experimentId: id }));
      if (get().rolloutsExperimentId !== id) return;
      set({ rollouts });
    },

    selectRolloutGroup(index) {
      set({ rolloutGroup: index });
    },

    async openRunTrace(experimentId, runId) {
      const experiment = get().selectExperiment(experimentId);
      const run = get().selectRun(runId);
      get().setView('trace');
      await Promise.all([experiment, run]);
    },

    async loadCards() {
      const ticket = ++cardsTicket;
      if (get().cards.status !== 'ready') set({ cards: LOADING });
      const cards = await load(() => api.listCards());
      if (ticket !== cardsTicket) return;
      set({ cards });
      if (cards.status !== 'ready') return;
      // Effects of used cards (an unused card has none to measure); stale ones are refetched.
      const keep = Object.fromEntries(Object.entries(get().cardEffects).filter(([id]) => cards.data.some((c) => c.id === id && c.uses > 0)));
      set({ cardEffects: keep });
      await Promise.all(cards.data.filter((c) => c.uses > 0).map((c) => get().loadCardEffect(c.id)));
    },

    setCardRole(role) {
      set({ cardRole: role });
    },

    async loadCardEffect(cardId) {
      const ticket = cardsTicket;
      if (get().cardEffects[cardId]?.status !== 'ready') set({ cardEffects: { ...get().cardEffects, [cardId]: LOADING } });
      const effect = await load(() => api.getCardEffect({ cardId }));
      if (ticket !== cardsTicket) return;
      set({ cardEffects: { ...get().cardEffects, [cardId]: effect } });
    },
  };
}
