import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { agentEvent, runRecord, tempDir } from '../../test/fixtures.ts';
import { asRoleName, asRunId, type ExperimentId } from '../ids.ts';
import type { ModelCallRecord, NodeEvent } from '../trace/events.ts';
import type { RunRecord } from '../results/index.ts';
import { computeWorkflowHash, openStore, type Store } from './index.ts';
import { MIGRATIONS } from './schema.ts';

const YAML = 'name: demo\nsteps: []\n';

function createExperiment(s: Store): ExperimentId {
  return s.createExperiment({
    kind: 'run', workflowName: 'demo', workflowYaml: YAML, workflowHash: computeWorkflowHash(YAML), dataset: 'learn-word', split: 'train', seed: 1, config: {},
    tasks: [0, 1, 2].map((i) => ({ taskIndex: i, taskId: `t${i}`, input: { prompt: 'p' }, expected: 'happy' })),
  }).id;
}

function runWith(exp: ExperimentId, taskIndex: number, calls: ModelCallRecord[]): { run: RunRecord; events: NodeEvent[] } {
  const runId = asRunId(`${exp}/${taskIndex}`);
  const run = runRecord(exp, taskIndex, { runId, answer: undefined, expected: undefined, seed: 3, promptTokens: 4, completionTokens: 3, startedAt: 1, endedAt: 2 });
  return { run, events: [agentEvent(runId, 'write', 'writer', calls, { output: 'x', startedAt: 1, endedAt: 2 })] };
}

const plain: ModelCallRecord = {
  callIndex: 0, role: asRoleName('writer'), modelRef: 'default', model: 'm.gguf', prompt: 'Q', params: { temperature: 0, maxTokens: 32 },
  seed: 9, completion: '42', promptTokens: 40, completionTokens: 5, ms: 3, startedAt: 1, stopReason: 'eos',
};
const full: ModelCallRecord = {
  ...plain,
  renderedPrompt: '<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n',
  thinking: 'six times seven',
  applied: { sampler: { temperature: 0, topK: 40, topP: 0.95, minP: 0, seed: 9 }, threads: 1, contextSize: 1024, batchSize: 512, source: { threads: 'tuned', batchSize: 'default' }, prefixReuse: true },
  promptTokensEvaluated: 12,
};

describe('model call settings (schema version 10)', () => {
  it('round-trips the rendered prompt, thinking, applied settings and evaluated tokens, one insert at a time and in a batch', () => {
    const s = openStore(path.join(tempDir('store-call-settings'), 'a.db'));
    try {
      const exp = createExperiment(s);
      const one = runWith(exp, 0, [full, { ...plain, callIndex: 1 }]);
      s.saveRun(one.run, one.events); // writeRun
      s.saveRuns([runWith(exp, 1, [full]), runWith(exp, 2, [plain])]); // insertBatch
      expect(s.getRunEvents(one.run.runId)[0]!.calls).toEqual([full, { ...plain, callIndex: 1 }]);
      const calls = s.getExperimentCalls(exp);
      expect(calls.map((c) => c.promptTokensEvaluated)).toEqual([12, undefined, 12, undefined]);
      expect(calls[2]!.applied?.source.threads).toBe('tuned');
      expect(calls[3]).not.toHaveProperty('renderedPrompt');
    } finally {
      s.close();
    }
  });

  it('a store opened without migration 10 still stores and reads calls (without the settings); migrating keeps them', () => {
    const file = path.join(tempDir('store-call-settings'), 'v9.db');
    const v9 = openStore(file, { migrations: MIGRATIONS.slice(0, 9) });
    const exp = createExperiment(v9);
    const r = runWith(exp, 0, [full]);
    v9.saveRun(r.run, r.events);
    expect(v9.getRunEvents(r.run.runId)[0]!.calls[0]).toEqual(plain);
    v9.close();
    const s = openStore(file);
    try {
      expect(s.migration).toMatchObject({ from: 9 });
      expect(s.migration.applied[0]).toBe(10); // then any later migration (11 task-meta, 12 repro-records, 13 run-forks, 14 run-search, ...)
      expect(s.getRunEvents(r.run.runId)[0]!.calls[0]).toEqual(plain);
      const db = new Database(file, { readonly: true });
      expect(db.prepare('SELECT COUNT(*) FROM model_call_settings').pluck().get()).toBe(0);
      db.close();
    } finally {
      s.close();
    }
  });
});
