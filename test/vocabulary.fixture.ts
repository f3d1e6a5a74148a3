/**
 * Test fixture (not bundled): the database the vocabulary tests read (issue 29 part 4; the view
 * test renderer/views/vocabulary.test.tsx and the e2e e2e/vocabulary.test.ts), every record
 * SIMULATED (hand-written rows, no model): a blame-eval on two model files with one wrong run; a
 * rollouts experiment of 2 tasks × G = 2 on one model file (run 3 is task 1, rollout 1, correct);
 * a run whose one run failed (status failed, graded wrong).
 */
import { readFileSync } from 'node:fs';
import { computeWorkflowHash, type Store } from '../core/store/index.ts';
import { roleLadder, runRecord } from './fixtures.ts';

/** A workflow that compiles (`flowlab show <run>` draws the run on it). */
const YAML = readFileSync(new URL('../examples/gsm8k-single.yaml', import.meta.url), 'utf8');
const base = { workflowName: 'gsm8k-single', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'gsm8k', split: 'test', seed: 0 };

/** Writes the three experiments; returns their ids. */
export function seedVocabulary(s: Store): { blame: string; rollouts: string; run: string } {
  s.createExperiment({
    ...base, id: 'exp-blame', kind: 'blame-eval',
    config: { simulated: true, inject: ['solver=wrong_answer@1'], models: { models: { default: '/m/tiny.gguf', verifier: '/other/judge.gguf' } } },
    tasks: [{ taskIndex: 0, taskId: 't0', input: {} }],
  });
  s.saveRun(runRecord('exp-blame', 0, { simulated: true, correct: false, score: 0, answer: '5' }), []);
  s.finishExperiment('exp-blame', 'completed');
  const tasks = Array.from({ length: 4 }, (_, i) => ({ taskIndex: i, taskId: `gsm8k/${Math.floor(i / 2)}#r${i % 2}`, input: {} }));
  s.createExperiment({ ...base, id: 'exp-roll', kind: 'rollouts', config: { rollouts: { group: 2, temperature: 0.8, mode: 'multi-agent', learningRoles: ['solver'] }, models: { models: { default: '/m/tiny.gguf' } } }, tasks });
  for (const t of tasks) s.saveRun(runRecord('exp-roll', t.taskIndex, { taskId: t.taskId, correct: t.taskIndex === 3, score: t.taskIndex === 3 ? 1 : 0, ladder: { solver: roleLadder('solver', 0.5) } }), []);
  s.finishExperiment('exp-roll', 'completed');
  s.createExperiment({ ...base, id: 'exp-run', kind: 'run', config: { models: { models: { default: '/m/tiny.gguf' } } }, tasks: [{ taskIndex: 0, taskId: 't0', input: {} }] });
  s.saveRun(runRecord('exp-run', 0, { status: 'failed', correct: false, score: 0, answer: undefined, failures: { execution: 1 }, ladder: { solver: roleLadder('solver', 0.1) } }), []);
  s.finishExperiment('exp-run', 'completed');
  return { blame: 'exp-blame', rollouts: 'exp-roll', run: 'exp-run' };
}
