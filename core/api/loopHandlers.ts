/**
 * The store reads and writes behind the loop methods (loop.ts has the types), and the
 * experiment metadata `listExperiments` adds to each row. Plain functions over an open Store;
 * `createHandlers` validates payloads first and maps errors (StoreError `NOT_FOUND` for unknown ids).
 */
import { exportCards as exportDocument, type CardsDocument } from '../distill/exchange.ts';
import { compareRuns } from '../experiments/compare.ts';
import type { RunRecord } from '../results/index.ts';
import { StoreError, type Card, type Store } from '../store/index.ts';
import type { CardTrust, CompareView, ExperimentGroupRef, ExperimentMeta } from './loop.ts';

/** A study id as core/studies/cells.ts `studyIdOf` makes it, at the start of a derived id. */
const STUDY_PREFIX = /^(st-.+?-[0-9a-f]{8})\./;

const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);
const baseName = (file: string) => file.split(/[\\/]/).pop() ?? file;

/**
 * Where an experiment belongs and which model files it ran, from its id and stored config
 * (`config.trainLoop` of core/training/steps.ts, `config.source` of core/experiments/spec.ts,
 * `config.models` a ModelConfig). Never throws: anything malformed is left out.
 */
export function experimentMetaOf(id: string, config: unknown): ExperimentMeta {
  const c = obj(config);
  const models = obj(obj(c?.['models'])?.['models']);
  const files = models ? [...new Set(Object.values(models).filter((f): f is string => typeof f === 'string').map(baseName))].sort() : [];
  const loop = obj(c?.['trainLoop']);
  const loopId = typeof loop?.['loopId'] === 'string' ? (loop['loopId'] as string) : undefined;
  const source = typeof c?.['source'] === 'string' ? (c['source'] as string) : '';
  const studyId = source.startsWith('study ') ? source.slice(6) : (STUDY_PREFIX.exec(loopId ?? id)?.[1] ?? undefined);
  const where: Pick<ExperimentGroupRef, 'iteration' | 'phase'> = {
    ...(Number.isInteger(loop?.['iteration']) && { iteration: loop!['iteration'] as number }),
    ...(typeof loop?.['phase'] === 'string' && { phase: loop!['phase'] as string }),
  };
  let group: ExperimentGroupRef | undefined;
  if (studyId) group = { kind: 'study', id: studyId, ...(loopId && { loopId }), ...where };
  else if (loopId) group = { kind: 'train-loop', id: loopId, ...where };
  return { ...(group && { group }), models: files };
}

/** `compareExperiments`: `flowlab compare`'s report with each side's workflow, dataset and split. */
export function compareExperiments(store: Store, a: string, b: string, seed = 0): CompareView {
  const ea = store.getExperiment(a); // NOT_FOUND
  const eb = store.getExperiment(b);
  const ra = store.listRuns(ea.id);
  const rb = store.listRuns(eb.id);
  const side = (e: typeof ea, runs: readonly RunRecord[]) => ({ workflowName: e.workflowName, dataset: e.dataset, split: e.split, runs: runs.length });
  return { ...compareRuns(ea.id, ra, eb.id, rb, seed), sides: { a: side(ea, ra), b: side(eb, rb) } };
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
