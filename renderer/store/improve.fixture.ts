/**
 * Test fixture (not bundled): a real API over an in-memory store holding a rollouts experiment
 * (2 tasks x G=2, learning role solver; group t1 has no learning signal), a plain run, and the
 * prior library with one card used by a run (measurable against a run without it) and one unused,
 * SIMULATED card. `improveClient` returns a client shaped like the wire; `closeImproveStores`
 * closes every store it opened.
 */
import { createHandlers } from '../../core/api/index.ts';
import { groupRollouts } from '../../core/rollouts/index.ts';
import { computeWorkflowHash } from '../../core/store/index.ts';
import { hostOver, roleLadder, runRecord, storeTracker } from '../../test/fixtures.ts';
import type { RunRecord } from '../../core/results/index.ts';
import type { LabClient } from '../client.ts';

const YAML = 'name: team\nsteps: []\n';
const stores = storeTracker();
export const closeImproveStores = (): void => stores.closeAll();

function run(exp: string, taskIndex: number, taskId: string, score: number, h: number, seed = taskIndex): RunRecord {
  return runRecord(exp, taskIndex, {
    taskId, answer: undefined, expected: undefined, score, correct: score === 1, seed, promptTokens: 1, completionTokens: 1, startedAt: 0, endedAt: 1,
    ladder: { solver: roleLadder('solver', h, { correctness: score, highestRung: 4 }) },
  });
}

/** A rollouts experiment (2 tasks x G=2), a plain run, and a card used by one of two runs of a task. */
export function improveClient(): LabClient {
  const store = stores.open();
  const create = (id: string, kind: 'run' | 'rollouts', taskIds: string[], config: unknown = {}) =>
    store.createExperiment({ id, kind, workflowName: 'team', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'gsm8k', split: 'test', seed: 1, config, tasks: taskIds.map((taskId, taskIndex) => ({ taskIndex, taskId, input: {} })) });
  create('exp-roll', 'rollouts', ['t0#r0', 't0#r1', 't1#r0', 't1#r1'], { rollouts: { group: 2, temperature: 0.8, mode: 'single:solver', learningRoles: ['solver'] } });
  store.saveRun(run('exp-roll', 0, 't0#r0', 1, 0.9), []);
  store.saveRun(run('exp-roll', 1, 't0#r1', 0, 0.3), []);
  store.saveRun(run('exp-roll', 2, 't1#r0', 0, 0.2), []);
  store.saveRun(run('exp-roll', 3, 't1#r1', 0, 0.2), []);
  store.improve.saveAdvantages(groupRollouts(store.listRuns('exp-roll'), 2, ['solver']).rows);
  create('exp-base', 'run', ['t0']);
  create('exp-cards', 'run', ['t0']);
  store.saveRun(run('exp-base', 0, 't0', 0, 0.3, 5), []);
  store.saveRun(run('exp-cards', 0, 't0', 1, 0.9, 5), []);
  const card = { role: 'solver', title: 'Show the expression', appliesWhen: 'arithmetic', advice: 'Write it out.', sourceRuns: ['exp-roll-r0'], experimentId: 'exp-roll', teacher: 'tiny.gguf', shots: 1, onlySuccesses: true, simulated: false, createdAt: 1 };
  store.improve.saveCard({ id: 'card-used', ...card });
  store.improve.saveCard({ id: 'card-new', ...card, role: 'planner', simulated: true, createdAt: 2 });
  store.improve.recordUses('exp-cards-r0', ['card-used']);
  return hostOver(createHandlers({ store, version: '0.0.0' }));
}

/** The same API over an empty store: no experiments, no cards. */
export function emptyClient(): LabClient {
  const store = stores.open();
  return hostOver(createHandlers({ store, version: '0.0.0' }));
}
