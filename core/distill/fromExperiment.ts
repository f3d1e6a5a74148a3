import type { RoleName } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { Card, RunWithEvents, Store } from '../store/index.ts';
import type { Graph } from '../workflow/graph.ts';
import { DistillError, distillCard } from './distillCard.ts';
import { pickExemplars } from './exemplars.ts';
import type { TokenCounter } from './prompt.ts';

/** Every stored run of an experiment with its node events (and their model calls), in task order. */
export function runsWithEvents(store: Store, experimentId: string): RunWithEvents[] {
  return store.listRuns(experimentId).map((run) => ({ run, events: store.getRunEvents(run.runId) }));
}

export interface DistillFromExperimentOptions {
  store: Store;
  experimentId: string;
  /** The experiment's workflow graph (for the role's instructions). */
  graph?: Graph;
  role: string;
  shots: number;
  onlySuccesses?: boolean;
  provider: ModelProvider;
  teacherRef: string;
  seed: number;
  budgetTokens?: number;
  maxTokens?: number;
  countTokens?: TokenCounter;
  /** Save the card in the library (default true). */
  save?: boolean;
}

/**
 * `flowlab distill`: picks the role's `shots` best trajectories of a stored experiment, has the
 * teacher write a card, and stores it in the prior library. Nothing is stored on any error.
 * Errors: DistillError (`NO_EXEMPLARS` says why: with `onlySuccesses`, how many runs were correct,
 * since a tiny model may have none), StoreError (`NOT_FOUND`).
 */
export async function distillFromExperiment(opts: DistillFromExperimentOptions): Promise<Card> {
  const runs = runsWithEvents(opts.store, opts.experimentId);
  const exemplars = pickExemplars(runs, opts.role, opts.shots, { onlySuccesses: opts.onlySuccesses });
  if (exemplars.length === 0) {
    const correct = runs.filter((r) => r.run.correct).length;
    const why = opts.onlySuccesses
      ? `no successful trajectory of role "${opts.role}" in experiment ${opts.experimentId} (${correct} of ${runs.length} runs correct). ` +
        'A tiny model may never solve a task: drop --only-successes to distil from the best runs by ladder reward, or run a stronger model'
      : `no trajectory of role "${opts.role}" with a model call in experiment ${opts.experimentId} (${runs.length} runs stored)`;
    throw new DistillError('NO_EXEMPLARS', why);
  }
  const card = await distillCard({
    provider: opts.provider,
    teacherRef: opts.teacherRef,
    role: { name: opts.role, instructions: opts.graph?.roles.get(opts.role as RoleName)?.instructions },
    exemplars,
    seed: opts.seed,
    budgetTokens: opts.budgetTokens,
    maxTokens: opts.maxTokens,
    countTokens: opts.countTokens,
    experimentId: opts.experimentId,
    onlySuccesses: opts.onlySuccesses,
    requestedShots: opts.shots,
  });
  if (opts.save ?? true) opts.store.improve.saveCard(card);
  return card;
}
