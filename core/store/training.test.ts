import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { agentEvent, runRecord, tempDir } from '../../test/fixtures.ts';
import { asRoleName, asRunId, type ExperimentId } from '../ids.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import { computeWorkflowHash, openStore, StoreError, type Store } from './index.ts';
import { migrate } from './migrate.ts';
import { MIGRATIONS } from './schema.ts';

const tmp = () => tempDir('store-training');
const YAML = 'name: demo\nsteps: []\n';

function createExperiment(s: Store): ExperimentId {
  return s.createExperiment({
    kind: 'rollouts', workflowName: 'demo', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'learn-word', split: 'train', seed: 1, config: {},
    tasks: [{ taskIndex: 0, taskId: 't0', input: { prompt: 'p' }, expected: 'happy' }, { taskIndex: 1, taskId: 't1', input: { prompt: 'q' }, expected: 'happy' }],
  }).id;
}

function runWith(exp: ExperimentId, taskIndex: number, calls: ModelCallRecord[]): { run: RunRecord; events: NodeEvent[] } {
  const runId = asRunId(`${exp}/${taskIndex}`);
  const run = runRecord(exp, taskIndex, { runId, answer: undefined, expected: undefined, seed: 3, promptTokens: 4, completionTokens: 3, startedAt: 1, endedAt: 2 });
  return { run, events: [agentEvent(runId, 'write', 'writer', calls, { output: 'x', startedAt: 1, endedAt: 2 })] };
}

const baseCall: ModelCallRecord = {
  callIndex: 0, role: asRoleName('writer'), modelRef: 'train:writer', model: 'iter-001.gguf', prompt: 'Tom went home.', params: { temperature: 1, maxTokens: 32, topK: 0, topP: 1, minP: 0 },
  seed: 9, completion: ' He was happy.', promptTokens: 4, completionTokens: 5, ms: 3, startedAt: 1, stopReason: 'eos',
};

describe('migration 4: token ids of model calls, weight versions', () => {
  it('upgrades a version-3 database in place: old calls read without ids, new calls round-trip theirs', () => {
    const file = path.join(tmp(), 'v3.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    expect(migrate(db, MIGRATIONS.slice(0, 3), file)).toMatchObject({ from: 0, to: 3 });
    db.close();
    // A call stored by a version-3 Flowlab: no token columns yet.
    const raw = new Database(file);
    raw.exec(`INSERT INTO experiments (id, created_at, updated_at, kind, workflow_name, workflow_yaml, workflow_hash, dataset, split, seed, config_json, status)
      VALUES ('exp-old', 1, 1, 'run', 'demo', '${YAML}', 'h', 'learn-word', 'train', 1, '{}', 'completed');
      INSERT INTO experiment_tasks VALUES ('exp-old', 0, 't0', '{}', 'happy');
      INSERT INTO runs (id, experiment_id, task_index, task_id, status, score, correct, seed, prompt_tokens, completion_tokens, started_at, ended_at, failures_json)
        VALUES ('exp-old/0', 'exp-old', 0, 't0', 'completed', 1, 1, 1, 1, 1, 1, 1, '{}');
      INSERT INTO node_events (id, run_id, seq, node_id, attempt, kind, role, wired_by, run_by, status, inputs_json, started_at, ended_at)
        VALUES (1, 'exp-old/0', 0, 'write', 1, 'agent', 'writer', 'human', 'writer', 'ok', '{}', 1, 1);
      INSERT INTO model_calls (run_id, node_event_id, node_id, attempt, call_index, role, model_ref, model, prompt, params_json, seed, completion, prompt_tokens, completion_tokens, ms, started_at)
        VALUES ('exp-old/0', 1, 'write', 1, 0, 'writer', 'default', 'm.gguf', 'p', '{"temperature":0,"maxTokens":8}', 1, 'c', 1, 1, 1, 1);`);
    raw.close();

    const s = openStore(file, { migrations: MIGRATIONS.slice(0, 4) }); // migration 4 alone (5 is store.test.ts's)
    try {
      expect(s.migration).toEqual({ from: 3, to: 4, applied: [4] });
      const [oldCall] = s.getExperimentCalls('exp-old');
      expect(oldCall).not.toHaveProperty('promptTokenIds');
      expect(oldCall).not.toHaveProperty('completionTokenIds');

      const exp = createExperiment(s);
      const withIds = { ...baseCall, promptTokenIds: [1, 441, 416, 331], completionTokenIds: [280, 30, 396, 2, 2] };
      const a = runWith(exp, 0, [withIds]);
      const b = runWith(exp, 1, [{ ...baseCall }]);
      s.saveRuns([a, b]);
      const calls = s.getExperimentCalls(exp);
      expect(calls[0]!.promptTokenIds).toEqual([1, 441, 416, 331]);
      expect(calls[0]!.completionTokenIds).toEqual([280, 30, 396, 2, 2]);
      expect(calls[1]).not.toHaveProperty('promptTokenIds');
      expect(s.getRunEvents(a.run.runId)[0]!.calls[0]).toEqual(withIds);
      // Bad ids are refused, naming the call; nothing of the run is written.
      const bad = runWith(createExperiment(s), 0, [{ ...baseCall, completionTokenIds: [1, -2] }]);
      expect(() => s.saveRun(bad.run, bad.events)).toThrow(/completionTokenIds must be an array of non-negative integer token ids/);
      expect(() => s.getRun(bad.run.runId)).toThrow(StoreError);
    } finally {
      s.close();
    }
  });

  it('weight versions: save, get, list by role, lineage chain; parent must exist; ids are unique', () => {
    const s = openStore(':memory:');
    try {
      const exp = createExperiment(s);
      const v1 = s.weights.save({ role: 'writer', basePath: '/m/base.gguf', path: '/v/iter-001.gguf', experimentId: exp, iteration: 1, hyper: { lr: 3e-4, kl: 0.02 }, metrics: { reward: 0.1, kl: 0 } });
      expect(v1.id).toMatch(/^wv-\d{8}-\d{6}-[0-9a-z]{6}$/);
      expect(v1).not.toHaveProperty('parentId');
      const v2 = s.weights.save({ role: 'writer', basePath: '/m/base.gguf', path: '/v/iter-002.gguf', parentId: v1.id, experimentId: exp, iteration: 2, hyper: { lr: 3e-4 }, metrics: { reward: 0.4 } });
      const v3 = s.weights.save({ role: 'writer', basePath: '/m/base.gguf', path: '/v/sft.gguf', parentId: v2.id, hyper: { mode: 'sft' }, metrics: {} });
      const other = s.weights.save({ id: 'wv-solver-1', role: 'solver', basePath: '/m/base.gguf', path: '/v/s1.gguf', hyper: {}, metrics: {}, createdAt: 5 });

      expect(s.weights.get(v2.id)).toEqual(v2);
      expect(v2).toMatchObject({ role: 'writer', parentId: v1.id, experimentId: exp, iteration: 2, hyper: { lr: 3e-4 }, metrics: { reward: 0.4 } });
      expect(v3).not.toHaveProperty('iteration');
      expect(v3).not.toHaveProperty('experimentId');
      expect(s.weights.list({ role: 'writer' }).map((v) => v.id)).toEqual([v1.id, v2.id, v3.id]);
      expect(s.weights.list({ role: 'solver' })).toEqual([other]);
      expect(s.weights.list().map((v) => v.id)).toEqual([other.id, v1.id, v2.id, v3.id]);
      expect(s.weights.lineage(v3.id).map((v) => v.id)).toEqual([v3.id, v2.id, v1.id]);
      expect(s.weights.lineage(v1.id).map((v) => v.id)).toEqual([v1.id]);
      expect(s.weights.findByPath('/v/iter-002.gguf')?.id).toBe(v2.id);
      expect(s.weights.find('nope')).toBeUndefined();

      expect(() => s.weights.get('nope')).toThrow(/no weight version nope/);
      expect(() => s.weights.lineage('nope')).toThrow(StoreError);
      expect(() => s.weights.save({ role: 'writer', basePath: 'b', path: 'p', parentId: 'ghost', hyper: {}, metrics: {} })).toThrow(/parent ghost, which is not stored/);
      expect(() => s.weights.save({ id: other.id, role: 'solver', basePath: 'b', path: 'p', hyper: {}, metrics: {} })).toThrow(/already exists/);
    } finally {
      s.close();
    }
  });
});
