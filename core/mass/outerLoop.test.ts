/** Starting an outer loop from its settings: per-task champions, stored settings, a refused rerun (SIMULATED model). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/index.ts';
import { createLearnDataset } from '../tasks/learn.ts';
import { DESIGN_LIMITS } from './design.ts';
import { designWith } from './loop.fixture.ts';
import { outerSettingsOf, startRank, type OuterSettings } from './outerLoop.ts';
import { scripted } from './rsi.fixture.ts';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function settings(outDir: string, over: Partial<OuterSettings> = {}): OuterSettings {
  return {
    command: 'rank', dataset: 'learn-tool', tasks: 2,
    options: {
      loopId: 'rk', outDir, baseModel: '/m.gguf', design: null,
      outer: { runs: 4, neighbours: 3, seed: 0, iterations: 500, train: 2, validation: 1, verifierMin: 1, sampling: { temperature: 1, topK: 0, topP: 1, minP: 0 } },
      thresholds: { maxQuarantinedShare: 0.25, minAgreement: 0 }, sft: { passes: 1, lr: 1e-3, batch: 8 }, heldoutSampling: { temperature: 0 }, heldoutSamples: 1,
    },
    ...over,
  };
}

describe('startRank', () => {
  it('runs each task under its own champion from a stored inner loop, the bare task where none won', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'outer-loop-'));
    dirs.push(dir);
    const store = openStore(':memory:');
    stores.push(store);
    const [t0, t1] = createLearnDataset('learn-tool', ['tool']).load({ split: 'train', limit: 2 });
    store.mass.put({ evolutionId: 'evo', kind: 'evolution', key: 'settings', value: { catalogue: { checks: ['names_a_tool'] }, limits: DESIGN_LIMITS } });
    store.mass.put({ evolutionId: 'evo', kind: 'design', key: 't0/v2', taskIndex: 0, value: { design: designWith(5) } });
    store.mass.put({ evolutionId: 'evo', kind: 'result', key: 't0', taskIndex: 0, value: { taskIndex: 0, taskId: t0!.id, champion: 2 } });
    store.mass.put({ evolutionId: 'evo', kind: 'result', key: 't1', taskIndex: 1, value: { taskIndex: 1, taskId: t1!.id, champion: null } });

    // A champion source without a result for a task is refused before anything runs.
    await expect(startRank({ store, provider: scripted('') }, settings(dir, { champions: 'nope' }))).rejects.toThrow(/evolution nope has no result for task 0/);
    expect(store.listExperiments()).toHaveLength(0);

    const res = await startRank({ store, provider: scripted('') }, settings(dir, { champions: 'evo' }));
    expect(res.rankings.map((r) => r.taskId)).toEqual([t0!.id, t1!.id]);
    // Task 0 ran v2 (its picker hop), task 1 the bare task (the orchestrator's delegate choice, no hop).
    const wf = (id: string) => store.findExperiment(id as never)!.workflowYaml;
    for (let j = 0; j < 4; j++) {
      expect(wf(`rk-t0-r${j}`)).toContain('h1_picker');
      expect(wf(`rk-t1-r${j}`)).not.toContain('h1_');
    }
    expect(outerSettingsOf(store, 'rk')).toMatchObject({ command: 'rank', champions: 'evo', tasks: 2 });
    // Other settings under the same loop id are refused, naming them.
    await expect(startRank({ store, provider: scripted('') }, settings(dir, { champions: 'evo', tasks: 1 }))).rejects.toThrow(/loop rk was started with other settings \(tasks\)/);
  }, 60_000);
});
