import { deriveSeed } from '../random.ts';
import type { ExecuteOptions } from '../pipeline/index.ts';
import type { RoleName } from '../ids.ts';
import type { ModelProvider } from '../model/provider.ts';
import type { Card, Store } from '../store/index.ts';
import { StoreError } from '../store/errors.ts';
import type { Graph } from '../workflow/graph.ts';
import { DistillError, distillCard } from './distillCard.ts';
import { pickExemplars } from './exemplars.ts';
import { CardInjector } from './inject.ts';

/**
 * How an experiment uses hint cards; stored in the experiment's config (`config.cards`) so a
 * resume injects the same cards with the same budget.
 */
export interface CardsConfig {
  /** What `--cards` asked for. */
  selection: 'all' | 'none' | string[];
  /** The library cards chosen when the experiment was created (for `all`: the library then). */
  ids: string[];
  /** Token budget of each role's hint text per prompt (estimated as ceil(chars / 4)). */
  budgetTokens: number;
  /** Online meta-distillation (`--distill-every`): absent when off. */
  distill?: OnlineDistillConfig;
}

export interface OnlineDistillConfig {
  /** Distil after every `every` stored tasks (while tasks remain). */
  every: number;
  /** Exemplars per card (FloWright: 5 helped most; 1 scored below no distillation). */
  shots: number;
  /** Roles that get online cards. */
  roles: string[];
  /** Distil from correct runs only (the default: successes only +1.44 vs +0.53 with failures). */
  onlySuccesses: boolean;
  /** Teacher prompt budget (tokens, estimated) and most tokens the teacher writes. */
  budgetTokens: number;
  maxTokens: number;
}

/** Online meta-distillation defaults: a small teacher budget, so it fits the run's own contexts. */
export const ONLINE_DEFAULTS = { shots: 5, onlySuccesses: true, budgetTokens: 384, maxTokens: 600 } as const;

const strip = ({ uses: _uses, ...card }: Card & { uses?: number }): Card => card;

/** Whether a card was distilled online inside `experimentId` (and at which checkpoint). */
export function onlineCheckpoint(card: Card, experimentId: string): number | undefined {
  const online = card.meta?.online as { afterTasks?: unknown } | undefined;
  return card.experimentId === experimentId && typeof online?.afterTasks === 'number' ? online.afterTasks : undefined;
}

/** The roles of a graph that run at least one agent node (the default roles of online distillation). */
export function agentRoles(graph: Graph): string[] {
  return [...new Set(graph.nodes.filter((n) => n.kind === 'agent' && n.role).map((n) => n.role as string))];
}

export interface CardSessionOptions {
  store: Store;
  experimentId: string;
  graph: Graph;
  config: CardsConfig;
  /** The experiment's provider: online cards are written by each role's own model. */
  provider: ModelProvider;
  modelFor: (role: RoleName) => string;
  /** Experiment seed (teacher seeds derive from it and the checkpoint). */
  seed: number;
  /** Progress lines (distilled cards, skipped checkpoints). */
  log?: (line: string) => void;
}

/**
 * Hint cards for one experiment execution: injects the configured library cards plus any cards
 * distilled online earlier in this experiment (a resume sees the same cards), records which
 * cards each run saw, and (with `config.distill`) distils a card per role after every K stored
 * tasks, which then reaches every task that starts afterwards. Online distillation therefore
 * changes the prompts mid-experiment: runs before and after a checkpoint saw different cards
 * (each run's cards are its recorded card uses). A checkpoint with no qualifying trajectory, or
 * whose teacher output is unusable, is logged and skipped (nothing stored); the experiment goes on.
 * Errors: when a configured card is no longer in the library (the run would not be the same).
 */
export function cardSession(opts: CardSessionOptions): {
  injector: CardInjector;
  hooks: Required<Pick<ExecuteOptions, 'hints' | 'cardsUsed' | 'afterRun'>>;
} {
  const { store, experimentId, graph, config } = opts;
  const log = opts.log ?? (() => {});
  const cards: Card[] = [];
  for (const id of config.ids) {
    const card = store.improve.listCards().find((c) => c.id === id);
    if (!card) throw new StoreError('NOT_FOUND', `hint card ${id}, chosen for experiment ${experimentId}, is no longer in the library of ${store.file} (removed with \`flowlab cards rm\`?); import it again to continue with the same prompts`, id);
    cards.push(strip(card));
  }
  for (const c of store.improve.listCards()) if (onlineCheckpoint(c, experimentId) !== undefined && !config.ids.includes(c.id)) cards.push(strip(c));
  const injector = new CardInjector(cards, {
    budgetTokens: config.budgetTokens,
    maxCardsFor: (role) => graph.roles.get(role as RoleName)?.hintSlots || undefined,
  });
  const tried = new Set<string>();

  const distilAt = async (checkpoint: number, role: string) => {
    const d = config.distill!;
    const key = `${role}@${checkpoint}`;
    if (tried.has(key)) return;
    tried.add(key);
    if (store.improve.listCards({ role }).some((c) => onlineCheckpoint(c, experimentId) === checkpoint)) return;
    const runs = store.listRuns(experimentId).map((run) => ({ run, events: store.getRunEvents(run.runId) }));
    const exemplars = pickExemplars(runs, role, d.shots, { onlySuccesses: d.onlySuccesses });
    if (exemplars.length === 0) {
      log(`meta-distillation after ${checkpoint} tasks: no ${d.onlySuccesses ? 'successful ' : ''}trajectory of ${role} yet (a tiny model may never solve one); no card\n`);
      return;
    }
    try {
      const card = await distillCard({
        provider: opts.provider,
        teacherRef: opts.modelFor(role as RoleName),
        role: { name: role, instructions: graph.roles.get(role as RoleName)?.instructions },
        exemplars,
        seed: deriveSeed(opts.seed, 'distill', role, checkpoint),
        budgetTokens: d.budgetTokens,
        maxTokens: d.maxTokens,
        experimentId,
        onlySuccesses: d.onlySuccesses,
        requestedShots: d.shots,
        meta: { online: { afterTasks: checkpoint, every: d.every } },
      });
      store.improve.saveCard(card);
      injector.add(card);
      log(`meta-distillation after ${checkpoint} tasks: ${role} card ${card.id}${card.simulated ? ' (SIMULATED)' : ''} from ${card.shots} trajectories: ${card.title}\n`);
    } catch (e) {
      if (!(e instanceof DistillError)) throw e;
      log(`meta-distillation after ${checkpoint} tasks: no card for ${role}: ${e.message} [${e.code}]\n`);
    }
  };

  return {
    injector,
    hooks: {
      hints: (role, runId) => injector.hints(role, runId),
      cardsUsed: (runId) => injector.cardsUsed(runId),
      afterRun: async (_run, done, total) => {
        const d = config.distill;
        if (!d || done >= total) return;
        // The latest checkpoint reached: a resume catches up on one a crash skipped.
        const checkpoint = Math.floor(done / d.every) * d.every;
        if (checkpoint === 0) return;
        for (const role of d.roles) await distilAt(checkpoint, role);
      },
    },
  };
}
