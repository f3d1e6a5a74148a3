/**
 * The cards feature: the prior library of hint cards with their provenance, trust marks and
 * measured effect, deleting and exporting cards as `flowlab cards rm` / `cards export` do, and
 * distilling a new card from a stored experiment as `flowlab distill` does (a lab method: it
 * loads the teacher model). The other methods are store reads and writes, answered in-process.
 */
import * as z from 'zod';
import { exportCards as exportDocument, type CardsDocument } from '../../distill/exchange.ts';
import { groupKeyOf } from '../../rollouts/groups.ts';
import type { RunRecord } from '../../results/index.ts';
import { signTest, type SignTest } from '../../stats/index.ts';
import { StoreError, type Card, type Store } from '../../store/index.ts';
import type { ExperimentSummary } from '../../store/types.ts';
import { defineFeature, labMethod, type Awaitable } from '../feature.ts';
import { AbsolutePath, Count, Id, Name } from '../fields.ts';

export type { CardsDocument } from '../../distill/exchange.ts';

/** `listCards`'s payload. */
export interface ListCardsPayload {
  /** Only this role's cards. */
  role?: string;
}

/**
 * Why a hint card is not to be trusted blindly, shown where it is offered: it was distilled from
 * SIMULATED trajectories (injected faults, a scripted model) or by a simulated teacher, or some
 * or all of the runs it was distilled from were graded wrong.
 */
export interface CardTrust {
  /** Source runs recorded, and how many of them are still stored. */
  sources: number;
  found: number;
  /** Stored source runs graded wrong (not `correct`). */
  failedSources: number;
  simulated: boolean;
  /** True when `simulated` or any source run failed. */
  flagged: boolean;
  /** The reasons in users' words, e.g. `distilled from 3 failed runs (all of its sources)`. */
  reasons: string[];
}

/** A card of the prior library with its provenance and how many runs' prompts carried it. */
export type LibraryCard = Card & { uses: number; trust?: CardTrust };

/** `getCardEffect`'s payload. */
export interface GetCardEffectPayload {
  cardId: string;
}

/** Runs on one side of a card comparison. */
export interface CardEffectSide {
  /** Runs counted. */
  runs: number;
  /** Mean grader score 0..1. */
  meanScore: number;
  /** Mean ladder reward h of the card's role; null when no counted run has it. */
  meanH: number | null;
}

/**
 * The measured effect of a card: runs whose prompts carried it vs runs of the same workflow,
 * dataset, split and experiment kind without it. `paired`: matched by dataset task id (and by
 * seed where a run with the same seed exists; several baseline runs of one task are averaged);
 * `unpaired`: no task in common, so the two sides are different tasks (weak evidence).
 */
export interface CardEffect {
  basis: 'paired' | 'unpaired';
  /** Pairs (paired), or runs with the card (unpaired). */
  n: number;
  /** Pairs in which both sides have a ladder for the card's role (the h comparison's n). */
  nH: number;
  with: CardEffectSide;
  without: CardEffectSide;
  /** with − without. */
  delta: { score: number; h: number | null };
  /** Paired only: exact two-sided sign test of the paired differences. */
  signTest?: { score: SignTest; h: SignTest | null };
  /** Paired only: every pair's baseline ran with the same seed as the run with the card. */
  seedsMatch?: boolean;
  /** Runs with the card that found no baseline run of the same task (left out of a paired comparison). */
  unpairedWith: number;
  /** The experiments the baseline runs came from. */
  baselineExperiments: string[];
}

/** `getCardEffect`'s answer. */
export interface CardEffectView {
  card: LibraryCard;
  /** Runs whose prompts carried the card, and their experiments. */
  usedBy: { runs: number; experiments: string[] };
  /** Null when not measured: never used, or no run without it to compare with (`reason` says which). */
  effect: CardEffect | null;
  reason?: string;
}

/** `deleteCard`'s payload. */
export interface DeleteCardPayload {
  cardId: string;
}

/** `exportCards`'s payload: these cards (every card when absent). */
export interface ExportCardsPayload {
  ids?: string[];
}

/**
 * `distillCard`'s payload: `flowlab distill --experiment <id> --role <role>` as data, each field
 * with the CLI's default. `teacher`: an absolute GGUF path (default: the role's own model in the
 * experiment).
 */
export interface DistillCardRequest {
  experimentId: string;
  role: string;
  /** Exemplars, 1..20. Default 5. */
  shots?: number;
  /** Only runs graded correct. Default false (successes and failures). */
  onlySuccesses?: boolean;
  teacher?: string;
  /** Teacher seed. Default 0. */
  seed?: number;
  /** Teacher prompt budget in tokens (estimated as ceil(chars/4)), 64..100000. Default 512. */
  budget?: number;
  /** Most tokens the teacher writes, 16..32768. Default 600. */
  maxTokens?: number;
  /** CPU threads, 1..256. Default: the experiment's. */
  threads?: number;
  /** Teacher context tokens, 256..131072. Default 2048. */
  contextSize?: number;
}

/** The cards methods: store reads and writes (synchronous on the host), and `distillCard`, a lab method. */
export interface CardsApi {
  /** The prior library, oldest first, with provenance and use counts; `role` filters. */
  listCards(payload?: ListCardsPayload): LibraryCard[];
  /** A card and, when runs used it and comparable runs without it exist, its measured effect. Errors: `NOT_FOUND`. */
  getCardEffect(payload: GetCardEffectPayload): CardEffectView;
  /** Removes a card (its use records go with it), as `flowlab cards rm`. Errors: `NOT_FOUND`. */
  deleteCard(payload: DeleteCardPayload): { deleted: true };
  /** The versioned exchange document `flowlab cards export` writes. Errors: `NOT_FOUND` naming the missing ids. */
  exportCards(payload?: ExportCardsPayload): CardsDocument;
  /**
   * A lab method (it loads the teacher model): distils one hint card for a role from a stored
   * experiment's best trajectories, as `flowlab distill` does, and stores it in the prior
   * library; resolves with the card and its trust marks. Errors: `NOT_FOUND` (experiment),
   * `BAD_REQUEST` (unknown role, no model recorded for it and no `teacher`, no exemplar, the
   * teacher's reply not a card, a missing or invalid model file), `BUSY` (the model file in use),
   * `UNAVAILABLE` (a host without models).
   */
  distillCard(payload: DistillCardRequest): Promise<LibraryCard>;
}

/** What a lab host implements of them (optional: hosts without it answer `distillCard` with UNAVAILABLE). */
export interface CardsHost {
  distillCard?(payload: DistillCardRequest): Awaitable<LibraryCard>;
}

export const cardsFeature = defineFeature<CardsApi>()({
  name: 'cards',
  payloads: {
    listCards: z.strictObject({ role: Name.optional() }).optional(),
    getCardEffect: z.strictObject({ cardId: Id }),
    deleteCard: z.strictObject({ cardId: Id }),
    exportCards: z.strictObject({ ids: z.array(Id).max(10_000, 'must have at most 10000 entries').optional() }).optional(),
    distillCard: z.strictObject({
      experimentId: Id,
      role: Name,
      shots: Count(1, 20).optional(),
      onlySuccesses: z.boolean().optional(),
      teacher: AbsolutePath.optional(),
      seed: Count(0, 2_147_483_647).optional(),
      budget: Count(64, 100_000).optional(),
      maxTokens: Count(16, 32_768).optional(),
      threads: Count(1, 256).optional(),
      contextSize: Count(256, 131_072).optional(),
    }),
  },
  lab: ['distillCard'],
  handlers: (deps: { store: Store; lab?: CardsHost | undefined }) => ({
    listCards: (payload) => listLibraryCards(deps.store, payload?.role),
    getCardEffect: ({ cardId }) => buildCardEffect(deps.store, cardId),
    deleteCard: ({ cardId }) => deleteCard(deps.store, cardId),
    exportCards: (payload) => exportCards(deps.store, payload?.ids),
    distillCard: async (payload) => {
      deps.store.getExperiment(payload.experimentId); // NOT_FOUND for an unknown id
      return labMethod(deps, 'distillCard', 'this host cannot load models to distil cards')(payload);
    },
  }),
});

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);

/** The prior library with use counts, optionally one role's cards. */
export function listLibraryCards(store: Store, role?: string): LibraryCard[] {
  const trust = cardTrustReader(store);
  return store.improve.listCards(role === undefined ? {} : { role }).map((c) => ({ ...c, trust: trust(c) }));
}

/**
 * A card with its measured effect. Runs with the card: those whose prompts carried it (card
 * uses). Baseline: every other run of an experiment with the same workflow hash, dataset, split
 * and kind as an experiment of a run with the card. Paired by dataset task id (rollout suffix
 * dropped), preferring baseline runs with the same seed; without a shared task the comparison
 * is `unpaired`.
 */
export function buildCardEffect(store: Store, cardId: string): CardEffectView {
  const card = store.improve.getCard(cardId); // NOT_FOUND
  const used = new Set(store.improve.usesOf(card.id));
  const experiments = store.listExperiments();
  const withRuns = [...used].map((id) => store.getRun(id)); // runs(id) is a foreign key of card_uses: present
  const runsOf = new Map<string, RunRecord[]>();
  const loadRuns = (id: string) => {
    let list = runsOf.get(id);
    if (!list) runsOf.set(id, (list = store.listRuns(id)));
    return list;
  };
  const withExperimentIds = [...new Set(withRuns.map((r) => r.experimentId as string))];
  const usedBy = { runs: used.size, experiments: withExperimentIds };
  if (!withRuns.length) return { card, usedBy, effect: null, reason: 'no run has used this card yet: run with --cards and compare' };

  const sig = (e: Pick<ExperimentSummary, 'workflowHash' | 'dataset' | 'split' | 'kind'>) => `${e.workflowHash}\u0000${e.dataset}\u0000${e.split}\u0000${e.kind}`;
  const withSigs = new Set(experiments.filter((e) => withExperimentIds.includes(e.id)).map(sig));
  const baselineRuns: RunRecord[] = [];
  for (const e of experiments) {
    if (!withSigs.has(sig(e))) continue;
    for (const r of loadRuns(e.id)) if (!used.has(r.runId)) baselineRuns.push(r);
  }
  if (!baselineRuns.length) {
    return { card, usedBy, effect: null, reason: 'no run of the same workflow and tasks without this card yet: run them without --cards, then compare' };
  }
  const effect = measureEffect(card.role, withRuns, baselineRuns);
  return { card, usedBy, effect };
}

/** The ladder reward h of `role` in a run, if it has one. */
const hOf = (run: RunRecord, role: string): number | undefined => run.ladder?.[role]?.reward;

/** Compares runs with a card to runs without it (see `CardEffect`). Pure; exported for tests. */
export function measureEffect(role: string, withRuns: readonly RunRecord[], baselineRuns: readonly RunRecord[]): CardEffect {
  const byTask = new Map<string, RunRecord[]>();
  for (const r of baselineRuns) {
    const key = groupKeyOf(r.taskId);
    const list = byTask.get(key);
    if (list) list.push(r);
    else byTask.set(key, [r]);
  }
  const pairs: Array<{ w: RunRecord; score: number; h: number | undefined; sameSeed: boolean }> = [];
  let unpairedWith = 0;
  const baselineUsed = new Set<string>();
  for (const w of withRuns) {
    const candidates = byTask.get(groupKeyOf(w.taskId));
    if (!candidates?.length) {
      unpairedWith++;
      continue;
    }
    const sameSeed = candidates.filter((c) => c.seed === w.seed);
    const chosen = sameSeed.length ? sameSeed : candidates;
    for (const c of chosen) baselineUsed.add(c.experimentId);
    const hs = chosen.flatMap((c) => (hOf(c, role) === undefined ? [] : [hOf(c, role)!]));
    pairs.push({ w, score: mean(chosen.map((c) => c.score)), h: hs.length ? mean(hs) : undefined, sameSeed: sameSeed.length > 0 });
  }

  if (pairs.length) {
    const hPairs = pairs.filter((p) => p.h !== undefined && hOf(p.w, role) !== undefined);
    const withSide: CardEffectSide = { runs: pairs.length, meanScore: mean(pairs.map((p) => p.w.score)), meanH: hPairs.length ? mean(hPairs.map((p) => hOf(p.w, role)!)) : null };
    const withoutSide: CardEffectSide = { runs: pairs.length, meanScore: mean(pairs.map((p) => p.score)), meanH: hPairs.length ? mean(hPairs.map((p) => p.h!)) : null };
    return {
      basis: 'paired',
      n: pairs.length,
      nH: hPairs.length,
      with: withSide,
      without: withoutSide,
      delta: { score: withSide.meanScore - withoutSide.meanScore, h: withSide.meanH === null || withoutSide.meanH === null ? null : withSide.meanH - withoutSide.meanH },
      signTest: {
        score: signTest(pairs.map((p) => p.w.score - p.score)),
        h: hPairs.length ? signTest(hPairs.map((p) => hOf(p.w, role)! - p.h!)) : null,
      },
      seedsMatch: pairs.every((p) => p.sameSeed),
      unpairedWith,
      baselineExperiments: [...baselineUsed].sort(),
    };
  }

  const side = (runs: readonly RunRecord[]): CardEffectSide => {
    const hs = runs.flatMap((r) => (hOf(r, role) === undefined ? [] : [hOf(r, role)!]));
    return { runs: runs.length, meanScore: mean(runs.map((r) => r.score)), meanH: hs.length ? mean(hs) : null };
  };
  const withSide = side(withRuns);
  const withoutSide = side(baselineRuns);
  const nH = withRuns.filter((r) => hOf(r, role) !== undefined).length;
  return {
    basis: 'unpaired',
    n: withRuns.length,
    nH,
    with: withSide,
    without: withoutSide,
    delta: { score: withSide.meanScore - withoutSide.meanScore, h: withSide.meanH === null || withoutSide.meanH === null ? null : withSide.meanH - withoutSide.meanH },
    unpairedWith: withRuns.length,
    baselineExperiments: [...new Set(baselineRuns.map((r) => r.experimentId as string))].sort(),
  };
}

/**
 * A card's trust marks: its source runs looked up (in its experiment when recorded, else one by
 * one), how many were graded wrong, and whether it is SIMULATED.
 */
export function cardTrustOf(card: Card, runsOf: (experimentId: string) => readonly RunRecord[], runById: (runId: string) => RunRecord | undefined): CardTrust {
  const inExperiment = card.experimentId ? new Map(runsOf(card.experimentId).map((r) => [r.runId as string, r])) : undefined;
  const runs = card.sourceRuns.map((id) => inExperiment?.get(id) ?? runById(id)).filter((r): r is RunRecord => r !== undefined);
  const failedSources = runs.filter((r) => !r.correct).length;
  const reasons: string[] = [];
  if (card.simulated) reasons.push('SIMULATED: distilled from simulated trajectories (injected faults or a scripted model) or by a simulated teacher');
  if (failedSources > 0) {
    reasons.push(
      failedSources === runs.length
        ? `distilled from ${failedSources} failed run${failedSources === 1 ? '' : 's'} (every one of its sources was graded wrong)`
        : `${failedSources} of its ${runs.length} source runs were graded wrong`,
    );
  }
  if (runs.length < card.sourceRuns.length) reasons.push(`${card.sourceRuns.length - runs.length} of its source runs are no longer stored`);
  return { sources: card.sourceRuns.length, found: runs.length, failedSources, simulated: card.simulated, flagged: card.simulated || failedSources > 0, reasons };
}

/** A trust function over a store, caching each experiment's runs for one listing. */
export function cardTrustReader(store: Store): (card: Card) => CardTrust {
  const cache = new Map<string, readonly RunRecord[]>();
  const runsOf = (experimentId: string) => {
    let runs = cache.get(experimentId);
    if (!runs) {
      runs = store.findExperiment(experimentId) ? store.listRuns(experimentId) : [];
      cache.set(experimentId, runs);
    }
    return runs;
  };
  const runById = (runId: string) => {
    try {
      return store.getRun(runId);
    } catch (err) {
      if (err instanceof StoreError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  };
  return (card) => cardTrustOf(card, runsOf, runById);
}

/** `deleteCard`. @throws StoreError `NOT_FOUND` when there is no such card. */
export function deleteCard(store: Store, cardId: string): { deleted: true } {
  if (!store.improve.deleteCard(cardId)) throw new StoreError('NOT_FOUND', `${store.file}: no card ${cardId}`, cardId);
  return { deleted: true };
}

/** `exportCards`: every card, or those named (in the order named). @throws StoreError `NOT_FOUND` naming the missing ids. */
export function exportCards(store: Store, ids?: readonly string[]): CardsDocument {
  const all = store.improve.listCards();
  if (!ids?.length) return exportDocument(all);
  const missing = ids.filter((id) => !all.some((c) => c.id === id));
  if (missing.length) throw new StoreError('NOT_FOUND', `${store.file}: no card(s) ${missing.join(', ')}`, missing.join(', '));
  return exportDocument(ids.map((id) => all.find((c) => c.id === id)!));
}
