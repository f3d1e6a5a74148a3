/**
 * The store reads behind `getRollouts`, `listCards` and `getCardEffect` (improve.ts has
 * the types). Plain functions over an open Store; `createHandlers` validates payloads first and
 * maps errors. Throws `ApiError` for what the caller can fix, StoreError `NOT_FOUND` for unknown ids.
 */
import { z } from 'zod';
import { groupKeyOf } from '../rollouts/groups.ts';
import { signTest } from '../stats/index.ts';
import type { AdvantageRow, Store } from '../store/index.ts';
import type { ExperimentSummary } from '../store/types.ts';
import type { RunRecord } from '../results/index.ts';
import { ApiError } from './errors.ts';
import { cardTrustReader } from './loopHandlers.ts';
import type { CardEffect, CardEffectSide, CardEffectView, LibraryCard, RolloutEntry, RolloutGroup, RolloutRoleStats, RolloutsView } from './improve.ts';

/** Spread below this is zero (the same threshold `groupAdvantages` uses). */
const ZERO_SPREAD = 1e-12;

interface RolloutsConfigShape {
  group: number;
  temperature: number;
  mode: string;
  learningRoles: string[];
}

/** The `rollouts` block of a rollouts experiment's config, checked; null when absent or malformed. */
export function rolloutsConfigOf(config: unknown): RolloutsConfigShape | null {
  const parsed = rolloutsBlock.safeParse(config);
  if (!parsed.success) return null;
  const r = parsed.data.rollouts;
  return {
    group: r.group,
    temperature: typeof r.temperature === 'number' ? r.temperature : 0,
    mode: typeof r.mode === 'string' ? r.mode : 'multi-agent',
    learningRoles: Array.isArray(r.learningRoles) ? r.learningRoles.filter((x): x is string => typeof x === 'string') : [],
  };
}

/** A config's `rollouts` block as far as the Rollouts view needs it: a whole group size of at least 1; the rest read leniently. */
const rolloutsBlock = z.looseObject({ rollouts: z.looseObject({ group: z.number().int().min(1), temperature: z.unknown(), mode: z.unknown(), learningRoles: z.unknown() }) });

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0);
const popStd = (xs: readonly number[]) => {
  if (!xs.length) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length);
};

/**
 * A rollouts experiment's groups with each rollout's per-role reward and advantage (from the
 * stored ladder-mode rows) and the Flow-GRPO outcome advantage (flow-grpo rows). Runs are grouped
 * as `flowlab rollouts` planned them: group = floor(taskIndex / G).
 * @throws ApiError `BAD_REQUEST` (field `experimentId`) when the experiment is not a rollouts experiment.
 */
export function buildRolloutsView(store: Store, experimentId: string): RolloutsView {
  const exp = store.getExperiment(experimentId); // NOT_FOUND
  if (exp.kind !== 'rollouts') {
    throw new ApiError(
      'BAD_REQUEST',
      `getRollouts: experiment ${exp.id} is a ${exp.kind} experiment, not a rollouts experiment; make one with \`flowlab rollouts <workflow.yaml> --dataset gsm8k --group 4 ...\``,
      'getRollouts',
      'experimentId',
    );
  }
  const cfg = rolloutsConfigOf(exp.config);
  if (!cfg) throw new ApiError('INTERNAL', `getRollouts: experiment ${exp.id} has no valid rollouts configuration (config.rollouts.group)`, 'getRollouts');
  const G = cfg.group;
  const runs = store.listRuns(exp.id);
  const rows = store.improve.advantagesOf(exp.id);
  const ladderRows = new Map<string, AdvantageRow>();
  const flowRows = new Map<string, AdvantageRow>();
  for (const r of rows) {
    if (r.mode === 'ladder') ladderRows.set(`${r.runId}\u0000${r.role}`, r);
    else if (!flowRows.has(r.runId)) flowRows.set(r.runId, r);
  }
  // Learning roles as recorded; roles seen only in stored rows are added after them.
  const roles = [...cfg.learningRoles];
  for (const r of rows) if (r.mode === 'ladder' && !roles.includes(r.role)) roles.push(r.role);

  const byGroup = new Map<number, RunRecord[]>();
  for (const run of runs) {
    const g = Math.floor(run.taskIndex / G);
    const list = byGroup.get(g);
    if (list) list.push(run);
    else byGroup.set(g, [run]);
  }

  const groups: RolloutGroup[] = [...byGroup.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, members]) => {
      members.sort((a, b) => a.taskIndex - b.taskIndex);
      const rollouts: RolloutEntry[] = members.map((run) => {
        const perRole: RolloutEntry['perRole'] = {};
        for (const role of roles) {
          const row = ladderRows.get(`${run.runId}\u0000${role}`);
          const reward = row?.reward ?? run.ladder?.[role]?.reward;
          if (reward === undefined) continue;
          perRole[role] = { reward, advantage: row ? row.advantage : null };
        }
        const flow = flowRows.get(run.runId);
        return {
          runId: run.runId,
          taskIndex: run.taskIndex,
          taskId: run.taskId,
          seed: run.seed,
          score: run.score,
          correct: run.correct,
          status: run.status,
          perRole,
          outcomeAdvantage: flow ? flow.advantage : null,
          simulated: run.simulated === true,
        };
      });
      const zeroSpread: Record<string, boolean> = {};
      const stats: Record<string, RolloutRoleStats> = {};
      for (const role of roles) {
        const hs = rollouts.flatMap((r) => (r.perRole[role] ? [r.perRole[role].reward] : []));
        if (!hs.length) continue;
        const std = popStd(hs);
        stats[role] = { mean: mean(hs), std, size: hs.length };
        zeroSpread[role] = std < ZERO_SPREAD;
      }
      const scores = rollouts.map((r) => r.score);
      const outcomeStd = popStd(scores);
      const judged = Object.values(zeroSpread);
      return {
        index,
        groupKey: groupKeyOf(members[0]!.taskId),
        complete: members.length >= G,
        rollouts,
        zeroSpread,
        stats,
        outcome: { mean: mean(scores), std: outcomeStd, zeroSpread: outcomeStd < ZERO_SPREAD },
        noSignal: judged.length > 0 && judged.every(Boolean),
      };
    });

  return {
    experimentId: exp.id,
    workflowName: exp.workflowName,
    status: exp.status,
    group: G,
    temperature: cfg.temperature,
    mode: cfg.mode,
    learningRoles: roles,
    plannedGroups: Math.ceil(store.listTasks(exp.id).length / G),
    groups,
  };
}

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
