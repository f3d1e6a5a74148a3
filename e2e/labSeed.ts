/**
 * A database that fills every view of the lab, for the layout and screenshot tests
 * (e2e/defects.test.ts), without a model: every number in it is SIMULATED (scripted models or
 * hand-written rows, named so in the stored records).
 * - two gsm8k-team experiments run through the real engine with the scripted model
 *   (core/api/runDiff.fixture.ts): Trace, Ladder, Experiments, Run's workflow;
 * - a designed experiment with root failures blamed on the designer (core/api/designedRun.fixture.ts);
 * - a rollouts experiment of G = 8 with ten-digit seeds and three learning roles, one of which never ran;
 * - twenty weight versions of one train loop with the same hyper-parameters (Learning);
 * - two hint cards (Prior library), a toy study (Studies), a scripted MASS evolution (MASS).
 */
import { seedDesignedExperiment } from '../core/api/designedRun.fixture.ts';
import { seedRunDiffPair } from '../core/api/runDiff.fixture.ts';
import { evolve } from '../core/mass/inner.ts';
import { scripted, spec } from '../core/mass/loop.fixture.ts';
import { groupRollouts } from '../core/rollouts/index.ts';
import { computeWorkflowHash, type Store } from '../core/store/index.ts';
import { runToyStudy } from '../core/studies/study.fixture.ts';
import { defaultTools } from '../core/tools/index.ts';
import { roleLadder, runRecord } from '../test/fixtures.ts';

/** Rollouts per group, and the first of the long seeds (ten digits, as derived seeds are). */
export const ROLLOUT_GROUP = 8;
const SEED_BASE = 2_894_561_230;

export interface LabSeed {
  /** The designed experiment (root failures blamed on the designer). */
  designed: string;
  /** The gsm8k-team experiment whose verifier asks for a revision. */
  revise: string;
  rollouts: string;
}

/** Writes everything; returns the ids the tests open. */
export async function seedLab(store: Store): Promise<LabSeed> {
  await seedRunDiffPair(store);
  const designed = await seedDesignedExperiment(store);
  const rollouts = seedRollouts(store);
  seedVersions(store);
  seedCards(store);
  await runToyStudy(store);
  await evolve(spec('evo-scripted'), { store, provider: scripted(), tools: defaultTools() });
  return { designed, revise: 'diff-revise', rollouts };
}

/** A rollouts experiment: 2 tasks × G = 8, learning roles planner, solver and verifier (the verifier never reached: no node run). */
function seedRollouts(store: Store): string {
  const yaml = 'name: rollouts-team\nsteps: []\n';
  const id = 'exp-rollouts-long-seeds';
  const tasks = Array.from({ length: 2 * ROLLOUT_GROUP }, (_, i) => ({ taskIndex: i, taskId: `gsm8k/${Math.floor(i / ROLLOUT_GROUP)}#r${i % ROLLOUT_GROUP}`, input: {} }));
  store.createExperiment({
    id, kind: 'rollouts', workflowName: 'rollouts-team', workflowYaml: yaml, workflowHash: computeWorkflowHash(yaml), dataset: 'gsm8k', split: 'test', seed: 1,
    config: { simulated: true, rollouts: { group: ROLLOUT_GROUP, temperature: 0.8, mode: 'multi-agent', learningRoles: ['planner', 'solver', 'verifier'] } },
    tasks,
  });
  for (const t of tasks) {
    const score = t.taskIndex % 3 === 0 ? 1 : 0;
    store.saveRun(
      runRecord(id, t.taskIndex, {
        taskId: t.taskId, seed: SEED_BASE + t.taskIndex * 7919, score, correct: score === 1, simulated: true,
        ladder: {
          planner: roleLadder('planner', 0.3 + (t.taskIndex % 4) * 0.1, { highestRung: 3 }),
          solver: roleLadder('solver', score ? 0.9 : 0.2, { correctness: score, highestRung: score ? 4 : 3 }),
          verifier: roleLadder('verifier', 0, { format: 0, validity: 0, completion: 0, highestRung: 0, nodesRun: 0, nodesWired: 0 }),
        },
      }),
      [],
    );
  }
  store.improve.saveAdvantages(groupRollouts(store.listRuns(id), ROLLOUT_GROUP, ['planner', 'solver', 'verifier']).rows);
  store.finishExperiment(id, 'completed');
  return id;
}

/** Twenty versions of the solver from one loop, every one with the same hyper-parameters. */
function seedVersions(store: Store): void {
  for (let i = 1; i <= 20; i++) {
    store.weights.save({
      id: `wv-solver-${i}`, role: 'solver', basePath: '/simulated/base.gguf', path: `/simulated/loop/solver-iter-${String(i).padStart(3, '0')}.gguf`,
      ...(i > 1 ? { parentId: `wv-solver-${i - 1}` } : {}), iteration: i,
      hyper: { loopId: 'tl-simulated', simulated: true, lr: 3e-4, kl: 0.02, group: 8, temperature: 1, limit: 4 },
      metrics: { reward: 0.1 + i * 0.02, kl: 0.001 * i }, createdAt: i,
    });
  }
}

function seedCards(store: Store): void {
  const card = { role: 'solver', title: 'Write the expression out', appliesWhen: 'a word problem with two numbers', advice: 'Name both numbers, then write one expression.', sourceRuns: ['diff-accept-r0'], experimentId: 'diff-accept', teacher: 'scripted (simulated)', shots: 1, onlySuccesses: true, simulated: true, createdAt: 1 };
  store.improve.saveCard({ id: 'card-solver', ...card });
  store.improve.saveCard({ id: 'card-planner', ...card, role: 'planner', title: 'Plan in two steps', createdAt: 2 });
}
