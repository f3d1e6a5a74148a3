import type { Store } from '../store/index.ts';
import { groupRollouts, type RolloutSummary } from './groups.ts';

/** How a rollouts experiment samples and who learns; stored as `config.rollouts`. */
export interface RolloutsConfig {
  /** Rollouts per task (G). */
  group: number;
  /** Sampling temperature of every agent node. */
  temperature: number;
  /** The co-evolution mode, formatted (`formatMode`). */
  mode: string;
  learningRoles: string[];
  /** Token ids recorded with every call (`--record-tokens`; resume records them too). */
  recordTokens?: boolean;
}

/**
 * Computes the group-relative advantages of every complete group of a rollouts experiment
 * (groupRollouts: per-role ladder GRPO and Flow-GRPO's broadcast outcome advantage) and stores
 * them in one transaction (store.improve.saveAdvantages, replacing earlier rows). Returns the
 * summary per role.
 */
export function storeAdvantages(store: Store, experimentId: string, cfg: Pick<RolloutsConfig, 'group' | 'learningRoles'>): RolloutSummary {
  const { rows, summary } = groupRollouts(store.listRuns(experimentId), cfg.group, cfg.learningRoles);
  store.improve.saveAdvantages(rows);
  return summary;
}
